import KeyhostCrypto
import LuaRuntime

/// `keyhost.hash`: digests, HMAC and key derivation functions; bytes in, bytes out.
enum HashModule {
    static func register(in state: LuaState) {
        state.registerModule("keyhost.hash") { module in
            let digests: [(String, ([UInt8]) -> [UInt8])] = [
                ("sha256", Hash.sha256), ("sha512", Hash.sha512), ("ripemd160", Hash.ripemd160),
                ("hash160", Hash.hash160), ("sha256d", Hash.sha256d), ("keccak256", Hash.keccak256),
            ]
            for (name, digest) in digests {
                module.function(name) { ctx in
                    ctx.push(bytes: digest(try ctx.bytes(1)))
                    return 1
                }
            }

            module.function("tagged") { ctx in
                let tag = try ctx.bytes(1)  // any bytes: BIP340 tags need not be UTF-8
                ctx.push(bytes: Hash.tagged(bytes: tag, try ctx.bytes(2)))
                return 1
            }

            module.function("hmac_sha256") { ctx in
                ctx.push(bytes: Hash.hmacSHA256(key: try ctx.bytes(1), data: try ctx.bytes(2)))
                return 1
            }

            module.function("hmac_sha512") { ctx in
                ctx.push(bytes: Hash.hmacSHA512(key: try ctx.bytes(1), data: try ctx.bytes(2)))
                return 1
            }

            module.function("pbkdf2_sha512") { ctx in try pbkdf2(ctx, KDF.pbkdf2SHA512) }
            module.function("pbkdf2_sha256") { ctx in try pbkdf2(ctx, KDF.pbkdf2SHA256) }

            module.function("hkdf_sha256") { ctx in
                let key = try ctx.bytes(1)
                let salt = try ctx.optionalBytes(2) ?? []
                let info = try ctx.optionalBytes(3) ?? []
                let length = try integerArgument(ctx, 4, "length", in: 1...8160)
                ctx.push(bytes: try KDF.hkdfSHA256(key: key, salt: salt, info: info, length: Int(length)).revealedBytes())
                return 1
            }
        }
    }

    /// `pbkdf2_*(password, salt, iterations, length)`.
    private static func pbkdf2(_ ctx: LuaContext,
                               _ kdf: ([UInt8], [UInt8], Int, Int) throws -> SecretBytes) throws -> Int32 {
        let password = try ctx.bytes(1)
        let salt = try ctx.bytes(2)
        let iterations = try integerArgument(ctx, 3, "iterations", in: 1...Int64(Int32.max))
        let length = try integerArgument(ctx, 4, "length", in: 1...(1 << 20))
        try ctx.reserve(bytes: Int(length))
        ctx.push(bytes: try kdf(password, salt, Int(iterations), Int(length)).revealedBytes())
        return 1
    }
}
