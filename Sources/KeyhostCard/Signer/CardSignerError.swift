import KeyhostCrypto

/// A signer's refusal or a card answer that fails the signer's checks, with the kind Lua and `--json` report.
public struct CardSignerError: Error, Equatable, CustomStringConvertible {
    /// `unsupported` (the card cannot do it: nothing was sent), `invalid_path` (not at that path: nothing was
    /// sent), `invalid_response` (the card's answer failed a check).
    public let kind: String
    public let description: String

    public init(kind: String, _ description: String) {
        self.kind = kind
        self.description = description
    }

    /// The card cannot do `operation`; `instead` says what it can.
    public static func unsupported(_ profile: CardSignerProfile, _ operation: CardSignerOperation, instead: String) -> CardSignerError {
        CardSignerError(kind: "unsupported", "a \(profile.name) card cannot give \(operation); \(instead)")
    }

    /// The card answered something that fails a check (`why`); its answer is not used.
    public static func invalidResponse(_ profile: CardSignerProfile, _ why: String) -> CardSignerError {
        CardSignerError(kind: "invalid_response", "the \(profile.name) card's answer fails a check: \(why)")
    }

    /// The card signed with another key than the one the caller expected at `path`.
    public static func wrongKey(_ profile: CardSignerProfile, path: [UInt32], expected: [UInt8], got: [UInt8]) -> CardSignerError {
        CardSignerError(kind: "wrong_key", "the \(profile.name) card's key at \(CardSignerError.pathText(path)) is \(Hex.encode(got)), not \(Hex.encode(expected)); "
                        + "the card holds another seed than the one expected")
    }

    /// `m/84'/0'/0'` for messages.
    public static func pathText(_ path: [UInt32]) -> String {
        (["m"] + path.map { $0 >= 0x8000_0000 ? "\($0 - 0x8000_0000)'" : "\($0)" }).joined(separator: "/")
    }
}
