/// Bad parameters to a KDF or cipher.
public enum CryptoError: Error, Equatable, CustomStringConvertible {
    /// A key of the wrong size for the algorithm.
    case keyLength(Int, expected: Int, algorithm: String)
    /// An IV of the wrong size.
    case ivLength(Int, expected: Int)
    /// Input that is not a whole number of cipher blocks (these modes do not pad).
    case notBlockAligned(Int, blockSize: Int)
    /// ISO 9797-1 method 2 padding that is missing or malformed.
    case badPadding
    /// A KDF parameter out of range (iterations, output length).
    case parameter(String)
    /// OpenSSL refused the operation.
    case openSSL(String)

    public var description: String {
        switch self {
        case .keyLength(let n, let expected, let algorithm):
            return "invalid \(algorithm) key: \(n) bytes; expected \(expected)"
        case .ivLength(let n, let expected):
            return "invalid IV: \(n) bytes; expected \(expected)"
        case .notBlockAligned(let n, let blockSize):
            return "input of \(n) bytes is not a multiple of the \(blockSize)-byte block; pad it first (e.g. ISO 9797-1 method 2)"
        case .badPadding:
            return "invalid ISO 9797-1 method 2 padding: expected 0x80 followed only by zero bytes at the end"
        case .parameter(let detail):
            return "invalid parameter: \(detail)"
        case .openSSL(let detail):
            return "OpenSSL error: \(detail)"
        }
    }
}
