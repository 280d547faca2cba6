/// Passes every APDU to another channel and records the exchange.
public final class RecordingChannel: CardChannel {
    public let underlying: CardChannel
    public private(set) var transcript = Transcript()

    public init(_ underlying: CardChannel) { self.underlying = underlying }

    public func transmit(_ apdu: CommandAPDU) throws -> ResponseAPDU {
        let bytes = try apdu.encoded()
        do {
            let response = try underlying.transmit(apdu)
            transcript.entries.append(.exchange(command: bytes, response: response))
            return response
        } catch CardChannelError.connectionLost {
            transcript.entries.append(.failure(command: bytes))
            throw CardChannelError.connectionLost
        }
    }
}
