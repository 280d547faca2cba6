/// A response APDU: data followed by the two status bytes.
public struct ResponseAPDU: Equatable, Sendable, CustomStringConvertible {
    public var data: [UInt8]
    public var statusWord: StatusWord

    public init(data: [UInt8] = [], statusWord: StatusWord) {
        self.data = data
        self.statusWord = statusWord
    }

    /// Parses response bytes; at least the two status bytes must be present.
    public init(bytes: [UInt8]) throws {
        guard bytes.count >= 2 else { throw APDUError.truncated(bytes.count, needed: 2) }
        data = Array(bytes[..<(bytes.count - 2)])
        statusWord = StatusWord(sw1: bytes[bytes.count - 2], sw2: bytes[bytes.count - 1])
    }

    public var encoded: [UInt8] { data + [statusWord.sw1, statusWord.sw2] }

    public var description: String { "ResponseAPDU(\(data.count) data bytes, SW \(statusWord))" }
}
