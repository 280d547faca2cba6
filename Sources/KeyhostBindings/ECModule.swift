import KeyhostCrypto
import LuaRuntime

/// `keyhost.ec`: secp256k1 keys, ECDSA, BIP340 Schnorr, ECDH and signed messages.
///
/// Functions that take a private key accept 32 raw bytes, a `keyhost.ec.private_key` or a private
/// `keyhost.hd.node`; functions that take a public key accept 33/65 SEC1 bytes or either object.
enum ECModule {
    static func register(in state: LuaState) {
        state.registerModule("keyhost.ec") { module in
            module.function("private_key") { ctx in
                ctx.push(object: PrivateKeyObject(try KeyArguments.privateKey(ctx, 1)))
                return 1
            }

            module.function("generate") { ctx in
                ctx.push(object: PrivateKeyObject(PrivateKey.generate()))
                return 1
            }

            module.function("from_wif") { ctx in
                let text = try ctx.string(1)
                if let coin = try Options(ctx, 2, allowed: ["coin"]).coin() {
                    ctx.push(object: PrivateKeyObject(try PrivateKey.fromWIF(text, coin: coin).key))
                    return 1
                }
                // No coin given: the version byte decides (Bitcoin first, so its error is the one reported).
                do {
                    ctx.push(object: PrivateKeyObject(try PrivateKey.fromWIF(text, coin: .bitcoin).key))
                } catch {
                    guard let key = Coin.all.lazy.compactMap({ try? PrivateKey.fromWIF(text, coin: $0).key }).first else { throw error }
                    ctx.push(object: PrivateKeyObject(key))
                }
                return 1
            }

            module.function("public_key") { ctx in
                let key: PublicKey
                if ctx.typeName(1) == "string", case let bytes = try ctx.bytes(1), ![33, 65].contains(bytes.count) {
                    // A 32-byte x-only key stands for the even-y point (BIP340 lift_x).
                    guard bytes.count == 32 else {
                        throw KeyError.publicKeyLength(bytes.count, expected: "32 bytes (x-only), 33 bytes (compressed, 02/03 prefix) "
                                                       + "or 65 bytes (uncompressed, 04 prefix)")
                    }
                    key = try XOnlyPublicKey(bytes: bytes).evenYPublicKey
                } else {
                    key = try KeyArguments.publicKey(ctx, 1)
                }
                // Bytes convert to compressed by default; an object keeps its own form (an uncompressed-WIF key).
                let ownForm = ctx.typeName(1) == "string" ? true : key.isCompressed
                ctx.push(bytes: try KeyArguments.serialize(key, try Options(ctx, 2, allowed: KeyArguments.publicKeyOptions),
                                                           defaultCompressed: ownForm))
                return 1
            }

            module.function("sign") { ctx in
                let key = try KeyArguments.privateKey(ctx, 1)
                return try ctx.return(Signatures.table(try key.signRecoverable(digest: try ctx.bytes(2))))
            }

            module.function("verify") { ctx in
                let key = try KeyArguments.publicKey(ctx, 1)
                let digest = try ctx.bytes(2)
                let signature = try Signatures.ecdsa(ctx, 3)
                ctx.push(try key.verify(signature, digest: digest))
                return 1
            }

            module.function("recover") { ctx in
                let digest = try ctx.bytes(1)
                let signature = try Signatures.recoverable(ctx, 2)
                let opts = try Options(ctx, 3, allowed: KeyArguments.publicKeyOptions)
                ctx.push(bytes: try KeyArguments.serialize(try signature.recoverPublicKey(digest: digest), opts))
                return 1
            }

            module.function("schnorr_sign") { ctx in
                let key = try KeyArguments.privateKey(ctx, 1)
                let message = try ctx.bytes(2)
                let aux = try Options(ctx, 3, allowed: ["aux"]).bytes("aux")
                ctx.push(bytes: try key.signSchnorr(message: message, auxiliaryRandom: aux))
                return 1
            }

            module.function("schnorr_verify") { ctx in
                let key = try KeyArguments.xOnlyKey(ctx, 1)
                let message = try ctx.bytes(2)
                let signature = try ctx.bytes(3)
                guard signature.count == 64 else { throw SignatureError.signatureLength(signature.count, expected: 64) }
                ctx.push(key.verify(schnorr: signature, message: message))
                return 1
            }

            module.function("ecdh") { ctx in
                let key = try KeyArguments.privateKey(ctx, 1)
                let peer = try KeyArguments.publicKey(ctx, 2)
                ctx.push(bytes: try key.sharedSecretX(with: peer).revealedBytes())
                return 1
            }

            // Ethereum personal_sign (EIP-191 version 0x45).
            module.function("eth_message_hash") { ctx in
                ctx.push(bytes: EthereumMessage.hash(try ctx.bytes(1)))
                return 1
            }

            // The signer: a private key or node, a card session ({path = …}) or a function, as for eth.tx:sign.
            module.function("eth_sign_message") { ctx in
                let sign = try EthSigner.resolve(ctx, 1, options: 3)
                ctx.push(bytes: try sign(EthereumMessage.hash(try ctx.bytes(2))).rsv)
                return 1
            }

            module.function("eth_recover_message") { ctx in
                let message = try ctx.bytes(1)
                let signature = try Signatures.recoverable(ctx, 2)
                ctx.push(EthereumAddress.address(of: try signature.recoverPublicKey(digest: EthereumMessage.hash(message))))
                return 1
            }

            // Bitcoin signed messages (legacy format of Bitcoin Core / Electrum, BIP137 headers for segwit).
            module.function("btc_message_hash") { ctx in
                ctx.push(bytes: BitcoinMessage.hash(try ctx.bytes(1)))
                return 1
            }

            module.function("btc_sign_message") { ctx in
                let message = try ctx.bytes(2)
                let kind = try Options(ctx, 3, allowed: ["kind", "path"]).kind() ?? .p2pkh
                if ctx.typeName(1) == CardSessionObject.luaTypeName || ctx.typeName(1) == "function" {
                    // A card (or a function) signs the message hash; the header says compressed, as a card's keys are.
                    let sign = try EthSigner.resolve(ctx, 1, options: 3, extra: ["kind"])
                    ctx.push(try BitcoinMessage.encode(try sign(BitcoinMessage.hash(message)), kind: kind, compressed: true))
                } else {
                    if try Options(ctx, 3, allowed: ["kind", "path"]).has("path") {
                        throw LuaArgumentError(3, "option 'path' goes with a card session; derive a node for a key (hd.from_mnemonic(…):derive(path))")
                    }
                    ctx.push(try BitcoinMessage.sign(message, with: try KeyArguments.privateKey(ctx, 1), kind: kind))
                }
                return 1
            }

            module.function("btc_verify_message") { ctx in
                let address = try ctx.string(1)
                let message = try ctx.bytes(2)
                let signature = try ctx.string(3)
                let coin = try Options(ctx, 4, allowed: ["coin"]).coin() ?? .bitcoin
                do {
                    ctx.push(try BitcoinMessage.verify(message, signature: signature, address: address, coin: coin))
                } catch SignatureError.recoveryFailed {
                    ctx.push(false)  // well-formed, but made by no key for this message
                }
                return 1
            }
        }
    }
}
