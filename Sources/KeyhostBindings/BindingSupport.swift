import KeyhostCrypto
import KeyhostHTTP
import LuaRuntime

/// An error raised by a binding itself (not by the domain module); its description is the Lua message.
struct BindingError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The options table of a call (`{coin = "btc", kind = "p2wpkh"}`), usually the last argument.
///
/// Unknown keys are refused, so a typo such as `{kidn = "p2tr"}` is an error rather than a silent default.
struct Options {
    let table: LuaTable
    let position: Int32

    init(_ ctx: LuaContext, _ position: Int32, allowed: [String]) throws {
        self.position = position
        table = try ctx.table(position, optional: true)
        guard table.array.isEmpty else {
            throw LuaArgumentError(position, "options are named fields, e.g. {\(allowed.map { "\($0) = ..." }.first ?? "")}")
        }
        for key in table.fields.keys {
            guard let name = key.stringValue, allowed.contains(name) else {
                let shown = key.stringValue.map { "'\($0)'" } ?? "of type \(key.typeName)"
                let list = allowed.isEmpty ? "this function takes no options" : "known options: " + allowed.joined(separator: ", ")
                throw LuaArgumentError(position, "unknown option \(shown); \(list)")
            }
        }
    }

    /// An options table built from fields already read (e.g. `kind` given as a plain string).
    init(fields: LuaTable, position: Int32) {
        table = fields
        self.position = position
    }

    subscript(key: String) -> LuaValue { table[key] }

    func has(_ key: String) -> Bool { !table[key].isNil }

    private func wrongType(_ key: String, _ expected: String) -> LuaArgumentError {
        LuaArgumentError(position, "option '\(key)' must be \(expected), got \(table[key].typeName)")
    }

    func string(_ key: String) throws -> String? {
        switch table[key] {
        case .nil: return nil
        case .string(let bytes):
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw LuaArgumentError(position, "option '\(key)' is not valid UTF-8")
            }
            return text
        default: throw wrongType(key, "a string")
        }
    }

    /// The proxy settings of option `key` (a proxy URL or "direct") and, when `isolate` is true, a fresh Tor
    /// circuit for this call; without the option, as the environment's *_PROXY variables say.
    func proxies(_ key: String = "proxy", isolate: String? = "proxy_isolate") throws -> ProxySettings {
        do {
            var settings = try ProxySettings(option: try string(key), optionName: "option '\(key)'")
            if let isolate, try boolean(isolate) ?? false { settings = settings.isolated(ProxySettings.freshIsolationKey()) }
            return settings
        } catch let error as ProxyError {
            throw LuaArgumentError(position, error.description)
        }
    }

    func bytes(_ key: String) throws -> [UInt8]? {
        switch table[key] {
        case .nil: return nil
        case .string(let bytes): return bytes
        default: throw wrongType(key, "a string")
        }
    }

    func boolean(_ key: String) throws -> Bool? {
        switch table[key] {
        case .nil: return nil
        case .boolean(let value): return value
        default: throw wrongType(key, "a boolean")
        }
    }

    func integer(_ key: String) throws -> Int64? {
        switch table[key] {
        case .nil: return nil
        case .integer(let value): return value
        case .number(let value):
            guard let exact = Int64(exactly: value) else {
                throw LuaArgumentError(position, "option '\(key)' must be an integer, got \(value)")
            }
            return exact
        default: throw wrongType(key, "an integer")
        }
    }

    /// A BIP32 index 0...2^31-1 (hardening is added by the caller where the standard requires it).
    func index(_ key: String, default value: UInt32) throws -> UInt32 {
        guard let raw = try integer(key) else { return value }
        guard (0..<Int64(DerivationPath.hardenedOffset)).contains(raw) else {
            throw LuaArgumentError(position, "option '\(key)' is \(raw); use 0...2147483647")
        }
        return UInt32(raw)
    }

    /// `coin`, or nil when absent.
    func coin() throws -> Coin? {
        let value = table["coin"]
        if value.isNil { return nil }
        return try Coins.resolve(value, position: position, what: "option 'coin'")
    }

    /// `kind`, or nil when absent.
    func kind() throws -> AddressKind? {
        let value = table["kind"]
        if value.isNil { return nil }
        return try AddressKinds.resolve(value, position: position, what: "option 'kind'")
    }

    /// `coin` and `kind` with keyhost's defaults: Bitcoin (Ethereum when the kind is ethereum),
    /// and the coin's default kind.
    func coinAndKind() throws -> (coin: Coin, kind: AddressKind) {
        let kind = try kind()
        let coin = try coin() ?? (kind == .ethereum ? .ethereum : .bitcoin)
        return (coin, kind ?? coin.defaultKind)
    }
}

enum Coins {
    static let symbols = Coin.all.map { $0.symbol.lowercased() }.joined(separator: ", ")

