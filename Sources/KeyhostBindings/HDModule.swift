import KeyhostCrypto
import LuaRuntime

/// `keyhost.hd`: BIP39 mnemonics and BIP32 HD nodes.
enum HDModule {
    static func register(in state: LuaState) {
        state.registerModule("keyhost.hd") { module in
            module.value("HARDENED", .integer(Int64(DerivationPath.hardenedOffset)))

            module.function("generate_mnemonic") { ctx in
                let words = try ctx.integer(1, default: 12)
                guard Mnemonic.validWordCounts.contains(Int(clamping: words)) else {
                    throw LuaArgumentError(1, "word count \(words) is not 12, 15, 18, 21 or 24")
                }
                ctx.push(try Mnemonic.generate(wordCount: Int(words)).phrase)
                return 1
            }

            module.function("validate_mnemonic") { ctx in
                _ = try Mnemonic(phrase: try ctx.string(1))
                ctx.push(true)
                return 1
            }

            // Wordlist words close to the phrase's word at `position` (1-based), best first: what
            // `keyhost key mnemonic check --suggest` adds. They hint at a secret word: show them to its owner only.
            module.function("mnemonic_suggestions") { ctx in
                let position = try integerArgument(ctx, 2, "position", in: 1...48)
                let limit = try integerArgument(ctx, 3, "limit", in: 1...20, default: 3)
                let words = Mnemonic.suggestions(forWordAt: Int(position), in: try ctx.string(1), limit: Int(limit))
                return try ctx.return(.table(LuaTable(array: words.map { .text($0) })))
            }

            module.function("entropy_to_mnemonic") { ctx in
                ctx.push(try Mnemonic(entropy: SecretBytes(try ctx.bytes(1))).phrase)
                return 1
            }

            module.function("mnemonic_to_entropy") { ctx in
                ctx.push(bytes: try Mnemonic(phrase: try ctx.string(1)).entropy.revealedBytes())
                return 1
            }

            module.function("mnemonic_to_seed") { ctx in
                let mnemonic = try Mnemonic(phrase: try ctx.string(1))
                let passphrase = try Options(ctx, 2, allowed: ["passphrase"]).string("passphrase") ?? ""
                ctx.push(bytes: mnemonic.seed(passphrase: passphrase).revealedBytes())
                return 1
            }

            module.function("from_mnemonic") { ctx in
                let mnemonic = try Mnemonic(phrase: try ctx.string(1))
                let passphrase = try Options(ctx, 2, allowed: ["passphrase"]).string("passphrase") ?? ""
                ctx.push(object: NodeObject(try HDNode(seed: mnemonic.seed(passphrase: passphrase)), path: .master))
                return 1
            }

            module.function("from_seed") { ctx in
                ctx.push(object: NodeObject(try HDNode(seed: SecretBytes(try ctx.bytes(1))), path: .master))
                return 1
            }

            module.function("from_extended") { ctx in
                let (node, family) = try HDNode.parse(try ctx.string(1))
                ctx.push(object: NodeObject(node, path: node.depth == 0 ? .master : nil, parsedFamily: family))
                return 1
            }

            module.function("parse_path") { ctx in
                let path = try DerivationPath(try ctx.string(1))
                var table = LuaTable(array: path.indexes.map { .integer(Int64($0)) })
                table["absolute"] = .boolean(path.isAbsolute)
                return try ctx.return(.table(table))
            }

            module.function("hardened") { ctx in
                let index = try integerArgument(ctx, 1, "index", in: 0...Int64(DerivationPath.hardenedOffset - 1))
                ctx.push(index | Int64(DerivationPath.hardenedOffset))
                return 1
            }

            module.function("standard_path") { ctx in
                let opts = try Options(ctx, 1, allowed: ["coin", "kind", "account", "change", "index"])
                let (coin, kind) = try opts.coinAndKind()
                try Address.checkSupported(kind, coin: coin)
                let account = try opts.index("account", default: 0)
                let path: DerivationPath
                if opts.has("change") || opts.has("index") {
                    path = try StandardPath.address(kind, coin: coin, account: account,
                                                    change: try opts.index("change", default: 0), index: try opts.index("index", default: 0))
                } else {
                    path = try StandardPath.account(kind, coin: coin, account: account)
                }
                ctx.push(path.description)
                return 1
            }

            module.function("eip1581") { ctx in
                let opts = try Options(ctx, 1, allowed: ["key_type", "index"])
                var keyType = StandardPath.eip1581Whisper
                switch opts["key_type"] {
                case .nil: break
                case .string:
                    switch try opts.string("key_type") {
                    case "whisper": keyType = StandardPath.eip1581Whisper
                    case "encryption": keyType = StandardPath.eip1581Encryption
                    case let other?:
                        throw LuaArgumentError(1, "option 'key_type': unknown key type \"\(other)\"; use \"whisper\", \"encryption\" or a number")
                    case nil: break
                    }
                default: keyType = try opts.index("key_type", default: 0)
                }
                ctx.push(try StandardPath.eip1581(keyType: keyType, index: try opts.index("index", default: 0)).description)
                return 1
            }
        }
    }

