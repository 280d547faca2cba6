import KeyhostCrypto

/// An ECDSA signature from SIGN, with the signing public key and the recovery id.
///
/// The card answers either the legacy template `A0 { 80 public key, 30 DER(r, s) }` (v is then found by
/// recovery) or `80` with 65 bytes r ‖ s ‖ v (the public key is then recovered). s is always made low.
public struct KeycardSignature: Equatable, Sendable {
    public let publicKey: PublicKey
    public let signature: RecoverableSignature
    public let digest: [UInt8]

    public init(response: [UInt8], digest: [UInt8]) throws {
        let fail = { (why: String) in KeycardError.invalidResponse(.sign, why) }
        let top: [TLV]
        do { top = try TLV.parseAll(response) } catch { throw fail("\(error)") }
        self.digest = digest
        if let template = top.first(tag: 0xA0) {
            let fields: [TLV]
            do { fields = try template.children() } catch { throw fail("\(error)") }
            guard let pub = fields.first(tag: 0x80)?.value, let key = try? PublicKey(bytes: pub) else { throw fail("no public key (tag 80)") }
            guard let der = fields.first(tag: 0x30) else { throw fail("no ECDSA signature (tag 30)") }
            let sig: ECDSASignature
            do { sig = try ECDSASignature(der: der.encoded()).normalized() } catch { throw fail("signature: \(error)") }
            guard let recoverable = RecoverableSignature(sig, digest: digest, key: key) else {
                throw fail("signature does not recover to the returned public key")
            }
            publicKey = key
            signature = recoverable
            return
        }
        if let raw = top.first(tag: 0x80)?.value {
            guard raw.count == 65 else { throw fail("raw signature of \(raw.count) bytes; expected 65 (r ‖ s ‖ v)") }
            do {
                var sig = try RecoverableSignature(rsv: raw)
                let ecdsa = sig.signature
                if !ecdsa.isLowS {
                    // n - s flips the parity of R's y as seen by recovery.
                    sig = try RecoverableSignature(compact: ecdsa.normalized().compact, recoveryID: sig.recoveryID ^ 1)
                }
                publicKey = try sig.recoverPublicKey(digest: digest)
                signature = sig
            } catch { throw fail("raw signature: \(error)") }
            return
        }
        throw fail("neither a signature template (A0) nor a raw signature (80)")
    }

    /// Whether the signature verifies against the returned public key.
    public var isValid: Bool { (try? publicKey.verify(signature.signature, digest: digest)) ?? false }
}

/// A BIP340 signature from SIGN with P2 = Schnorr (4.x): R.x ‖ s, and the untweaked public key.
public struct KeycardSchnorrSignature: Equatable, Sendable {
    public let publicKey: PublicKey
    public let signature: [UInt8]

    public init(response: [UInt8]) throws {
        do {
            guard let template = try TLV.parseAll(response).first(tag: 0xA0) else { throw TLVError.missingTag(0xA0, in: "SIGN answer") }
            let fields = try template.children()
            guard let pub = fields.first(tag: 0x80)?.value else { throw TLVError.missingTag(0x80, in: "SIGN template") }
            guard let raw = fields.first(tag: 0x88)?.value, raw.count == 64 else { throw TLVError.missingTag(0x88, in: "SIGN template") }
            publicKey = try PublicKey(bytes: pub)
            signature = raw
        } catch let error as KeycardError {
            throw error
        } catch {
            throw KeycardError.invalidResponse(.sign, "\(error)")
        }
    }
}