    /// A coin named by symbol or name (case-insensitive), SLIP-44 number, or a table from `coins.get`.
    static func resolve(_ value: LuaValue, position: Int32, what: String) throws -> Coin {
        switch value {
        case .string:
            let name = value.stringValue ?? ""
            if let coin = Coin.named(name) { return coin }
            throw LuaArgumentError(position, "\(what): unknown coin \"\(name)\"; use one of \(symbols) or a SLIP-44 number")
        case .integer(let number):
            if let slip44 = UInt32(exactly: number), let coin = Coin.withSLIP44(slip44) { return coin }
            throw LuaArgumentError(position, "\(what): no coin with SLIP-44 number \(number); use one of \(symbols)")
        case .number(let number):
            if let exact = Int64(exactly: number) { return try resolve(.integer(exact), position: position, what: what) }
            throw LuaArgumentError(position, "\(what): SLIP-44 number \(number) is not an integer")
        case .table(let table):
            if case .string = table["symbol"] { return try resolve(table["symbol"], position: position, what: what) }
            throw LuaArgumentError(position, "\(what): a coin table needs a 'symbol' field (as coins.get returns)")
        default:
            throw LuaArgumentError(position, "\(what) must be a coin symbol or SLIP-44 number, got \(value.typeName)")
        }
    }

    static func resolve(_ ctx: LuaContext, _ i: Int32) throws -> Coin {
        guard ["string", "number", "table"].contains(ctx.typeName(i)) else {
            throw LuaArgumentError(i, "coin symbol or SLIP-44 number expected, got \(ctx.typeName(i))")
        }
        return try resolve(try ctx.value(i), position: i, what: "coin")
    }
}

enum AddressKinds {
    static let names = AddressKind.allCases.map(\.rawValue).joined(separator: ", ")

    static func resolve(_ value: LuaValue, position: Int32, what: String) throws -> AddressKind {
        guard case .string = value else {
            throw LuaArgumentError(position, "\(what) must be an address kind name, got \(value.typeName)")
        }
        let name = value.stringValue ?? ""
        guard let kind = AddressKind(name: name) else {
            throw LuaArgumentError(position, "\(what): unknown address kind \"\(name)\"; use one of \(names)")
        }
        return kind
    }
}

// MARK: - keys given in several forms

enum KeyArguments {
    static let privateForms = "32-byte string, \(PrivateKeyObject.luaTypeName) or \(NodeObject.luaTypeName)"
    static let publicForms = "public key string, \(PrivateKeyObject.luaTypeName) or \(NodeObject.luaTypeName)"

    /// A private key given as 32 raw bytes, a `keyhost.ec.private_key` or a private `keyhost.hd.node`.
    static func privateKey(_ ctx: LuaContext, _ i: Int32) throws -> PrivateKey {
        switch ctx.typeName(i) {
        case PrivateKeyObject.luaTypeName:
            return try ctx.object(i, as: PrivateKeyObject.self).live()
        case NodeObject.luaTypeName:
            return try ctx.object(i, as: NodeObject.self).privateKey()
        case "string":
            return try PrivateKey(bytes: try ctx.bytes(i))
        default:
            throw LuaArgumentError(i, "\(privateForms) expected, got \(ctx.typeName(i))")
        }
    }

    /// A public key given as 33 or 65 SEC1 bytes, or the public key of a key object or node.
    static func publicKey(_ ctx: LuaContext, _ i: Int32) throws -> PublicKey {
        switch ctx.typeName(i) {
        case PrivateKeyObject.luaTypeName:
            return try ctx.object(i, as: PrivateKeyObject.self).live().publicKey
        case NodeObject.luaTypeName:
            return try ctx.object(i, as: NodeObject.self).live().publicKey
        case "string":
            return try PublicKey(bytes: try ctx.bytes(i))
        default:
            throw LuaArgumentError(i, "\(publicForms) expected, got \(ctx.typeName(i))")
        }
    }

    /// A BIP340 x-only public key: 32 bytes, a 33-byte compressed key (its x is taken), or a key object or node.
    static func xOnlyKey(_ ctx: LuaContext, _ i: Int32) throws -> XOnlyPublicKey {
        if ctx.typeName(i) == "string" {
            let bytes = try ctx.bytes(i)
            if bytes.count == 32 { return try XOnlyPublicKey(bytes: bytes) }
            return try PublicKey(bytes: bytes).xOnly
        }
        return try publicKey(ctx, i).xOnly
    }

    /// Serializes a public key as `opts` asks: compressed (unless `defaultCompressed` is false), uncompressed, or x-only.
    static func serialize(_ key: PublicKey, _ opts: Options, defaultCompressed: Bool = true) throws -> [UInt8] {
        if try opts.boolean("x_only") == true {
            if try opts.boolean("compressed") == false {
                throw LuaArgumentError(opts.position, "options 'x_only' and 'compressed = false' exclude each other")
            }
            return key.xOnly.bytes
        }
        return try opts.boolean("compressed") ?? defaultCompressed ? key.compressed : key.uncompressed
    }

    static let publicKeyOptions = ["compressed", "x_only"]
}

// MARK: - integers

/// An integer argument in `range`, reported in Lua's wording otherwise.
func integerArgument(_ ctx: LuaContext, _ i: Int32, _ name: String, in range: ClosedRange<Int64>, default value: Int64? = nil) throws -> Int64 {
    let raw: Int64
    if let value, ctx.isNil(i) { raw = value } else { raw = try ctx.integer(i) }
    guard range.contains(raw) else {
        throw LuaArgumentError(i, "\(name) \(raw) is out of range; use \(range.lowerBound)...\(range.upperBound)")
    }
    return raw
}

/// Four bytes big-endian, for fingerprints.
func bigEndianBytes(_ value: UInt32) -> [UInt8] {
    [UInt8(value >> 24), UInt8(value >> 16 & 0xff), UInt8(value >> 8 & 0xff), UInt8(value & 0xff)]
}

/// Ctrl-C inside a long Swift call reaches Lua as "interrupted", as it does in Lua code.
extension InterruptedError: LuaInterruption {}
