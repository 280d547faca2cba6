import COpenSSL
import CSecp256k1

/// A secp256k1 private key; its 32 bytes live in wiped-on-release storage and are never printed.
public struct PrivateKey: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The 32 secret bytes, always a valid scalar in 1..n-1.
    public let secret: SecretBytes
    /// The libsecp256k1 keypair (secret and public key), made once: Schnorr signing and
    /// `publicKey` then need no further point multiplication.
    private let keypair: SecretBytes
    /// Whether the key's public key is written compressed (33 bytes), as a WIF's 0x01 suffix says; an
    /// uncompressed key has other P2PKH addresses and signed-message headers, and no segwit ones.
    public private(set) var isCompressed = true

    /// Checks and adopts 32 secret bytes.
    public init(secret: SecretBytes) throws {
        guard secret.count == 32 else { throw KeyError.privateKeyLength(secret.count) }
        var valid = false
        let keypair = SecretBytes(count: MemoryLayout<secp256k1_keypair>.size) { out in
            secret.withUnsafeBytes { seckey in
                valid = secpSucceeded(secp256k1_keypair_create(
                    Secp256k1.shared.context, out.baseAddress!.assumingMemoryBound(to: secp256k1_keypair.self),
                    seckey.bindMemory(to: UInt8.self).baseAddress!))
            }
        }
        guard valid else { throw KeyError.privateKeyOutOfRange }
        self.secret = secret
        self.keypair = keypair
    }

    /// Checks and copies 32 big-endian bytes.
    public init(bytes: [UInt8]) throws {
        try self.init(secret: SecretBytes(bytes))
    }

    /// The same key, marked compressed or uncompressed.
    public func compressed(_ flag: Bool) -> PrivateKey {
        var copy = self
        copy.isCompressed = flag
        return copy
    }

    /// A fresh key from the system CSPRNG.
    public static func generate() -> PrivateKey {
        while true {
            let candidate = SecretBytes(count: 32) { fillRandom($0) }
            // Fails only for a value >= n, with probability below 2^-127.
            if let key = try? PrivateKey(secret: candidate) { return key }
        }
    }

    /// Copies the 32 secret bytes out (not wiped); only for showing or exporting the key.
    public func revealedBytes() -> [UInt8] { secret.revealedBytes() }

    /// The matching public key.
    public var publicKey: PublicKey {
        var raw = secp256k1_pubkey()
        keypair.withUnsafeBytes {
            _ = secp256k1_keypair_pub(Secp256k1.shared.context, &raw, $0.baseAddress!.assumingMemoryBound(to: secp256k1_keypair.self))
        }
        return PublicKey(raw: raw, compressed: isCompressed)
    }

    // MARK: - ECDSA

    /// RFC 6979 deterministic ECDSA over a 32-byte digest; the result is always low-S.
    public func sign(digest: [UInt8]) throws -> ECDSASignature {
        guard digest.count == 32 else { throw SignatureError.digestLength(digest.count) }
        var sig = secp256k1_ecdsa_signature()
        let ok = withSeckey { secpSucceeded(secp256k1_ecdsa_sign(Secp256k1.shared.context, &sig, digest, $0, nil, nil)) }
        guard ok else { throw KeyError.privateKeyOutOfRange }
        return ECDSASignature(raw: sig)
    }

    /// RFC 6979 ECDSA with a low R, as Bitcoin Core's signer and embit grind it for transactions: the plain
    /// signature when its R is below 2^255, else the next with RFC 6979's extra data set to a counter
    /// (1, 2, … as 32 little-endian bytes), so the DER encoding is at most 70 bytes and fees are predictable.
    public func signLowR(digest: [UInt8]) throws -> ECDSASignature {
        guard digest.count == 32 else { throw SignatureError.digestLength(digest.count) }
        var sig = secp256k1_ecdsa_signature()
        var counter: UInt32 = 0
        var extra = [UInt8](repeating: 0, count: 32)
        while true {
            let ok = withSeckey { key in
                counter == 0
                    ? secpSucceeded(secp256k1_ecdsa_sign(Secp256k1.shared.context, &sig, digest, key, nil, nil))
                    : secpSucceeded(secp256k1_ecdsa_sign(Secp256k1.shared.context, &sig, digest, key, secp256k1_nonce_function_rfc6979, extra))
            }
            guard ok else { throw KeyError.privateKeyOutOfRange }
            let signature = ECDSASignature(raw: sig)
            if signature.compact[0] < 0x80 { return signature }
            counter += 1
            withUnsafeBytes(of: counter.littleEndian) { for (i, byte) in $0.enumerated() { extra[i] = byte } }
        }
    }

    /// RFC 6979 ECDSA over a 32-byte digest with the recovery id (Ethereum, Bitcoin signed messages).
    public func signRecoverable(digest: [UInt8]) throws -> RecoverableSignature {
        guard digest.count == 32 else { throw SignatureError.digestLength(digest.count) }
        var sig = secp256k1_ecdsa_recoverable_signature()
        let ok = withSeckey { secpSucceeded(secp256k1_ecdsa_sign_recoverable(Secp256k1.shared.context, &sig, digest, $0, nil, nil)) }
        guard ok else { throw KeyError.privateKeyOutOfRange }
        var compact = [UInt8](repeating: 0, count: 64)
        var recid: Int32 = 0
        _ = secp256k1_ecdsa_recoverable_signature_serialize_compact(Secp256k1.shared.context, &compact, &recid, &sig)
        return try RecoverableSignature(compact: compact, recoveryID: Int(recid))
    }

    // MARK: - BIP340 Schnorr

    /// A BIP340 Schnorr signature of `message` (any length; usually a 32-byte hash).
    /// `auxiliaryRandom` (32 bytes) defaults to fresh CSPRNG output, as BIP340 recommends; pass it for reproducible tests.
    public func signSchnorr(message: [UInt8], auxiliaryRandom: [UInt8]? = nil) throws -> [UInt8] {
        let aux = auxiliaryRandom ?? secureRandomBytes(32)
        guard aux.count == 32 else { throw SignatureError.auxiliaryRandomLength(aux.count) }
        return try keypair.withUnsafeBytes { raw in
            let keypair = raw.baseAddress!.assumingMemoryBound(to: secp256k1_keypair.self)
            var signature = [UInt8](repeating: 0, count: 64)
            let ok = aux.withUnsafeBytes { auxBytes -> Bool in
                var params = secp256k1_schnorrsig_extraparams()
                // SECP256K1_SCHNORRSIG_EXTRAPARAMS_INIT is a C initializer macro Swift cannot import.
                params.magic = (0xda, 0x6f, 0xb3, 0x8c)
                params.noncefp = nil
                params.ndata = UnsafeMutableRawPointer(mutating: auxBytes.baseAddress)
                return secpSucceeded(secp256k1_schnorrsig_sign_custom(
                    Secp256k1.shared.context, &signature, message, message.count, keypair, &params))
            }
            guard ok else { throw KeyError.privateKeyOutOfRange }
            return signature
        }
    }

    /// The BIP341 key-path spending key: this key tweaked so it matches `publicKey.xOnly.taprootOutputKey(merkleRoot:)`.
    public func taprootTweaked(merkleRoot: [UInt8]? = nil) throws -> PrivateKey {
        let tweak = try publicKey.xOnly.taprootTweak(merkleRoot: merkleRoot)
        return try withKeypair { keypair in
            guard secpSucceeded(secp256k1_keypair_xonly_tweak_add(Secp256k1.shared.context, keypair, tweak)) else {
                throw KeyError.tweakOutOfRange
            }
            let tweaked = SecretBytes(count: 32) { out in
                _ = secp256k1_keypair_sec(Secp256k1.shared.context, out.bindMemory(to: UInt8.self).baseAddress!, keypair)
            }
            return try PrivateKey(secret: tweaked)
        }
    }

    // MARK: - Tweaks and ECDH

    /// (this key + `tweak`) mod n, as in BIP32 private derivation.
    public func adding(tweak: [UInt8]) throws -> PrivateKey {
        guard tweak.count == 32 else { throw KeyError.privateKeyLength(tweak.count) }
        var ok = false
        let sum = SecretBytes(count: 32) { out in
            secret.withUnsafeBytes { out.copyMemory(from: $0) }
            ok = secpSucceeded(secp256k1_ec_seckey_tweak_add(Secp256k1.shared.context, out.bindMemory(to: UInt8.self).baseAddress!, tweak))
        }
        guard ok else { throw KeyError.tweakOutOfRange }
        return try PrivateKey(secret: sum)
    }

    /// ECDH shared secret as the 32-byte x coordinate of (this key · `publicKey`), the form Keycard's secure channel uses.
    /// (libsecp256k1's default would return SHA-256 of the compressed point instead.)
    public func sharedSecretX(with publicKey: PublicKey) throws -> SecretBytes {
        var point = publicKey.raw
        var ok = false
        let shared = SecretBytes(count: 32) { out in
            ok = withSeckey { seckey in
                secpSucceeded(secp256k1_ecdh(Secp256k1.shared.context, out.bindMemory(to: UInt8.self).baseAddress!, &point, seckey,
                                             { output, x32, _, _ in
                                                 guard let output, let x32 else { return 0 }
                                                 output.update(from: x32, count: 32)
                                                 return 1
                                             }, nil))
            }
        }
        guard ok else { throw KeyError.tweakOutOfRange }
        return shared
    }

    // MARK: - WIF

    /// Wallet Import Format for `coin`; the compressed-key flag is the key's own unless `compressed` says otherwise.
    public func wif(coin: Coin = .bitcoin, compressed: Bool? = nil) throws -> String {
        let compressed = compressed ?? isCompressed
        guard let version = coin.wifVersion else { throw KeyError.wif("\(coin.name) has no WIF format") }
        return withWipedScratch(34) { buffer in
            buffer[0] = version
            secret.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: buffer[1..<33]).copyMemory(from: $0) }
            buffer[33] = 0x01
            return Base58.encodeCheck(UnsafeRawBufferPointer(rebasing: buffer[0..<(compressed ? 34 : 33)]))
        }
    }

    /// Parses a WIF key, checking its version byte against `coin`; also reports whether it was marked compressed.
    public static func fromWIF(_ text: String, coin: Coin = .bitcoin) throws -> (key: PrivateKey, compressed: Bool) {
        var payload: [UInt8]
        do {
            payload = try Base58.decodeCheck(text)
        } catch let error as EncodingError {
            throw KeyError.wif("\(error)")
        }
        defer { zero(&payload) }
        guard payload.count == 33 || (payload.count == 34 && payload[33] == 0x01) else {
            throw KeyError.wif("payload of \(payload.count) bytes; expected a version byte, 32 key bytes and an optional 0x01")
        }
        guard payload[0] == coin.wifVersion else {
            throw KeyError.wif("version byte 0x\(Hex.encode([payload[0]])) is not \(coin.name)'s" +
                               (coin.wifVersion.map { " (0x\(Hex.encode([$0])))" } ?? ""))
        }
        let key = try PrivateKey(secret: SecretBytes(payload[1..<33])).compressed(payload.count == 34)
        return (key, key.isCompressed)
    }

    // MARK: - Helpers

    private func withSeckey<R>(_ body: (UnsafePointer<UInt8>) throws -> R) rethrows -> R {
        try secret.withUnsafeBytes { try body($0.bindMemory(to: UInt8.self).baseAddress!) }
    }

    /// Runs `body` with a mutable copy of the keypair that is wiped afterwards (it embeds the secret key).
    private func withKeypair<R>(_ body: (UnsafeMutablePointer<secp256k1_keypair>) throws -> R) throws -> R {
        var copy = secp256k1_keypair()
        defer { wipe(&copy, MemoryLayout<secp256k1_keypair>.size) }
        keypair.withUnsafeBytes { source in withUnsafeMutableBytes(of: &copy) { $0.copyMemory(from: source) } }
        return try body(&copy)
    }

    /// Constant-time comparison of the secrets.
    public static func == (lhs: PrivateKey, rhs: PrivateKey) -> Bool { lhs.secret == rhs.secret }

    /// Never shows the key.
    public var description: String { "PrivateKey(redacted)" }
    public var debugDescription: String { description }
}
