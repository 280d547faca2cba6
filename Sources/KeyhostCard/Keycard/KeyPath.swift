import KeyhostCrypto

/// A derivation path as Keycard takes it: a source (master, parent, current) and 32-bit big-endian components.
public struct KeyPath: Equatable, Sendable, CustomStringConvertible {
    public var source: DerivationSource
    public var components: [UInt32]

    /// At most 10 components fit the applet's path buffer.
    public static let maxDepth = 10

    public init(source: DerivationSource = .master, components: [UInt32]) throws {
        guard components.count <= KeyPath.maxDepth else { throw KeycardError.invalidArgument("a key path holds at most \(KeyPath.maxDepth) components, got \(components.count)") }
        self.source = source
        self.components = components
    }

    /// From an absolute path (`m/...`, source master) or a relative one (source current).
    public init(_ path: DerivationPath) throws {
        try self.init(source: path.isAbsolute ? .master : .current, components: path.indexes)
    }

    /// Parses "m/44'/60'/0'/0/0" (from the master), "../1" (parent) or "./0" (current). A path with
    /// none of these starts is refused: "44'/60'/0'" taken silently as relative would pick another key.
    public init(_ text: String) throws {
        var rest = Substring(text)
        let source: DerivationSource
        if rest == "m" || rest.hasPrefix("m/") { source = .master; rest = rest.dropFirst(rest.count == 1 ? 1 : 2) }
        else if rest == ".." || rest.hasPrefix("../") { source = .parent; rest = rest.dropFirst(rest.count == 2 ? 2 : 3) }
        else if rest == "." || rest.hasPrefix("./") { source = .current; rest = rest.dropFirst(rest.count == 1 ? 1 : 2) }
        else {
            throw KeycardError.invalidArgument(
                "a key path starts with m/ (from the master key), ./ (from the current key) or ../ (from its parent); "
                    + "got \"\(text.prefix(40))\": write m/\(text.prefix(40)) for the full path")
        }
        let relative = rest.isEmpty ? try DerivationPath(indexes: [], absolute: false) : try DerivationPath("m/" + rest)
        try self.init(source: source, components: relative.indexes)
    }

    /// The data field: 4 bytes per component, big-endian.
    public var encoded: [UInt8] {
        components.flatMap { c in [UInt8(truncatingIfNeeded: c >> 24), UInt8(truncatingIfNeeded: c >> 16), UInt8(truncatingIfNeeded: c >> 8), UInt8(truncatingIfNeeded: c)] }
    }

    /// Components from a data field (a multiple of 4 bytes).
    public static func decode(_ bytes: [UInt8]) throws -> [UInt32] {
        guard bytes.count % 4 == 0 else { throw KeycardError.invalidArgument("a key path has 4 bytes per component; got \(bytes.count) bytes") }
        // Typed halves: as one expression it went over the type checker's budget once this
        // module stopped importing Foundation.
        return stride(from: 0, to: bytes.count, by: 4).map { (i: Int) -> UInt32 in
            let high: UInt32 = UInt32(bytes[i]) << 24 | UInt32(bytes[i + 1]) << 16
            let low: UInt32 = UInt32(bytes[i + 2]) << 8 | UInt32(bytes[i + 3])
            return high | low
        }
    }

    /// Whether the applet exports this key's private half: a path from the master under EIP-1581's m/43'/60'/1581'
    /// with at least two more levels (KeycardApplet.isEIP1581 wants 20 bytes of path starting with those 12).
    public var isEIP1581: Bool { source == .master && KeyPath.isEIP1581(components) }

    /// `isEIP1581` for the components of a path from the master.
    public static func isEIP1581(_ components: [UInt32]) -> Bool {
        components.count >= Keycard.eip1581Prefix.count + 2 && Array(components.prefix(Keycard.eip1581Prefix.count)) == Keycard.eip1581Prefix
    }

    public var description: String {
        let prefix: String
        switch source {
        case .master: prefix = "m"
        case .parent: prefix = ".."
        case .current: prefix = "."
        case .pinless: prefix = "pinless"
        }
        return ([prefix] + components.map { DerivationPath.format($0) }).joined(separator: "/")
    }
}
