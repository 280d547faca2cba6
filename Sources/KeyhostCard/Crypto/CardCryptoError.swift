/// Misuse of the small cryptographic helpers this module adds to KeyhostCrypto.
public enum CardCryptoError: Error, Equatable, CustomStringConvertible {
    case keyLength(Int, expected: Int)
    case nonceLength(Int, expected: Int)
    case openSSL(String)

    public var description: String {
        switch self {
        case .keyLength(let n, let expected): return "key of \(n) bytes; expected \(expected)"
        case .nonceLength(let n, let expected): return "nonce of \(n) bytes; expected \(expected)"
        case .openSSL(let what): return "OpenSSL failed in \(what)"
        }
    }
}
