import KeyhostRecord
/// An output descriptor that cannot be read or used, with the character position at fault when there is one.
///
/// Messages quote at most a short excerpt of the text (never a key's full text), so an error about a hostile or
/// secret-bearing descriptor neither floods a terminal nor repeats a private key.
public struct DescriptorError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What went wrong, as a machine-readable kind (the `kind` of Lua's error tables and of `--json` errors).
    public enum Kind: String, Sendable {
        /// The text is not a well-formed descriptor (syntax, a bad key, a rule of BIP380–386/389 broken).
        case invalid = "invalid_descriptor"
        /// The `#checksum` is missing its 8 characters or does not match.
        case checksum = "descriptor_checksum"
        /// A valid descriptor form keyhost does not derive (combo, raw, addr, taproot script trees, miniscript).
        case unsupported = "unsupported_descriptor"
        /// A private key (WIF, xprv/tprv) where only public descriptors are taken.
        case privateKey = "private_key_in_descriptor"
        /// A derivation request the descriptor cannot serve: an index out of range, a multipath descriptor used as one.
        case derivation = "descriptor_derivation"
        /// The keys belong to another network than the one asked for.
        case network = "descriptor_network"
    }

    public let kind: Kind
    /// 0-based character offset in the descriptor text, when the problem is at a place.
    public let position: Int?
    /// What is wrong and what to do.
    public let message: String

    public init(_ kind: Kind, _ message: String, at position: Int? = nil) {
        self.kind = kind
        self.message = message
        self.position = position
    }

    public var description: String {
        guard let position else { return "descriptor: \(message)" }
        return "descriptor, position \(position): \(message)"
    }
}

extension DescriptorError: StructuredError {
    public var errorKind: String { kind.rawValue }
    /// `position`: the 0-based character offset the problem is at, when known.
    public var errorFields: [(String, Record)] { position.map { [("position", .integer(Int64($0)))] } ?? [] }
}
