import KeyhostCrypto

extension SeedKeeperCommandSet {
    /// IMPORT SECRET in plain (through the secure channel; needs the PIN). The card stores `secret` under a new id
    /// with the header given; returns the id and the fingerprint, checked against SHA-256 of `secret` as pysatochip
    /// checks it. On a mismatch the secret is on the card already: `.fingerprintMismatch` names its id.
    @discardableResult
    public func importSecret(_ secret: SecretBytes, type: SeedKeeperSecretType, subtype: UInt8 = 0,
                             exportRights: SeedKeeperExportRights, label: String) throws -> (id: UInt16, fingerprint: [UInt8]) {
        let labelBytes = try Self.checkLabel(label)
        guard secret.count <= 2048 else {
            throw SeedKeeperError.invalidArgument("a secret is at most 2048 bytes here, this one has \(secret.count)")
        }
        let bytes = secret.revealedBytes()
        let padded = bytes.count + 16 - bytes.count % 16  // PKCS#7, as the card stores it
        // Header without its id: type, origin (the card sets it), export, 3 counters, fingerprint (the card computes it), subtype, RFU.
        var header: [UInt8] = [type.rawValue, 0x00, exportRights.rawValue, 0, 0, 0, 0, 0, 0, 0, subtype, 0x00]
        header += [UInt8(labelBytes.count)] + labelBytes
        try send(.importSecret, p1: 0x01, p2: SeedKeeper.opInit, data: header + [UInt8(padded >> 8), UInt8(padded & 0xFF)])
        var offset = 0
        while bytes.count - offset > SeedKeeper.chunkSize {
            let chunk = Array(bytes[offset..<(offset + SeedKeeper.chunkSize)])
            try send(.importSecret, p1: 0x01, p2: SeedKeeper.opProcess, data: [UInt8(chunk.count >> 8), UInt8(chunk.count & 0xFF)] + chunk)
            offset += SeedKeeper.chunkSize
        }
        let last = Array(bytes[offset...])
        let answer = try send(.importSecret, p1: 0x01, p2: SeedKeeper.opFinal, data: [UInt8(last.count >> 8), UInt8(last.count & 0xFF)] + last)
        guard answer.count == 6 else { throw SeedKeeperError.invalidResponse(.importSecret, "\(answer.count) bytes, 6 expected") }
        let id = UInt16(answer[0]) << 8 | UInt16(answer[1])
        let fingerprint = Array(answer[2..<6])
        let expected = SeedKeeperSecretHeader.fingerprint(of: secret)
        guard fingerprint == expected else {
            throw SeedKeeperError.fingerprintMismatch(id: id, expected: Hex.encode(fingerprint), actual: Hex.encode(expected))
        }
        return (id, fingerprint)
    }

    /// EXPORT SECRET in plain (needs the PIN and plain export rights): the header and the secret, whose bytes must
    /// hash to the header's fingerprint and be signed (with the header) by the card's authentikey.
    public func exportSecret(id: UInt16) throws -> SeedKeeperSecret {
        let authentikey = try session.authentikey ?? session.getAuthentikey()
        let idBytes: [UInt8] = [UInt8(id >> 8), UInt8(id & 0xFF)]
        let first = try send(.exportSecret, p1: 0x01, p2: SeedKeeper.opInit, data: idBytes, id: id)
        let header = try SeedKeeperSecretHeader(parsing: first, instruction: .exportSecret, exact: true)
        guard header.id == id else {
            throw SeedKeeperError.invalidResponse(.exportSecret, "the card answered the header of secret \(header.id) for secret \(id)")
        }
        var secret: [UInt8] = []
        while true {
            let data = try send(.exportSecret, p1: 0x01, p2: SeedKeeper.opProcess, data: idBytes, id: id)
            guard data.count >= 2 else { throw SeedKeeperError.invalidResponse(.exportSecret, "chunk of \(data.count) bytes") }
            let size = Int(data[0]) << 8 | Int(data[1])
            guard size <= data.count - 2, secret.count + size <= Self.maxSecretSize else {
                throw SeedKeeperError.invalidResponse(.exportSecret, "chunk announces \(size) bytes, \(data.count - 2) answered")
            }
            secret += data[2..<(2 + size)]
            let rest = Array(data[(2 + size)...])
            if rest.isEmpty {
                guard size > 0 else { throw SeedKeeperError.invalidResponse(.exportSecret, "empty chunk without a signature") }
                continue
            }
            guard rest.count >= 2 else { throw SeedKeeperError.invalidResponse(.exportSecret, "signature size cut short") }
            let sigSize = Int(rest[0]) << 8 | Int(rest[1])
            guard sigSize == rest.count - 2, (8...72).contains(sigSize),
                  let signature = try? ECDSASignature(der: Array(rest[2...])).normalized() else {
                throw SeedKeeperError.invalidResponse(.exportSecret, "the last chunk's signature is not a DER ECDSA signature of its announced size")
            }
            guard (try? authentikey.verify(signature, digest: Hash.sha256(header.bytes + secret))) == true else {
                throw SeedKeeperError.invalidResponse(.exportSecret, "the exported secret is not signed by the card's authentikey")
            }
            break
        }
        let exported = SecretBytes(secret)
        let actual = SeedKeeperSecretHeader.fingerprint(of: exported)
        guard actual == header.fingerprint else {
            throw SeedKeeperError.fingerprintMismatch(id: id, expected: header.fingerprintHex, actual: Hex.encode(actual))
        }
        return SeedKeeperSecret(header: header, secret: exported)
    }
}
