import KeyhostCrypto

/// Plays a recorded transcript back as a transport: each command must equal the recorded one byte for byte.
///
/// A secure session replays only when the client draws the same randomness as when it was recorded
/// (see `SeededRandom`), because ephemeral keys and challenges are part of the commands.
public final class ReplayChannel: CardChannel {
    public let transcript: Transcript
    public private(set) var position = 0

    public init(_ transcript: Transcript) { self.transcript = transcript }

    public convenience init(text: String) throws { self.init(try Transcript(text: text)) }

    /// Whether every recorded exchange has been replayed.
    public var isFinished: Bool { position == transcript.entries.count }

    /// A recorded command for an error message, its secret data redacted.
    static func describe(_ bytes: [UInt8]) -> String {
        if let command = try? CommandAPDU(bytes: bytes) { return APDURedaction.describe(command) }
        return Hex.encode(Array(bytes.prefix(4))) + " [\(max(0, bytes.count - 4)) more bytes]"
    }

    public func transmit(_ apdu: CommandAPDU) throws -> ResponseAPDU {
        let bytes = try apdu.encoded()
        guard position < transcript.entries.count else { throw CardChannelError.replayExhausted(got: APDURedaction.describe(apdu)) }
        let entry = transcript.entries[position]
        position += 1
        switch entry {
        case .exchange(let command, let response):
            guard command == bytes else {
                throw CardChannelError.replayMismatch(exchange: position, expected: ReplayChannel.describe(command),
                                                     got: APDURedaction.describe(apdu))
            }
            return response
        case .failure(let command):
            guard command == bytes else {
                throw CardChannelError.replayMismatch(exchange: position, expected: ReplayChannel.describe(command),
                                                     got: APDURedaction.describe(apdu))
            }
            throw CardChannelError.connectionLost
        }
    }
}
