import KeyhostCrypto

#if canImport(Glibc)
import Glibc
#endif

/// The APDU trace `KEYHOST_TRACE` asks for, shared by `card.open` and every card command.
public enum CardTrace {
    /// `KEYHOST_TRACE=apdu` → false (APDUs), `apdu,plaintext` → true, otherwise nil (no trace).
    public static func fromEnvironment() -> Bool? {
        guard let raw = getenv(CardFrontEnd.Environment.trace) else { return nil }
        let value = String(cString: raw)
        let parts = Set(value.split(separator: ",").map { $0.trimmingWhitespace().lowercased() })
        guard parts.contains("apdu") || parts.contains("plaintext") else { return nil }
        return parts.contains("plaintext")
    }
}
