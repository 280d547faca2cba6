/// Finds which families' applets a card holds, by selecting each family's AID in turn: what `keyhost card list`,
/// `card info` and the opener of `--card` use to tell a Keycard from a Satochip or a TAPSIGNER.
///
/// A probe sends only SELECT (a plain command every applet answers without secrets), and a failed SELECT
/// leaves nothing behind; the opener selects the family it uses again afterwards.
public enum CardIdentification {
    /// One family's probe: its identity from a SELECT of its AID, nil when the card does not hold its applet.
    public typealias Probe = @Sendable (CardChannel) throws -> CardIdentity?

    /// Every family's probe, in the order they are tried.
    public static let probes: [Probe] = [KeycardIdentity.probe, SatochipIdentity.probe, SeedKeeperIdentity.probe, CKTapIdentity.probe]

    /// The applets `channel`'s card holds, in probe order; an applet whose answer cannot be read is left out, with
    /// the reason in `unreadable`.
    public static func identify(_ channel: CardChannel) throws -> (found: [CardIdentity], unreadable: [String]) {
        var found: [CardIdentity] = []
        var unreadable: [String] = []
        for probe in probes {
            do {
                if let identity = try probe(channel) { found.append(identity) }
            } catch let error as CardChannelError {
                throw error
            } catch {
                unreadable.append("\(error)")
            }
        }
        return (found, unreadable)
    }

    /// SELECT by `aid` (no Le, as every family's own client sends it, so recorded transcripts replay): the answer.
    public static func select(_ aid: [UInt8], on channel: CardChannel) throws -> ResponseAPDU {
        try channel.transmit(CommandAPDU(cla: 0x00, ins: 0xA4, p1: 0x04, p2: 0x00, data: aid))
    }
}