    // MARK: - node methods

    static let nodeMethods: [String: LuaMethod<NodeObject>] = KeyMethods.common(
        privateKey: { try $0.privateKey() }, publicKey: { try $0.live().publicKey }
    ).merging(ownMethods) { _, own in own }

    private static let ownMethods: [String: LuaMethod<NodeObject>] = [
        "address": { object, ctx in
            let (coin, kind) = try coinAndKind(ctx, 2, object)
            ctx.push(try object.live().address(kind, coin: coin))
            return 1
        },
        "derive": { object, ctx in
            let path = try pathArgument(ctx, 2)
            let child = try object.live().derive(path)
            let childPath = path.isAbsolute ? path : object.path.flatMap { try? $0.appending(path) }
            ctx.push(object: NodeObject(child, path: childPath, parsedFamily: object.parsedFamily))
            return 1
        },
        "public": { object, ctx in
            ctx.push(object: NodeObject(try object.live().neutered(), path: object.path, parsedFamily: object.parsedFamily))
            return 1
        },
        "xpub": { object, ctx in
            ctx.push(try object.live().extendedPublicKey(try family(ctx, 2, object)))
            return 1
        },
        "xprv": { object, ctx in
            let family = try family(ctx, 2, object)
            _ = try object.privateKey()
            ctx.push(try object.live().extendedPrivateKey(family))
            return 1
        },
        "is_private": { object, ctx in
            ctx.push(try object.live().isPrivate)
            return 1
        },
        "fingerprint": { object, ctx in
            ctx.push(bytes: bigEndianBytes(try object.live().fingerprint))
            return 1
        },
        "identifier": { object, ctx in
            ctx.push(bytes: try object.live().identifier)
            return 1
        },
        "parent_fingerprint": { object, ctx in
            ctx.push(bytes: bigEndianBytes(try object.live().parentFingerprint))
            return 1
        },
        "depth": { object, ctx in
            ctx.push(Int64(try object.live().depth))
            return 1
        },
        "child_number": { object, ctx in
            ctx.push(Int64(try object.live().childNumber))
            return 1
        },
        "path": { object, ctx in
            if let path = object.path { ctx.push(path.description) } else { ctx.pushNil() }
            return 1
        },
        "chain_code": { object, ctx in
            ctx.push(bytes: try object.live().chainCode)
            return 1
        },
        "private_key": { object, ctx in
            ctx.push(bytes: try object.privateKey().revealedBytes())
            return 1
        },
        "addresses": { object, ctx in
            let chain: UInt32? = ctx.isNil(2) ? nil : UInt32(try integerArgument(ctx, 2, "chain", in: 0...Int64(DerivationPath.hardenedOffset - 1)))
            let from = try integerArgument(ctx, 3, "start index", in: 0...Int64(DerivationPath.hardenedOffset - 1), default: 0)
            let count = try integerArgument(ctx, 4, "count", in: 0...Int64(maxAddresses))
            guard from + count <= Int64(DerivationPath.hardenedOffset) else {
                throw LuaArgumentError(4, "indexes \(from)...\(from + count - 1) run past 2147483647, the last non-hardened index")
            }
            let (coin, kind) = try coinAndKind(ctx, 5, object)
            try ctx.reserve(bytes: Int(count) * 128)
            let list = try object.live().addresses(kind, coin: coin, chain: chain, from: UInt32(from), count: Int(count))
            return try ctx.return(.table(LuaTable(array: list.map { .text($0) })))
        },
    ]

