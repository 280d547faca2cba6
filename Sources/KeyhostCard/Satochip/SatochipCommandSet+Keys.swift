import KeyhostCrypto

/// A key GET EXTENDED KEY returned: its public key and chain code, both proven by the card's signatures.
public struct SatochipExtendedKey: Equatable, Sendable {
    public let publicKey: PublicKey
    public let chainCode: [UInt8]
}

extension SatochipCommandSet {
    /// The authentikey from a `[coordx | self-signature]` answer.
    func parseAuthentikey(_ data: [UInt8], _ ins: SatochipInstruction) throws -> PublicKey {
        var reader = SatochipAnswerReader(data, instruction: ins)
        let x = try reader.coordinateX()
        let sig = try reader.signature()
        let key = try reader.recoverKey(x: x, signature: sig.signature, signed: sig.signed)
        authentikey = key
        return key
    }

    /// BIP32 IMPORT SEED (16...64 bytes; needs the PIN). Returns the card's authentikey.
    @discardableResult
    public func importSeed(_ seed: SecretBytes) throws -> PublicKey {
        guard (16...64).contains(seed.count) else {
            throw SatochipError.invalidArgument("a BIP32 seed is 16 to 64 bytes, this one has \(seed.count)")
        }
        let key = try parseAuthentikey(try send(.importSeed, p1: UInt8(seed.count), data: seed.revealedBytes()), .importSeed)
        status?.isSeeded = true
        return key
    }

    /// BIP32 RESET SEED: takes the PIN itself and logs it out.
    public func resetSeed(pin: SecretBytes) throws {
        try Self.checkPIN(pin, "PIN")
        try send(.resetSeed, p1: UInt8(pin.count), data: pin.revealedBytes())
        status?.isSeeded = false
        loadedKey = nil
    }

    /// BIP32 GET AUTHENTIKEY (needs the PIN and a seed).
    @discardableResult
    public func getAuthentikey() throws -> PublicKey {
        try parseAuthentikey(try send(.getAuthentikey), .getAuthentikey)
    }

    /// BIP32 GET EXTENDED KEY at an absolute path (at most 10 levels); the key stays loaded for SIGN with key FF.
    public func extendedKey(at path: DerivationPath) throws -> SatochipExtendedKey {
        guard path.depth <= Satochip.maxDepth else {
            throw SatochipError.invalidArgument("the card derives at most \(Satochip.maxDepth) levels, \(path) has \(path.depth)")
        }
        let authentikey = try self.authentikey ?? getAuthentikey()
        var data: [UInt8] = []
        for index in path.indexes {
            data += [UInt8(truncatingIfNeeded: index >> 24), UInt8(truncatingIfNeeded: index >> 16),
                     UInt8(truncatingIfNeeded: index >> 8), UInt8(truncatingIfNeeded: index)]
        }
        let answer = try send(.getExtendedKey, p1: UInt8(path.depth), p2: 0x40, data: data)
        var reader = SatochipAnswerReader(answer, instruction: .getExtendedKey)
        let chainCode = try reader.take(32, "chain code")
        // Bit 7 of the length's high byte is the applet's "slow derivation" hint, not part of the length.
        guard reader.remaining >= 2 else { throw SatochipError.invalidResponse(.getExtendedKey, "no public key after the chain code") }
        let sizeBytes = try reader.take(2, "public key x length")
        guard (Int(sizeBytes[0] & 0x7F) << 8 | Int(sizeBytes[1])) == 32 else {
            throw SatochipError.invalidResponse(.getExtendedKey, "public key x is not 32 bytes")
        }
        let x = try reader.take(32, "public key x")
        let selfSig = try reader.signature()
        let key = try reader.recoverKey(x: x, signature: selfSig.signature, signed: selfSig.signed)
        let authSig = try reader.signature()
        try reader.requireSigned(by: authentikey, signature: authSig.signature, signed: authSig.signed, "the derived key")
        loadedKey = key
        return SatochipExtendedKey(publicKey: key, chainCode: chainCode)
    }

    /// The BIP32 extended public key at `path`, with depth, parent fingerprint and child number set
    /// (the parent fingerprint takes a second derivation, of the parent; the key at `path` is loaded last).
    public func extendedPublicKey(at path: DerivationPath) throws -> HDNode {
        var parentFingerprint: UInt32 = 0
        if !path.indexes.isEmpty {
            parentFingerprint = try extendedKey(at: try DerivationPath(indexes: Array(path.indexes.dropLast()))).publicKey.fingerprint
        }
        let key = try extendedKey(at: path)
        guard let node = HDNode(publicKey: key.publicKey, chainCode: key.chainCode, depth: path.depth,
                                parentFingerprint: parentFingerprint, childNumber: path.indexes.last ?? 0) else {
            throw SatochipError.invalidResponse(.getExtendedKey, "the card's key does not make a BIP32 node")
        }
        return node
    }

    /// SIGN TRANSACTION HASH of a 32-byte hash with the loaded BIP32 key (key FF); the signature is checked against
    /// that key and returned low-S.
    public func signHash(_ hash: [UInt8]) throws -> ECDSASignature {
        guard hash.count == 32 else { throw SatochipError.invalidArgument("a hash to sign is 32 bytes, this one has \(hash.count)") }
        guard let key = loadedKey else {
            throw SatochipError.invalidArgument("no BIP32 key is loaded; derive one first (extendedKey(at:))")
        }
        let der = try send(.signTransactionHash, p1: 0xFF, data: hash)
        guard der.count <= 72, let signature = try? ECDSASignature(der: der).normalized() else {
            throw SatochipError.invalidResponse(.signTransactionHash, "the signature is not DER ECDSA")
        }
        guard (try? key.verify(signature, digest: hash)) == true else {
            throw SatochipError.invalidResponse(.signTransactionHash, "the signature does not verify under the loaded key")
        }
        return signature
    }

    /// The signature of `hash` by the key at `path`, in the recoverable (compact + recovery id) form.
    public func signHashRecoverable(_ hash: [UInt8], at path: DerivationPath) throws -> RecoverableSignature {
        let key = try extendedKey(at: path).publicKey
        let signature = try signHash(hash)
        guard let recoverable = RecoverableSignature(signature, digest: hash, key: key) else {
            throw SatochipError.invalidResponse(.signTransactionHash, "no recovery id gives the signing key")
        }
        return recoverable
    }

    /// A Bitcoin signed message ("Bitcoin Signed Message:\n" header, double SHA-256) by the key at `path`, as
    /// pysatochip does it on applets where SIGN MESSAGE is deprecated: the hash is signed with SIGN TRANSACTION HASH.
    public func signMessage(_ message: [UInt8], at path: DerivationPath) throws -> RecoverableSignature {
        try signHashRecoverable(BitcoinMessage.hash(message), at: path)
    }
}
