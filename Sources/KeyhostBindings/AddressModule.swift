import KeyhostCrypto
import LuaRuntime

/// `keyhost.address`: encode, decode and validate addresses of the registry's coins.
enum AddressModule {
    static func register(in state: LuaState) {
        state.registerModule("keyhost.address") { module in
            module.function("encode") { ctx in
                let (coin, kind) = try KeyMethods.kindOrOptions(ctx, 2).coinAndKind()
                ctx.push(try encode(ctx, 1, kind: kind, coin: coin))
                return 1
            }

            module.function("decode") { ctx in
                let text = try ctx.string(1)
                let coin = try Options(ctx, 2, allowed: ["coin"]).coin() ?? .bitcoin
                let decoded = try Address.decode(text, coin: coin)
                var table = LuaTable([
                    "type": .text(decoded.type.description),
                    "coin": .text(coin.symbol),
                    "payload": .string(decoded.payload),
                ])
                if !decoded.scriptPubKey.isEmpty { table["script"] = .string(decoded.scriptPubKey) }
                switch decoded.type {
                case .p2wpkh, .p2wsh: table["witness_version"] = .integer(0)
                case .p2tr: table["witness_version"] = .integer(1)
                case .witness(let version): table["witness_version"] = .integer(Int64(version))
                default: break
                }
                return try ctx.return(.table(table))
            }

            module.function("validate") { ctx in
                let text = try ctx.string(1)
                _ = try Address.decode(text, coin: try Options(ctx, 2, allowed: ["coin"]).coin() ?? .bitcoin)
                ctx.push(true)
                return 1
            }

            module.function("is_valid") { ctx in
                guard ctx.typeName(1) == "string" else { throw LuaArgumentError(1, "string expected, got \(ctx.typeName(1))") }
                let coin = try Options(ctx, 2, allowed: ["coin"]).coin() ?? .bitcoin
                ctx.push((try? Address.decode(try ctx.string(1), coin: coin)) != nil)
                return 1
            }

            module.function("eth_checksum") { ctx in
                let raw = try ctx.bytes(1)
                // 20 raw address bytes, or "0x" + 40 hex digits (a mixed-case one must already carry a valid checksum).
                let bytes = raw.count == 20 ? raw : try EthereumAddress.decode(try ctx.string(1))
                ctx.push(EthereumAddress.checksummed(bytes))
                return 1
            }
        }
    }

    /// The address of argument `i`: a public key (33/65 bytes or a key object/node), a 20-byte key hash
    /// (p2pkh, p2sh-p2wpkh, p2wpkh; the 20 address bytes for ethereum), or a 32-byte x-only internal key (p2tr).
    static func encode(_ ctx: LuaContext, _ i: Int32, kind: AddressKind, coin: Coin) throws -> String {
        guard ctx.typeName(i) == "string" else {
            return try Address.encode(try KeyArguments.publicKey(ctx, i), kind: kind, coin: coin)
        }
        let bytes = try ctx.bytes(i)
        switch bytes.count {
        case 33, 65:
            return try Address.encode(try PublicKey(bytes: bytes), kind: kind, coin: coin)
        case 20:
            try Address.checkSupported(kind, coin: coin)
            switch kind {
            case .p2pkh: return try Address.p2pkh(hash: bytes, coin: coin)
            case .p2wpkh: return try SegwitAddress.encode(hrp: coin.bech32HRP ?? "", version: 0, program: bytes)
            case .p2shP2wpkh:
                let scriptHash = Hash.hash160([0x00, 0x14] + bytes)
                return Base58.encodeCheck([coin.p2shVersion ?? 0] + scriptHash)
            case .ethereum: return EthereumAddress.checksummed(bytes)
            case .p2tr:
                throw BindingError("a p2tr address needs a public key or a 32-byte x-only key, not a 20-byte hash")
            }
        case 32:
            guard kind == .p2tr else {
                throw BindingError("32 bytes is an x-only key, which only makes p2tr addresses; "
                                   + "give a 33-byte public key or a 20-byte hash for \(kind.rawValue)")
            }
            try Address.checkSupported(kind, coin: coin)
            let output = try XOnlyPublicKey(bytes: bytes).taprootOutputKey()
            return try SegwitAddress.encode(hrp: coin.bech32HRP ?? "", version: 1, program: output.bytes)
        default:
            throw BindingError("cannot make an address of \(bytes.count) bytes; give a public key (33 or 65 bytes), "
                               + "a 20-byte hash, or a 32-byte x-only key for p2tr")
        }
    }
}
