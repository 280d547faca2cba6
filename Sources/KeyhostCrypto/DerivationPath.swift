
/// A BIP32 derivation path such as m/84'/0'/0'/0/5, absolute (from the master key) or relative (0/5).
public struct DerivationPath: Hashable, Sendable, CustomStringConvertible {
    /// Indexes at and above this are hardened.
    public static let hardenedOffset: UInt32 = 0x8000_0000
    /// BIP32 serializes depth in one byte.
    public static let maxDepth = 255

    /// Child indexes, hardened ones including `hardenedOffset`.
    public let indexes: [UInt32]
    /// Whether the path starts at the master key ("m/...").
    public let isAbsolute: Bool

    /// A path from raw indexes (hardened ones with `hardenedOffset` added).
    public init(indexes: [UInt32], absolute: Bool = true) throws {
        guard indexes.count <= DerivationPath.maxDepth else {
            throw DerivationPathError(path: "", component: nil, text: nil, problem: .tooDeep(indexes.count))
        }
        self.indexes = indexes
        isAbsolute = absolute
    }

    /// Parses "m/44'/60'/0'/0/0", "m/44h/0h", "44H/0H", "0/5" or "m". Hardened markers: ', h, H.
    /// A path without a leading "m" is relative.
    public init(_ text: String) throws {
        guard text.utf8.count <= InputLimit.derivationPath else {
            // The text is not echoed: it is too long to be a path and may be anything.
            throw DerivationPathError(path: "…", component: nil, text: nil, problem: .tooLong(text.utf8.count))
        }
        let trimmed = text.trimming(String.isWhitespace)
        var parts = trimmed.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard !trimmed.isEmpty else { throw DerivationPathError(path: text, component: nil, text: nil, problem: .empty) }
        var absolute = false
        if parts[0] == "m" || parts[0] == "M" {
            absolute = true
            parts.removeFirst()
        }
        guard parts.count <= DerivationPath.maxDepth else {
            throw DerivationPathError(path: text, component: nil, text: nil, problem: .tooDeep(parts.count))
        }
        var indexes = [UInt32]()
        indexes.reserveCapacity(parts.count)
        for (i, part) in parts.enumerated() {
            indexes.append(try DerivationPath.parseComponent(part, position: i + 1, path: text))
        }
        self.indexes = indexes
        isAbsolute = absolute
    }

    init(uncheckedIndexes: [UInt32], absolute: Bool) {
        indexes = uncheckedIndexes
        isAbsolute = absolute
    }

    /// The empty absolute path "m".
    public static let master = DerivationPath(uncheckedIndexes: [], absolute: true)

    /// Number of derivation steps.
    public var depth: Int { indexes.count }

    /// This path with one more step.
    public func appending(_ index: UInt32, hardened: Bool = false) throws -> DerivationPath {
        guard index < DerivationPath.hardenedOffset || !hardened else {
            throw DerivationPathError(path: description, component: depth + 1, text: String(index), problem: .indexTooLarge)
        }
        return try DerivationPath(indexes: indexes + [hardened ? index | DerivationPath.hardenedOffset : index], absolute: isAbsolute)
    }

    /// This path followed by the relative path `other`.
    public func appending(_ other: DerivationPath) throws -> DerivationPath {
        try DerivationPath(indexes: indexes + other.indexes, absolute: isAbsolute)
    }

    /// Text of one index with ' for hardened, e.g. "44'".
    /// One step as text, a hardened one marked with `marker`: "'" in paths, "h" in descriptors (BIP380 takes both).
    public static func format(_ index: UInt32, hardened marker: String = "'") -> String {
        index >= hardenedOffset ? "\(index - hardenedOffset)\(marker)" : "\(index)"
    }

    /// "m/84'/0'/0'/0/5" form (without "m/" for relative paths).
    public var description: String {
        let body = indexes.map { DerivationPath.format($0) }.joined(separator: "/")
        guard isAbsolute else { return body }
        return body.isEmpty ? "m" : "m/" + body
    }

    private static func parseComponent(_ part: String, position: Int, path: String) throws -> UInt32 {
        func fail(_ problem: DerivationPathError.Problem) -> DerivationPathError {
            DerivationPathError(path: path, component: position, text: part, problem: problem)
        }
        guard !part.isEmpty else { throw fail(.emptyComponent) }
        var digits = Substring(part)
        var hardened = false
        if let last = digits.last, last == "'" || last == "h" || last == "H" {
            hardened = true
            digits = digits.dropLast()
        }
        guard !digits.isEmpty, digits.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            throw fail(part == "m" || part == "M" ? .misplacedMaster : .notANumber)
        }
        // Parsing as UInt32 fails cleanly on overflow, never traps.
        guard let value = UInt32(digits), value < hardenedOffset else { throw fail(.indexTooLarge) }
        return hardened ? value | hardenedOffset : value
    }
}

/// A derivation path that does not parse, with the component at fault.
public struct DerivationPathError: Error, Equatable, CustomStringConvertible {
    /// What is wrong.
    public enum Problem: Equatable, Sendable {
        case empty
        case emptyComponent
        case notANumber
        case indexTooLarge
        case misplacedMaster
        case tooDeep(Int)
        case tooLong(Int)
    }

    /// The whole path as given.
    public let path: String
    /// 1-based position of the bad component after any leading "m".
    public let component: Int?
    /// The bad component's text.
    public let text: String?
    /// The problem.
    public let problem: Problem

    public var description: String {
        let subject = "invalid derivation path \"\(path)\""
        let at = component.map { "component \($0) (\"\(text ?? "")\")" } ?? "the path"
        switch problem {
        case .empty:
            return "\(subject): the path is empty; write it like m/84'/0'/0'/0/0"
        case .emptyComponent:
            return "\(subject): \(at) is empty; remove the doubled or trailing \"/\""
        case .notANumber:
            return "\(subject): \(at) is not a number; use digits with an optional ' or h for hardened"
        case .indexTooLarge:
            return "\(subject): \(at) is too large; indexes are 0...2147483647, add ' or h for hardened ones"
        case .misplacedMaster:
            return "\(subject): \(at) is \"m\" but m may only start a path"
        case .tooDeep(let n):
            return "\(subject): \(n) levels exceed BIP32's maximum depth of 255"
        case .tooLong(let n):
            return "invalid derivation path: \(n) characters is over the \(InputLimit.derivationPath)-character limit; write it like m/84'/0'/0'/0/0"
        }
    }
}
