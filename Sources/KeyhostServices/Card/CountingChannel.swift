import KeyhostCard

/// Counts the APDUs that pass (for reports and the benchmark).
public final class CountingChannel: CardChannel {
    let underlying: CardChannel
    /// APDUs sent so far.
    public private(set) var count = 0

    /// Counts what goes through `underlying`.
    public init(_ underlying: CardChannel) { self.underlying = underlying }

    public func transmit(_ apdu: CommandAPDU) throws -> ResponseAPDU {
        count += 1
        return try underlying.transmit(apdu)
    }
}