    /// The coin and kind for a node's addresses: as given at argument `i`, else inferred from the node's path or
    /// the extended-key version it was parsed from; raises where neither tells (never a guessed default).
    static func coinAndKind(_ ctx: LuaContext, _ i: Int32, _ object: NodeObject) throws -> (coin: Coin, kind: AddressKind) {
        let opts = try KeyMethods.kindOrOptions(ctx, i)
        return try AddressInference.resolve(kind: try opts.kind(), coin: try opts.coin(), path: object.path, family: object.parsedFamily)
    }

    /// Largest `count` one `node:addresses` call accepts.
    static let maxAddresses = 1_000_000

    /// A path as text ("m/84'/0'/0'", "0/5"), one child index, or a table of indexes as `hd.parse_path` returns.
    static func pathArgument(_ ctx: LuaContext, _ i: Int32) throws -> DerivationPath {
        switch ctx.typeName(i) {
        case "string":
            return try DerivationPath(try ctx.string(i))
        case "number":
            let index = try integerArgument(ctx, i, "child index", in: 0...Int64(UInt32.max))
            return try DerivationPath(indexes: [UInt32(index)], absolute: false)
        case "table":
            let table = try ctx.table(i)
            for key in table.fields.keys where key.stringValue != "absolute" {
                throw LuaArgumentError(i, "a path table holds child indexes 1..n and an optional 'absolute' field")
            }
            let indexes = try table.array.enumerated().map { n, value -> UInt32 in
                guard case .integer(let raw) = value, let index = UInt32(exactly: raw) else {
                    throw LuaArgumentError(i, "path index \(n + 1) must be an integer 0...4294967295, got \(value.typeName)")
                }
                return index
            }
            let absolute: Bool
            switch table["absolute"] {
            case .nil: absolute = false
            case .boolean(let b): absolute = b
            default: throw LuaArgumentError(i, "path field 'absolute' must be a boolean")
            }
            return try DerivationPath(indexes: indexes, absolute: absolute)
        default:
            throw LuaArgumentError(i, "path string, child index or table of indexes expected, got \(ctx.typeName(i))")
        }
    }

    private static let familyNames = ExtendedKeyVersion.all.map(\.publicPrefix).joined(separator: ", ")

    /// `"zpub"` (or `"zprv"`), `{family = "zpub"}`, `{coin = ..., kind = ...}`, or the node's own family when absent.
    static func family(_ ctx: LuaContext, _ i: Int32, _ object: NodeObject) throws -> ExtendedKeyVersion {
        func named(_ name: String) throws -> ExtendedKeyVersion {
            guard let family = ExtendedKeyVersion.lookup(prefix: name) else {
                throw LuaArgumentError(i, "unknown extended key family \"\(name)\"; use one of \(familyNames) (or their prv forms)")
            }
            return family
        }
        if ctx.isNil(i) { return object.family }
        if ctx.typeName(i) == "string" { return try named(try ctx.string(i)) }
        if ctx.typeName(i) != "table" {
            throw LuaArgumentError(i, "family name or options table expected, got \(ctx.typeName(i))")
        }
        let opts = try Options(ctx, i, allowed: ["family", "coin", "kind"])
        if let name = try opts.string("family") {
            if opts.has("coin") || opts.has("kind") {
                throw LuaArgumentError(i, "give either 'family' or 'coin'/'kind', not both")
            }
            return try named(name)
        }
        guard opts.has("coin") || opts.has("kind") else { return object.family }
        let (coin, kind) = try opts.coinAndKind()
        return coin.extendedKeyVersion(for: kind)
    }
}
