import KeyhostCrypto

/// The card side Satochip shares with its sibling applets (SeedKeeper): INIT SECURE CHANNEL, the self-signed
/// authentikey answer, the device certificate export and the PKI challenge, answered the same way by both twins.
enum SoftSatochipFamilyCard {
    static func fail(_ sw: UInt16) -> CardStatus { CardStatus(StatusWord(sw)) }

    /// INIT SECURE CHANNEL: a fresh ephemeral key, `[32 | x | sig_size | self-signature | sig_size | authentikey
    /// signature]`, and the channel it opens.
    static func initSecureChannel(_ apdu: CommandAPDU, authentikey: PrivateKey, random: RandomSource) throws -> (channel: SoftSatochipChannel, answer: [UInt8]) {
        guard apdu.data.count >= 65 else { throw fail(0x6700) }
        guard apdu.data[0] == 0x04, let hostKey = try? PublicKey(bytes: Array(apdu.data.prefix(65))) else { throw fail(0x9C0F) }
        let ephemeral = random.privateKey()
        let shared = try ephemeral.sharedSecretX(with: hostKey)
        let channel = try SoftSatochipChannel(sharedX: shared.revealedBytes())
        var answer = [0x00, 0x20] + Array(ephemeral.publicKey.uncompressed[1..<33])
        let selfSig = try ephemeral.sign(digest: Hash.sha256(answer)).der
        answer += [0x00, UInt8(selfSig.count)] + selfSig
        let authSig = try authentikey.sign(digest: Hash.sha256(answer)).der
        return (channel, answer + [0x00, UInt8(authSig.count)] + authSig)
    }

    /// `[32 | authentikey x | sig_size | self-signature]`.
    static func authentikeyAnswer(_ key: PrivateKey) throws -> [UInt8] {
        let answer = [0x00, 0x20] + Array(key.publicKey.uncompressed[1..<33])
        let sig = try key.sign(digest: Hash.sha256(answer)).der
        return answer + [0x00, UInt8(sig.count)] + sig
    }

    /// EXPORT PKI CERTIFICATE: P2 01 the size, P2 02 a chunk `[offset(2) | size(2)]`.
    static func exportCertificate(_ apdu: CommandAPDU, certificate: [UInt8]) throws -> [UInt8] {
        let size = certificate.count
        switch apdu.p2 {
        case 0x01:
            return [UInt8(size >> 8), UInt8(size & 0xFF)]
        case 0x02:
            guard apdu.data.count >= 4 else { throw fail(0x6700) }
            let offset = Int(apdu.data[0]) << 8 | Int(apdu.data[1])
            let chunk = Int(apdu.data[2]) << 8 | Int(apdu.data[3])
            guard offset < size, offset + chunk <= size, chunk <= 255 else { throw fail(0x6700) }
            return Array(certificate[offset..<(offset + chunk)])
        default:
            throw fail(0x9C11)
        }
    }

    /// CHALLENGE RESPONSE PKI: the card's challenge and its signature of "Challenge:" ‖ card ‖ host challenge.
    static func challengeResponse(_ apdu: CommandAPDU, authentikey: PrivateKey, random: RandomSource) throws -> [UInt8] {
        guard apdu.data.count >= 32 else { throw fail(0x6700) }
        let cardChallenge = random.bytes(32)
        let signed = Array("Challenge:".utf8) + cardChallenge + Array(apdu.data.prefix(32))
        let sig = try authentikey.sign(digest: Hash.sha256(signed)).der
        return cardChallenge + [0x00, UInt8(sig.count)] + sig
    }
}
