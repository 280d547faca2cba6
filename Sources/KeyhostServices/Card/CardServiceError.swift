import KeyhostCard
import KeyhostRecord

/// A card failure both front ends report: `kind` ("wrong_pin", "pin_blocked", "no_free_slot", …), a message, and the
/// status word, tries left, command and unknown CA key when known. Lua raises it as a table with those fields
/// (`sw`, `sw_name`, `retries_left`, `command`, `ca_key`); `--json` prints the same names. Its description reads
/// `wrong PIN: 2 tries left (SW 63C2 from VERIFY PIN)`.
///
/// Built only from status words, command names and fixed text: never from arguments, so no PIN, PUK,
/// password, seed or key can end up in it.
public struct CardServiceError: Error, CustomStringConvertible {
    /// Stable machine-readable name: "wrong_pin", "pin_blocked", "no_free_slot", ...
    public let kind: String
    /// The message without the status word suffix.
    public let text: String
    /// The card's status word, when the card answered one.
    public let statusWord: StatusWord?
    /// PIN or PUK tries left (`wrong_pin`, `wrong_puk`, the blocked kinds).
    public let retriesLeft: Int?
    /// The command that failed (`VERIFY PIN`), or the one being done when the error does not say.
    public let command: String?
    /// For `untrusted_card` from an unknown CA: that CA's public key (compressed), so the hint can name it.
    public let caKey: [UInt8]?

    /// An error of `kind` with the message `text` and what else is known.
    public init(kind: String, _ text: String, statusWord: StatusWord? = nil, retriesLeft: Int? = nil, command: String? = nil,
                caKey: [UInt8]? = nil) {
        self.kind = kind
        self.text = text
        self.statusWord = statusWord
        self.retriesLeft = retriesLeft
        self.command = command
        self.caKey = caKey
    }

    public var description: String {
        var suffix: [String] = []
        if let statusWord { suffix.append("SW \(CardServiceError.hex(statusWord))") }
        if let command { suffix.append((statusWord == nil ? "in " : "from ") + command) }
        return suffix.isEmpty ? text : "\(text) (\(suffix.joined(separator: " ")))"
    }

    /// The structured fields under the names Lua and `--json` use, only those known (`kind` first; no `message`).
    public var fields: [(String, Record)] {
        var fields: [(String, Record)] = [("kind", .string(kind))]
        if let statusWord {
            fields.append(("sw", .integer(Int64(statusWord.rawValue))))
            if let name = statusWord.name { fields.append(("sw_name", .string(name))) }
        }
        if let retriesLeft { fields.append(("retries_left", .integer(Int64(retriesLeft)))) }
        if let command { fields.append(("command", .string(command))) }
        if let caKey { fields.append(("ca_key", .bytes(caKey))) }
        return fields
    }

    /// A status word as four uppercase hex digits.
    public static func hex(_ sw: StatusWord) -> String {
        let digits = String(sw.rawValue, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    static func tries(_ n: Int) -> String { n == 1 ? "1 try left" : "\(n) tries left" }
}

extension CardServiceError: StructuredError {
    public var errorKind: String { kind }
    public var errorFields: [(String, Record)] { fields }
}
