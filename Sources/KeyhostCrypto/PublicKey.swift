import CSecp256k1

/// A secp256k1 public key (a curve point, never infinity).
public struct PublicKey: Hashable, Sendable, CustomStringConvertible {
    /// libsecp256k1's parsed form, kept so repeated use does not re-parse or re-check the point.
    var raw: secp256k1_pubkey
    /// Whether the key is written compressed (33 bytes) rather than uncompressed (65 bytes): it was parsed
    /// from 33 bytes or comes from a compressed private key. It decides `serialized`, `hash160` and so the
    /// P2PKH address; equality compares points only.
    public private(set) var isCompressed: Bool

    init(raw: secp256k1_pubkey, compressed: Bool = true) {
        self.raw = raw
        self.isCompressed = compressed
    }

    /// The same point, marked compressed or uncompressed.
    public func compressed(_ flag: Bool) -> PublicKey { PublicKey(raw: raw, compressed: flag) }

    /// The key in its own form: 33 bytes when compressed, else 65.
    public var serialized: [UInt8] { isCompressed ? compressed : uncompressed }

    /// Parses a 33-byte compressed or 65-byte uncompressed SEC1 key, checking that the point is on the curve.
    public init(bytes: [UInt8]) throws {
        guard bytes.count == 33 || bytes.count == 65 else {
            throw KeyError.publicKeyLength(bytes.count, expected: "33 bytes (compressed, 02/03 prefix) or 65 bytes (uncompressed, 04 prefix)")
        }
        let prefix = bytes[0]
        guard (bytes.count == 33 && (prefix == 2 || prefix == 3)) || (bytes.count == 65 && prefix == 4) else {
            throw KeyError.publicKeyPrefix(prefix)
        }
        var raw = secp256k1_pubkey()
        guard secpSucceeded(secp256k1_ec_pubkey_parse(Secp256k1.shared.context, &raw, bytes, bytes.count)) else {
            throw KeyError.publicKeyNotOnCurve
        }
        self.raw = raw
        self.isCompressed = bytes.count == 33
    }

    /// 33-byte SEC1 compressed form (02/03 prefix).
    public var compressed: [UInt8] {
        [UInt8](unsafeUninitializedCapacity: 33) { out, count in
            writeCompressed(into: out.baseAddress!)
            count = 33
        }
    }

    /// 65-byte SEC1 uncompressed form (04 prefix).
    public var uncompressed: [UInt8] {
        [UInt8](unsafeUninitializedCapacity: 65) { out, count in
            var length = 65
            var raw = self.raw
            _ = secp256k1_ec_pubkey_serialize(Secp256k1.shared.context, out.baseAddress!, &length, &raw,
                                              UInt32(SECP256K1_EC_UNCOMPRESSED))
            count = 65
        }
    }

    /// The BIP340 x-only form of this point (its y parity dropped).
    public var xOnly: XOnlyPublicKey {
        var raw = self.raw
        var xonly = secp256k1_xonly_pubkey()
        // Cannot fail for a valid point, which `raw` always is.
        _ = secp256k1_xonly_pubkey_from_pubkey(Secp256k1.shared.context, &xonly, nil, &raw)
        return XOnlyPublicKey(raw: xonly)
    }

    /// HASH160 of the key in its own form (`serialized`), as used in P2PKH and P2WPKH outputs.
    public var hash160: [UInt8] {
        guard isCompressed else { return Hash.hash160(uncompressed) }
        return [UInt8](unsafeUninitializedCapacity: 20) { out, count in
            withUnsafeTemporaryAllocation(byteCount: 33, alignment: 8) { buffer in
                writeCompressed(into: buffer.baseAddress!.assumingMemoryBound(to: UInt8.self))
                Hash.hash160(UnsafeRawBufferPointer(buffer), into: UnsafeMutableRawPointer(out.baseAddress!))
            }
            count = 20
        }
    }

    /// Checks an ECDSA signature over a 32-byte digest; high-S signatures are rejected (normalize them first).
    public func verify(_ signature: ECDSASignature, digest: [UInt8]) throws -> Bool {
        guard digest.count == 32 else { throw SignatureError.digestLength(digest.count) }
        var sig = signature.raw
        var raw = self.raw
        return secpSucceeded(secp256k1_ecdsa_verify(Secp256k1.shared.context, &sig, digest, &raw))
    }

    /// This point plus `tweak`·G; used for BIP32 public derivation and other additive tweaks.
    public func adding(tweak: [UInt8]) throws -> PublicKey {
        guard tweak.count == 32 else { throw KeyError.privateKeyLength(tweak.count) }
        var raw = self.raw
        guard secpSucceeded(secp256k1_ec_pubkey_tweak_add(Secp256k1.shared.context, &raw, tweak)) else {
            throw KeyError.tweakOutOfRange
        }
        return PublicKey(raw: raw)
    }

    /// This point multiplied by the scalar `tweak`; the building block of ECDH.
    public func multiplied(by tweak: [UInt8]) throws -> PublicKey {
        guard tweak.count == 32 else { throw KeyError.privateKeyLength(tweak.count) }
        var raw = self.raw
        guard secpSucceeded(secp256k1_ec_pubkey_tweak_mul(Secp256k1.shared.context, &raw, tweak)) else {
            throw KeyError.tweakOutOfRange
        }
        return PublicKey(raw: raw)
    }

