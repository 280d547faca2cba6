import KeyhostFiles
import KeyhostRecord
import KeyhostServices

#if canImport(Glibc)
import Glibc
#endif

/// The text output of the Satochip records (`SatochipRecords`): one labelled line per field, in the record's order.
enum SatochipText {
    static let labels: [(key: String, label: String)] = [
        ("reader", "reader"), ("family", "family"), ("version", "version"), ("state", "state"),
        ("setup_done", "set up"), ("seeded", "seeded"), ("needs_2fa", "needs 2FA"), ("needs_secure_channel", "needs secure channel"),
        ("pin_retries", "PIN tries left"), ("puk_retries", "PUK tries left"), ("label", "label"),
        ("certificate_trusted", "certificate trusted"), ("certificate_problem", "certificate problem"),
        ("device_public_key", "device public key"),
    ]

    static func lines(_ record: Record) -> [String] {
        labels.compactMap { field in
            switch field.key {
            case "family": return "family: Satochip"
            case "label" where record["label"] == .null: return "label: unknown (set KEYHOST_PIN to read it)"
            case "certificate_trusted" where record["certificate_trusted"] == .null:
                return "certificate trusted: not checked (set KEYHOST_PIN to check it)"
            case "certificate_trusted" where record["certificate_trusted"] == .bool(false): return "certificate trusted: NO (see the warning)"
            case "certificate_problem" where record["certificate_problem"] == .null: return nil
            case "device_public_key" where record["device_public_key"] == .null: return nil
            default: return "\(field.label): \(record.text(field.key))"
            }
        }
    }

    /// The warning for a card whose certificate does not chain to a trusted CA: it may not be a genuine Satochip.
    static func warnUntrusted(_ trust: SatochipTrust) {
        let text = "keyhost: warning: the Satochip's device certificate is not trusted (\(trust.problem ?? "unknown reason")): it may not be "
            + "a genuine Satochip; if you trust the certificate authority that issued it, add --trusted-ca KEY\n"
        _ = WriteAll.write(STDERR_FILENO, Array(text.utf8))
    }
}
