import KeyhostCrypto

/// Issues the soft card's X.509 device certificate: the authentikey, named by the card's serial (SHA-1 of its CPLC
/// answer, in hex, as pysatochip compares it), signed ECDSA-SHA256 by a CA key. SoftSeedKeeper issues its own with it.
enum SoftSatochipCertificate {
    static func issue(deviceKey: PublicKey, serial: String, caKey: PrivateKey, serialNumber: [UInt8],
                      issuerName: String = "keyhost soft Satochip test CA") throws -> [UInt8] {
        let algorithm = DER.tlv(DER.sequence, DER.tlv(DER.objectIdentifier, SatochipCertificate.ecdsaWithSHA256))
        func name(_ commonName: String) -> [UInt8] {
            let attribute = DER.tlv(DER.sequence, DER.tlv(DER.objectIdentifier, SatochipCertificate.commonName)
                                    + DER.tlv(DER.utf8String, Array(commonName.utf8)))
            return DER.tlv(DER.sequence, DER.tlv(DER.set, attribute))
        }
        let validity = DER.tlv(DER.sequence, DER.tlv(DER.utcTime, Array("250101000000Z".utf8))
                               + DER.tlv(DER.utcTime, Array("491231235959Z".utf8)))
        let keyAlgorithm = DER.tlv(DER.sequence, DER.tlv(DER.objectIdentifier, SatochipCertificate.ecPublicKey)
                                   + DER.tlv(DER.objectIdentifier, SatochipCertificate.secp256k1))
        let spki = DER.tlv(DER.sequence, keyAlgorithm + DER.tlv(DER.bitString, [0x00] + deviceKey.uncompressed))
        let version = [0xA0] + DER.length(3) + DER.tlv(DER.integer, [0x02])
        let tbs = DER.tlv(DER.sequence, version + DER.unsignedInteger(serialNumber) + algorithm
                          + name(issuerName) + validity + name(serial) + spki)
        let signature = try caKey.sign(digest: Hash.sha256(tbs))
        return DER.tlv(DER.sequence, tbs + algorithm + DER.tlv(DER.bitString, [0x00] + signature.der))
    }
}
