import KeyhostCrypto
import LuaRuntime

/// The pure helpers a token program may call: hashes and signature checks. Each depends only on
/// its arguments, so runs stay deterministic.
enum PureFunctions {
    static func hashes(in state: LuaState) -> LuaTable {
        func unary(_ f: @escaping ([UInt8]) -> [UInt8]) -> LuaValue {
            state.makeFunction { ctx in
                let data = try ctx.bytes(1)
                ctx.push(bytes: f(data))
                return 1
            }
        }
        return LuaTable([
            "sha256": unary(Hash.sha256),
            "sha512": unary(Hash.sha512),
            "sha256d": unary(Hash.sha256d),
            "hash160": unary(Hash.hash160),
            "ripemd160": unary(Hash.ripemd160),
            "keccak256": unary(Hash.keccak256),
            "tagged": state.makeFunction { ctx in
                let (tag, data) = (try ctx.bytes(1), try ctx.bytes(2))
                ctx.push(bytes: Hash.tagged(bytes: tag, data))
                return 1
            },
            "hmac_sha256": state.makeFunction { ctx in
                let (key, data) = (try ctx.bytes(1), try ctx.bytes(2))
                ctx.push(bytes: Hash.hmacSHA256(key: key, data: data))
                return 1
            },
        ])
    }

    /// `schnorr(xonly_pub, msg32, sig64)` (BIP340) and `ecdsa(pub, digest32, sig)` (compact or
    /// DER, any S) answer true or false; malformed keys or signatures are false, not errors.
    static func verifiers(in state: LuaState) -> LuaTable {
        LuaTable([
            "schnorr": state.makeFunction { ctx in
                let (key, message, signature) = (try ctx.bytes(1), try ctx.bytes(2), try ctx.bytes(3))
                guard key.count == 32, message.count == 32, signature.count == 64, let xonly = try? XOnlyPublicKey(bytes: key) else {
                    ctx.push(false)
                    return 1
                }
                ctx.push(xonly.verify(schnorr: signature, message: message))
                return 1
            },
            "ecdsa": state.makeFunction { ctx in
                let (key, digest, signature) = (try ctx.bytes(1), try ctx.bytes(2), try ctx.bytes(3))
                guard digest.count == 32, key.count <= 65, signature.count <= 72, let pub = try? PublicKey(bytes: key),
                      let sig = signature.count == 64 ? try? ECDSASignature(compact: signature) : try? ECDSASignature(der: signature)
                else {
                    ctx.push(false)
                    return 1
                }
                ctx.push((try? pub.verify(sig.normalized(), digest: digest)) ?? false)
                return 1
            },
        ])
    }
}