    /// The sum of several points; throws if they cancel out to infinity.
    public static func combine(_ keys: [PublicKey]) throws -> PublicKey {
        guard !keys.isEmpty else { throw KeyError.tweakOutOfRange }
        var raws = keys.map(\.raw)
        var out = secp256k1_pubkey()
        let ok = raws.withUnsafeMutableBufferPointer { buffer -> Bool in
            var pointers: [UnsafePointer<secp256k1_pubkey>?] = (0..<buffer.count).map { UnsafePointer(buffer.baseAddress! + $0) }
            return secpSucceeded(secp256k1_ec_pubkey_combine(Secp256k1.shared.context, &out, &pointers, buffer.count))
        }
        guard ok else { throw KeyError.tweakOutOfRange }
        return PublicKey(raw: out)
    }

    @inline(__always)
    func writeCompressed(into out: UnsafeMutablePointer<UInt8>) {
        var length = 33
        var raw = self.raw
        _ = secp256k1_ec_pubkey_serialize(Secp256k1.shared.context, out, &length, &raw, UInt32(SECP256K1_EC_COMPRESSED))
    }

    public static func == (lhs: PublicKey, rhs: PublicKey) -> Bool {
        var a = lhs.raw, b = rhs.raw
        return secp256k1_ec_pubkey_cmp(Secp256k1.shared.context, &a, &b) == 0
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(compressed)
    }

    /// Hex of the compressed form.
    public var description: String { Hex.encode(compressed) }
}

/// A BIP340 x-only public key (32 bytes, even y implied).
public struct XOnlyPublicKey: Hashable, Sendable, CustomStringConvertible {
    var raw: secp256k1_xonly_pubkey

    init(raw: secp256k1_xonly_pubkey) { self.raw = raw }

    /// Parses 32 bytes of x coordinate, checking that a curve point with that x exists.
    public init(bytes: [UInt8]) throws {
        guard bytes.count == 32 else { throw KeyError.publicKeyLength(bytes.count, expected: "32 bytes (x-only)") }
        var raw = secp256k1_xonly_pubkey()
        guard secpSucceeded(secp256k1_xonly_pubkey_parse(Secp256k1.shared.context, &raw, bytes)) else {
            throw KeyError.publicKeyNotOnCurve
        }
        self.raw = raw
    }

    /// The point with this x and even y, as BIP340's lift_x defines the key an x-only key stands for.
    public var evenYPublicKey: PublicKey {
        // Cannot fail: an x-only key always has a curve point with that x.
        (try? PublicKey(bytes: [0x02] + bytes)) ?? PublicKey(raw: secp256k1_pubkey())
    }

    /// The 32-byte x coordinate.
    public var bytes: [UInt8] {
        [UInt8](unsafeUninitializedCapacity: 32) { out, count in
            var raw = self.raw
            _ = secp256k1_xonly_pubkey_serialize(Secp256k1.shared.context, out.baseAddress!, &raw)
            count = 32
        }
    }

    /// BIP341 output key for key-path spending: this key tweaked by TapTweak(key || merkleRoot).
    /// With no script tree (`merkleRoot` nil), this is the BIP86 output key.
    public func taprootOutputKey(merkleRoot: [UInt8]? = nil) throws -> XOnlyPublicKey {
        let tweak = try taprootTweak(merkleRoot: merkleRoot)
        // Q = lift_x(P) + t·G, computed as a fixed-base multiplication plus one addition, which is
        // several times cheaper in libsecp256k1 than `xonly_pubkey_tweak_add`'s variable-base path.
        let ctx = Secp256k1.shared.context
        var even = secp256k1_pubkey()
        let ok = ([0x02] + bytes).withUnsafeBufferPointer { secpSucceeded(secp256k1_ec_pubkey_parse(ctx, &even, $0.baseAddress!, 33)) }
        var tweakPoint = secp256k1_pubkey()
        guard ok, secpSucceeded(secp256k1_ec_pubkey_create(ctx, &tweakPoint, tweak)) else { throw KeyError.tweakOutOfRange }
        return try PublicKey.combine([PublicKey(raw: even), PublicKey(raw: tweakPoint)]).xOnly
    }

    /// The BIP341 TapTweak hash for this internal key.
    public func taprootTweak(merkleRoot: [UInt8]? = nil) throws -> [UInt8] {
        if let root = merkleRoot, root.count != 32 {
            throw KeyError.publicKeyLength(root.count, expected: "a 32-byte taproot merkle root")
        }
        return Hash.tagged("TapTweak", bytes + (merkleRoot ?? []))
    }

    /// Checks a 64-byte BIP340 Schnorr signature over `message` (any length).
    public func verify(schnorr signature: [UInt8], message: [UInt8]) -> Bool {
        guard signature.count == 64 else { return false }
        var raw = self.raw
        return secpSucceeded(secp256k1_schnorrsig_verify(Secp256k1.shared.context, signature, message, message.count, &raw))
    }

    public static func == (lhs: XOnlyPublicKey, rhs: XOnlyPublicKey) -> Bool {
        var a = lhs.raw, b = rhs.raw
        return secp256k1_xonly_pubkey_cmp(Secp256k1.shared.context, &a, &b) == 0
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(bytes) }

    /// Hex of the 32 bytes.
    public var description: String { Hex.encode(bytes) }
}
