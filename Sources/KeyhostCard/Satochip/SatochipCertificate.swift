import KeyhostCrypto

/// The card's X.509 device certificate, as much of it as the authenticity check needs: the signed part, the
/// issuer's ECDSA-SHA256 signature over it, the subject's common name and the subject's secp256k1 public key.
public struct SatochipCertificate: Sendable {
    /// The whole certificate (DER).
    public let der: [UInt8]
    /// The tbsCertificate bytes the issuer signed.
    public let signedPart: [UInt8]
    public let signature: ECDSASignature
    public let subjectPublicKey: PublicKey
    /// The subject's common name (on a real card: SHA-1 of its CPLC, IIN and CIN in hex).
    public let subjectCommonName: String?

    static let maximumSize = 2048
    static let ecdsaWithSHA256: [UInt8] = [0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x04, 0x03, 0x02]
    static let ecPublicKey: [UInt8] = [0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01]
    static let secp256k1: [UInt8] = [0x2B, 0x81, 0x04, 0x00, 0x0A]
    static let commonName: [UInt8] = [0x55, 0x04, 0x03]

    /// Parses a DER certificate; anything it cannot walk is a `SatochipError.notGenuine` naming the problem.
    public init(der: [UInt8]) throws {
        guard der.count <= Self.maximumSize else { throw SatochipError.notGenuine("certificate of \(der.count) bytes, at most \(Self.maximumSize) expected") }
        do {
            var outer = DER.Reader(der[...])
            let certificate = try outer.next(DER.sequence, "certificate")
            guard outer.isAtEnd else { throw DERError("bytes after the certificate") }
            var parts = DER.Reader(certificate.value)
            let tbs = try parts.next(DER.sequence, "tbsCertificate")
            let algorithm = try parts.next(DER.sequence, "signature algorithm")
            var algorithmReader = DER.Reader(algorithm.value)
            guard Array(try algorithmReader.next(DER.objectIdentifier, "algorithm").value) == Self.ecdsaWithSHA256 else {
                throw DERError("the signature is not ecdsa-with-SHA256")
            }
            let signatureBits = try parts.next(DER.bitString, "signature")
            guard signatureBits.value.first == 0 else { throw DERError("signature bit string has unused bits") }
            let signature = try ECDSASignature(der: Array(signatureBits.value.dropFirst())).normalized()

            var fields = DER.Reader(tbs.value)
            var field = try fields.next()
            if field.tag == 0xA0 { field = try fields.next() }  // [0] version
            guard field.tag == DER.integer else { throw DERError("no serial number") }
            _ = try fields.next(DER.sequence, "tbs signature algorithm")
            _ = try fields.next(DER.sequence, "issuer")
            _ = try fields.next(DER.sequence, "validity")
            let subject = try fields.next(DER.sequence, "subject")
            let spki = try fields.next(DER.sequence, "subject public key info")

            var spkiReader = DER.Reader(spki.value)
            let keyAlgorithm = try spkiReader.next(DER.sequence, "key algorithm")
            var keyAlgorithmReader = DER.Reader(keyAlgorithm.value)
            guard Array(try keyAlgorithmReader.next(DER.objectIdentifier, "key type").value) == Self.ecPublicKey,
                  Array(try keyAlgorithmReader.next(DER.objectIdentifier, "curve").value) == Self.secp256k1 else {
                throw DERError("the subject key is not a secp256k1 EC key")
            }
            let keyBits = try spkiReader.next(DER.bitString, "subject public key")
            guard keyBits.value.first == 0 else { throw DERError("public key bit string has unused bits") }
            self.subjectPublicKey = try PublicKey(bytes: Array(keyBits.value.dropFirst()))
            self.subjectCommonName = try Self.commonName(in: subject.value)
            self.der = der
            self.signedPart = Array(tbs.encoded)
            self.signature = signature
        } catch let error as DERError {
            throw SatochipError.notGenuine("the device certificate is not readable X.509: \(error.description)")
        } catch let error as SatochipError {
            throw error
        } catch {
            throw SatochipError.notGenuine("the device certificate is not readable X.509: \(error)")
        }
    }

    static func commonName(in name: ArraySlice<UInt8>) throws -> String? {
        var sets = DER.Reader(name)
        while !sets.isAtEnd {
            var attributes = DER.Reader(try sets.next(DER.set, "name part").value)
            while !attributes.isAtEnd {
                var pair = DER.Reader(try attributes.next(DER.sequence, "attribute").value)
                let type = try pair.next(DER.objectIdentifier, "attribute type")
                let value = try pair.next()
                if Array(type.value) == commonName { return String(decoding: value.value, as: UTF8.self) }
            }
        }
        return nil
    }

    /// Whether `issuerKey` signed this certificate.
    public func isSigned(by issuerKey: PublicKey) -> Bool {
        (try? issuerKey.verify(signature, digest: Hash.sha256(signedPart))) == true
    }

    /// PEM text, as pysatochip prints it.
    public var pem: String {
        let body = Base64.encode(der)
        var lines: [String] = ["-----BEGIN CERTIFICATE-----"]
        var index = body.startIndex
        while index < body.endIndex {
            let end = body.index(index, offsetBy: 64, limitedBy: body.endIndex) ?? body.endIndex
            lines.append(String(body[index..<end]))
            index = end
        }
        lines.append("-----END CERTIFICATE-----")
        return lines.joined(separator: "\n")
    }
}
