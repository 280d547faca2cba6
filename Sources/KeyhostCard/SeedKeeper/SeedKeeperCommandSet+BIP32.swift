import KeyhostCrypto

extension SeedKeeperCommandSet {
    /// BIP32 GET EXTENDED KEY (SeedKeeper 0.2; needs the PIN and plain export rights on the seed): the public key
    /// and chain code at `path` below the master seed secret `seedID`, proven by the derived key's signature and
    /// by the authentikey's. The card counts each derivation in the secret's export counter.
    public func extendedKey(seedID: UInt16, at path: DerivationPath) throws -> SatochipExtendedKey {
        guard path.depth <= Satochip.maxDepth else {
            throw SeedKeeperError.invalidArgument("the card derives at most \(Satochip.maxDepth) levels, \(path) has \(path.depth)")
        }
        let authentikey = try session.authentikey ?? session.getAuthentikey()
        var data: [UInt8] = []
        for index in path.indexes {
            data += [UInt8(truncatingIfNeeded: index >> 24), UInt8(truncatingIfNeeded: index >> 16),
                     UInt8(truncatingIfNeeded: index >> 8), UInt8(truncatingIfNeeded: index)]
        }
        data += [UInt8(seedID >> 8), UInt8(seedID & 0xFF)]
        let answer = try send(.getExtendedKey, p1: UInt8(path.depth), p2: 0x00, data: data, id: seedID)
        var reader = SatochipAnswerReader(answer, instruction: .getExtendedKey)
        let chainCode = try reader.take(32, "chain code")
        let x = try reader.coordinateX()
        let selfSig = try reader.signature()
        let key = try reader.recoverKey(x: x, signature: selfSig.signature, signed: selfSig.signed)
        let authSig = try reader.signature()
        try reader.requireSigned(by: authentikey, signature: authSig.signature, signed: authSig.signed, "the derived key")
        guard reader.remaining == 0 else {
            throw SeedKeeperError.invalidResponse(.getExtendedKey, "\(reader.remaining) bytes after the signatures")
        }
        return SatochipExtendedKey(publicKey: key, chainCode: chainCode)
    }
}
