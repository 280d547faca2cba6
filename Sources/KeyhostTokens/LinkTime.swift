/// What a verifier can know of a link's `time` (docs/payments.md, "What a run's `now` guarantees").
///
/// The time is the `now` of the run that made the link, chosen by the holder who signs it: nothing
/// offline proves when a link was made. Each verifier bounds it by what it knows itself: the link
/// before it (a token is not handed on before it was received), its own clock (no link from the
/// future, past a tolerance for clocks that differ) and, for a payee, when it asked to be paid.
public enum LinkTime {
    /// How far after a verifier's own clock a link's time may be (payee and ledger alike): clocks
    /// of honest machines differ by less than this.
    public static let maxClockSkew: Int64 = 300

    /// Why link `index` of `transfers` is dated before the link it follows, or nil when it is not.
    /// `name` names the link in the message.
    public static func outOfOrder(_ transfers: [Transfer], at index: Int, name: String) -> TokenError? {
        guard index > 0, index < transfers.count else { return nil }
        let time = transfers[index].time, before = transfers[index - 1].time
        guard time < before else { return nil }
        return TokenError("chain", """
            \(name) is dated \(time), before the time of the link it follows (transfer \(index), dated \(before)): \
            a token cannot be handed on before it was received, so one of the two was backdated or postdated; \
            ask whoever handed it on for the chain their wallet made, with its clock set right
            """)
    }
}
