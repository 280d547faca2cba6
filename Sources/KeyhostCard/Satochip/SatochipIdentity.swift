/// A Satochip's identity from SELECT and GET STATUS (both plain), for `CardIdentification`.
public enum SatochipIdentity {
    public static let probe: CardIdentification.Probe = { channel in
        guard try CardIdentification.select(Satochip.aid, on: channel).statusWord == .success else { return nil }
        let answer = try channel.transmit(CommandAPDU(cla: Satochip.cla, ins: SatochipInstruction.getStatus.rawValue))
        guard answer.statusWord == .success else { return CardIdentity(family: .satochip, version: "", state: "status unreadable (SW \(answer.statusWord))") }
        let status = try SatochipStatus(parsing: answer.data)
        return CardIdentity(family: .satochip, version: status.version, state: state(status))
    }

    /// Where the card is in its life, in words: "not set up", "set up, no seed", "ready".
    public static func state(_ status: SatochipStatus) -> String {
        !status.isSetupDone ? "not set up" : status.isSeeded ? "ready" : "set up, no seed"
    }
}
