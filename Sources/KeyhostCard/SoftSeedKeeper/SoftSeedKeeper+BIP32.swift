import KeyhostCrypto

/// BIP32 GET EXTENDED KEY from a master seed secret, as SeedKeeper 0.2 answers it.
extension SoftSeedKeeper {
    /// P1 depth, P2 options (02: the private key, 04: BIP85 entropy), data `[path(4·depth) | sid(2)]`. Answers a
    /// 66-byte body (chain code, 0020, x coordinate or private key; or 0040 and BIP85 entropy) signed by the
    /// derived key, then everything signed by the authentikey. Like the applet, the log keeps the record it
    /// opened (result 0000) on success, and the secret's export counter counts the derivations.
    func getExtendedKey(_ apdu: CommandAPDU) throws -> [UInt8] {
        try requirePIN()
        let depth = Int(Int8(bitPattern: apdu.p1))
        guard (0...Satochip.maxDepth).contains(depth) else { throw fail(0x9C10) }
        guard apdu.data.count >= 4 * depth + 2 else { throw fail(0x9C0F) }
        log(apdu.ins, 0x0000)
        let sid = Int(apdu.data[4 * depth]) << 8 | Int(apdu.data[4 * depth + 1])
        guard let slot = index(of: sid) else { updateLog(apdu.ins, sid, -1, 0x9C08); throw fail(0x9C08) }
        guard state.secrets[slot].header[0] == SeedKeeperSecretType.masterSeed.rawValue else { updateLog(apdu.ins, sid, -1, 0x9C38); throw fail(0x9C38) }
        guard state.secrets[slot].header[2] & 0x03 == 0x01 else { updateLog(apdu.ins, sid, -1, 0x9C31); throw fail(0x9C31) }
        state.secrets[slot].header[5] &+= 1
        let stored = state.secrets[slot].secret
        guard let size = stored.first.map(Int.init), size + 1 <= stored.count else { throw fail(0x9CFF) }
        let node = Hash.hmacSHA512(key: Array("Bitcoin seed".utf8), data: Array(stored[1..<(1 + size)]))
        var indexes: [UInt32] = []
        for level in 0..<depth {
            indexes.append(apdu.data[(4 * level)..<(4 * level + 4)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
        }
        guard let master = try? PrivateKey(bytes: Array(node[0..<32])),
              let derived = try? BIP32.derive(BIP32.Node(key: master, chainCode: Array(node[32..<64])), indexes) else {
            updateLog(apdu.ins, sid, -1, 0x9C0E)
            throw fail(0x9C0E)
        }
        let key = derived.key
        let body: [UInt8]
        if apdu.p2 & 0x04 == 0x04 {
            body = [0x00, 0x40] + Hash.hmacSHA512(key: Array("bip-entropy-from-k".utf8), data: key.revealedBytes())
        } else if apdu.p2 & 0x02 == 0x02 {
            body = derived.chainCode + [0x00, 0x20] + key.revealedBytes()
        } else {
            body = derived.chainCode + [0x00, 0x20] + Array(key.publicKey.uncompressed[1..<33])
        }
        let selfSig = try key.sign(digest: Hash.sha256(body)).der
        let signed = body + [0x00, UInt8(selfSig.count)] + selfSig
        let authSig = try authentikeyPrivate().sign(digest: Hash.sha256(signed)).der
        return signed + [0x00, UInt8(authSig.count)] + authSig
    }
}
