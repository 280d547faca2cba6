import KeyhostCrypto

/// What the authenticity check established.
public struct SatochipAuthenticity: Sendable {
    public let certificate: SatochipCertificate
    /// The CA key (one of those given) that signed the device certificate.
    public let issuer: PublicKey
    /// The device key the certificate names and the card proved it holds.
    public let deviceKey: PublicKey
}

extension SatochipCommandSet {
    /// The card's serial as Satochip's PKI names it: SHA-1 (hex) of what GET DATA answers for the CPLC (9F7F), IIN
    /// (42) and CIN (45), sent before SELECT so the card manager answers, as pysatochip does on insertion.
    public func readSerial() throws -> String {
        var collected: [UInt8] = []
        for (p1, p2): (UInt8, UInt8) in [(0x9F, 0x7F), (0x00, 0x42), (0x00, 0x45)] {
            let response = try channel.transmit(CommandAPDU(cla: 0x80, ins: 0xCA, p1: p1, p2: p2))
            guard response.data.count <= 256 else {
                throw SatochipError.invalidResponse(.select, "GET DATA answered \(response.data.count) bytes")
            }
            collected += response.data  // a missing object answers an error and no data, as pysatochip counts it
        }
        do { return Hex.encode(try SatochipCrypto.sha1(collected)) } catch {
            throw SatochipError.invalidResponse(.select, "SHA-1 of the card's identity failed: \(error)")
        }
    }

    /// EXPORT PKI CERTIFICATE (needs the PIN): the device certificate in DER, read in chunks of 128 bytes.
    public func cardCertificate() throws -> [UInt8] {
        let sizeBytes = try send(.exportPKICertificate, p2: 0x01)
        guard sizeBytes.count == 2 else { throw SatochipError.invalidResponse(.exportPKICertificate, "size of \(sizeBytes.count) bytes, 2 expected") }
        let size = Int(sizeBytes[0]) << 8 | Int(sizeBytes[1])
        guard size > 0 else { throw SatochipError.notGenuine("the card has no device certificate (it was never personalised)") }
        guard size <= SatochipCertificate.maximumSize else {
            throw SatochipError.invalidResponse(.exportPKICertificate, "certificate of \(size) bytes, at most \(SatochipCertificate.maximumSize) expected")
        }
        var certificate: [UInt8] = []
        while certificate.count < size {
            let chunk = min(128, size - certificate.count)
            let offset = certificate.count
            let data = try send(.exportPKICertificate, p2: 0x02,
                                data: [UInt8(offset >> 8), UInt8(offset & 0xFF), 0x00, UInt8(chunk)])
            guard data.count == chunk else {
                throw SatochipError.invalidResponse(.exportPKICertificate, "chunk of \(data.count) bytes, \(chunk) asked")
            }
            certificate += data
        }
        return certificate
    }

    /// CHALLENGE RESPONSE PKI (needs the PIN): whether the card signs "Challenge:" ‖ its nonce ‖ our nonce with `key`.
    public func proves(_ key: PublicKey) throws -> Bool {
        let hostChallenge = random.bytes(32)
        var reader = SatochipAnswerReader(try send(.challengeResponsePKI, data: hostChallenge), instruction: .challengeResponsePKI)
        let cardChallenge = try reader.take(32, "card challenge")
        let size = try reader.length("signature", max: 72)
        let der = try reader.take(size, "signature")
        guard let signature = try? ECDSASignature(der: der).normalized() else {
            throw SatochipError.invalidResponse(.challengeResponsePKI, "the signature is not DER ECDSA")
        }
        let signed = Array("Challenge:".utf8) + cardChallenge + hostChallenge
        return (try? key.verify(signature, digest: Hash.sha256(signed))) == true
    }

    /// The authenticity check (needs the PIN): the device certificate must be signed by one of `caKeys`, name
    /// `serial` when given (see `readSerial()`), and the card must prove it holds the certificate's key.
    /// Throws `SatochipError.notGenuine` saying what failed.
    public func verifyAuthenticity(caKeys: [PublicKey], serial: String? = nil) throws -> SatochipAuthenticity {
        let certificate = try SatochipCertificate(der: try cardCertificate())
        if let serial, certificate.subjectCommonName?.lowercased() != serial.lowercased() {
            throw SatochipError.notGenuine("the device certificate names \(certificate.subjectCommonName ?? "no serial"), the card is \(serial)")
        }
        guard let issuer = caKeys.first(where: { certificate.isSigned(by: $0) }) else {
            throw SatochipError.notGenuine("the device certificate is not signed by any of the \(caKeys.count) trusted CA keys")
        }
        guard try proves(certificate.subjectPublicKey) else {
            throw SatochipError.notGenuine("the card cannot sign with the key its certificate names (challenge-response failed)")
        }
        return SatochipAuthenticity(certificate: certificate, issuer: issuer, deviceKey: certificate.subjectPublicKey)
    }
}
