import KeyhostCrypto

/// A derivation path with placeholders, e.g. `m/44'/60'/{account}'/0/{index}` or `m/84'/0'/{account}'/{change}/{index}`.
///
/// The template is split at its last hardened component: everything up to there is the *key path*, the one
/// extended public key a key source must export (once per account, or once per index when `{index}` itself is
/// hardened); everything after it is derived locally from that public key. This is what keeps a card to one
/// EXPORT KEY per account rather than one per address.
public struct PathTemplate: Hashable, Sendable, CustomStringConvertible {
    /// One path component.
    public enum Component: Hashable, Sendable {
        /// A fixed index (hardened ones include 2^31).
        case fixed(UInt32)
        case account(hardened: Bool)
        case change(hardened: Bool)
        case index(hardened: Bool)

        var isHardened: Bool {
            switch self {
            case .fixed(let value): return value >= DerivationPath.hardenedOffset
            case .account(let h), .change(let h), .index(let h): return h
            }
        }

        var text: String {
            switch self {
            case .fixed(let value): return DerivationPath.format(value)
            case .account(let h): return "{account}" + (h ? "'" : "")
            case .change(let h): return "{change}" + (h ? "'" : "")
            case .index(let h): return "{index}" + (h ? "'" : "")
            }
        }

        func resolve(account: UInt32, change: UInt32, index: UInt32) -> UInt32 {
            func mark(_ value: UInt32, _ hardened: Bool) -> UInt32 { hardened ? value | DerivationPath.hardenedOffset : value }
            switch self {
            case .fixed(let value): return value
            case .account(let h): return mark(account, h)
            case .change(let h): return mark(change, h)
            case .index(let h): return mark(index, h)
            }
        }
    }

    /// The components after "m".
    public let components: [Component]
    /// Number of leading components that form the key path (0 = the master key).
    public let keyPathLength: Int

    /// Parses a template. It must start with "m", contain `{index}` exactly once, and `{account}` and `{change}`
    /// at most once each, each placeholder being a whole component with an optional ', h or H.
    public init(_ text: String) throws {
        func fail(_ detail: String) -> DiscoveryError { .malformedTemplate(template: text, detail: detail) }
        let trimmed = text.trimmingWhitespace()
        var parts = trimmed.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard let first = parts.first, first == "m" || first == "M" else {
            throw fail("a template must start with m/ (templates are absolute paths)")
        }
        parts.removeFirst()
        guard !parts.isEmpty else { throw fail("it has no components") }
        var components = [Component]()
        for (position, part) in parts.enumerated() {
            let at = "component \(position + 1) (\"\(part)\")"
            if part.contains("{") || part.contains("}") {
                var body = Substring(part)
                var hardened = false
                if let last = body.last, last == "'" || last == "h" || last == "H" {
                    hardened = true
                    body = body.dropLast()
                }
                guard body.first == "{", body.last == "}", body.count > 2 else {
                    throw fail("\(at): a placeholder must be a whole component such as {index} or {account}'")
                }
                switch body.dropFirst().dropLast() {
                case "account": components.append(.account(hardened: hardened))
                case "change": components.append(.change(hardened: hardened))
                case "index": components.append(.index(hardened: hardened))
                case let name: throw fail("\(at): unknown placeholder {\(name)}; the placeholders are {account}, {change} and {index}")
                }
            } else {
                do {
                    let path = try DerivationPath(part)
                    guard path.indexes.count == 1, !path.isAbsolute else { throw fail("\(at) is not a single index") }
                    components.append(.fixed(path.indexes[0]))
                } catch let error as DiscoveryError {
                    throw error
                } catch {
                    throw fail("\(at) is not a number or a placeholder; use digits with an optional ' or h, or {account}, {change}, {index}")
                }
            }
        }
        func count(_ match: (Component) -> Bool) -> Int { components.filter(match).count }
        let indexes = count { if case .index = $0 { return true } else { return false } }
        let accounts = count { if case .account = $0 { return true } else { return false } }
        let changes = count { if case .change = $0 { return true } else { return false } }
        guard indexes == 1 else {
            throw fail(indexes == 0 ? "it has no {index} placeholder, so there is nothing to scan" : "{index} appears \(indexes) times")
        }
        guard accounts <= 1 else { throw fail("{account} appears \(accounts) times") }
        guard changes <= 1 else { throw fail("{change} appears \(changes) times") }
        guard components.count <= DerivationPath.maxDepth else { throw fail("it is deeper than BIP32's 255 levels") }
        self.components = components
        keyPathLength = (components.lastIndex { $0.isHardened } ?? -1) + 1
    }

    /// Whether the template has an `{account}` placeholder; without one there is a single account.
    public var hasAccount: Bool { components.contains { if case .account = $0 { return true } else { return false } } }
    /// Whether the template has a `{change}` placeholder; without one there is only the receive chain.
    public var hasChange: Bool { components.contains { if case .change = $0 { return true } else { return false } } }

    /// Whether the key path contains `{index}` (it is hardened or followed by hardened components), so every
    /// index needs its own exported key, as in Ledger Live's m/44'/60'/{index}'/0/0.
    public var keyPerIndex: Bool {
        components.prefix(keyPathLength).contains { if case .index = $0 { return true } else { return false } }
    }

    /// Whether the key path contains `{change}`, so each chain needs its own exported key.
    var keyPerChain: Bool {
        components.prefix(keyPathLength).contains { if case .change = $0 { return true } else { return false } }
    }

    /// Whether addresses can be derived as one batch of consecutive children (`{index}` is the last component
    /// and not in the key path).
    var isBatchable: Bool {
        !keyPerIndex && { if case .index = components.last! { return true } else { return false } }()
    }

    /// The key path with placeholders filled in.
    public func keyPath(account: UInt32, change: UInt32 = 0, index: UInt32 = 0) throws -> DerivationPath {
        try DerivationPath(indexes: components.prefix(keyPathLength).map { $0.resolve(account: account, change: change, index: index) })
    }

    /// The part derived locally from the key, with placeholders filled in (relative).
    func relativePath(account: UInt32, change: UInt32, index: UInt32) throws -> DerivationPath {
        try DerivationPath(indexes: components.dropFirst(keyPathLength).map { $0.resolve(account: account, change: change, index: index) },
                           absolute: false)
    }

    /// The full path of one address.
    public func path(account: UInt32, change: UInt32, index: UInt32) throws -> DerivationPath {
        try DerivationPath(indexes: components.map { $0.resolve(account: account, change: change, index: index) })
    }

    /// The key path written with its placeholders, e.g. m/44'/60'/{account}'.
    public var keyPathPattern: String {
        (["m"] + components.prefix(keyPathLength).map(\.text)).joined(separator: "/")
    }

    /// The template in canonical form (hardened written as ').
    public var description: String {
        (["m"] + components.map(\.text)).joined(separator: "/")
    }
}
