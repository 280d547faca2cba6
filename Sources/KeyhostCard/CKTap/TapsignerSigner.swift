import KeyhostCrypto

/// A TAPSIGNER as a `CardSigner`: `derive` to a path's hardened prefix (proven by the card's signature), then its
/// unhardened levels: public keys derived here from the card's key and chain code, signatures by `sign` with them as
/// the subpath (at most 2). Every signature is checked against the key expected at the path. Holds the CVC it
/// was given for the session; `close` drops it.
public final class TapsignerSigner: CardSigner {
    public let card: CKTapCommandSet
    private var cvc: SecretBytes?
    /// The card's key and chain code at the path it derived to in this session (`derive` changes it on the card).
    private var derivedNode: (path: [UInt32], node: HDNode)?
    private var masterNode: HDNode?
    /// The card's derivation when opened: `close` puts it back, so other wallets find the card where they left it.
    private let openedPath: [UInt32]?

    /// `card` selected (its status known); `cvc` is needed for every key and signature.
    public init(card: CKTapCommandSet, cvc: SecretBytes) {
        self.card = card
        self.cvc = cvc
        self.openedPath = card.status?.path
    }

    public var profile: CardSignerProfile {
        CardSignerProfile(family: "TAPSIGNER", version: card.status?.version ?? "", abilities: [.extendedKeys, .masterExtendedKey, .ecdsa])
    }

    /// Refuses Schnorr signatures, paths no `derive` + subpath reaches, and a card not set up: nothing is sent.
    public func check(_ operation: CardSignerOperation, path: [UInt32]) throws {
        if operation == .signSchnorr {
            throw CardSignerError.unsupported(profile, operation, instead: "it signs with ECDSA (segwit v0 and legacy inputs, messages); "
                                              + "sign taproot inputs with a Keycard 4.x or the mnemonic")
        }
        let split = try TapsignerPath(path)
        if operation == .signECDSA { try split.checkSignable(path) }
        if let status = card.status, status.path == nil {
            throw CardSignerError(kind: "no_key", "the TAPSIGNER is blank: it has no key until it is set up (keyhost card tapsigner setup)")
        }
    }

    public func publicKey(at path: [UInt32]) throws -> PublicKey {
        try node(at: path, operation: .publicKey).publicKey.compressed(true)
    }

    public func extendedKey(at path: [UInt32]) throws -> CardExtendedPublicKey {
        let node = try node(at: path, operation: .extendedKey)
        return CardExtendedPublicKey(publicKey: node.publicKey, chainCode: node.chainCode)
    }

    public func signECDSA(digest: [UInt8], at path: [UInt32]) throws -> CardECDSASignature {
        try check(.signECDSA, path: path)
        let split = try TapsignerPath(path)
        let expected = try node(at: path, operation: .signECDSA).publicKey.compressed(true)
        let signed = try card.sign(digest: digest, subpath: split.below, cvc: try secret())
        guard signed.publicKey.compressed == expected.compressed else {
            throw CardSignerError.wrongKey(profile, path: path, expected: expected.compressed, got: signed.publicKey.compressed)
        }
        guard let recoverable = RecoverableSignature(signed.signature, digest: digest, key: expected) else {
            throw CardSignerError.invalidResponse(profile, "no recovery id of the signature gives the key at \(CardSignerError.pathText(path))")
        }
        return CardECDSASignature(signature: recoverable, publicKey: expected)
    }

    public func signSchnorr(digest: [UInt8], at path: [UInt32], taproot: TaprootSpend?) throws -> CardSchnorrSignature {
        try check(.signSchnorr, path: path)
        throw CardSignerError.unsupported(profile, .signSchnorr, instead: "it signs with ECDSA")
    }

    /// Derives the card back to the path it had when opened (if this session moved it), then forgets the CVC;
    /// later calls that need the card fail `no_secret`.
    public func close() {
        if let openedPath, let cvc, let moved = derivedNode?.path, moved != openedPath {
            _ = try? card.derive(path: openedPath, cvc: cvc)
        }
        cvc = nil
    }

    /// The extended public key at `path`: the master from `xpub`, else the derived key (one `derive` per new
    /// hardened prefix) and its unhardened children computed here.
    private func node(at path: [UInt32], operation: CardSignerOperation) throws -> HDNode {
        try check(operation, path: path)
        let split = try TapsignerPath(path)
        if split.derived.isEmpty {
            if masterNode == nil { masterNode = try card.xpub(master: true, cvc: try secret()) }
            guard let master = masterNode else { throw CardSignerError.invalidResponse(profile, "no master key") }
            return try derive(master, split.below, path)
        }
        if derivedNode?.path != split.derived {
            let derivation = try card.derive(path: split.derived, cvc: try secret())
            let parentFingerprint: UInt32 = 0  // not known from `derive`; only the key and chain code matter here
            guard let node = HDNode(publicKey: derivation.publicKey, chainCode: derivation.chainCode, depth: split.derived.count,
                                    parentFingerprint: parentFingerprint, childNumber: split.derived.last ?? 0) else {
                throw CardSignerError.invalidResponse(profile, "the derived key and chain code are no extended key")
            }
            derivedNode = (split.derived, node)
        }
        guard let base = derivedNode?.node else { throw CardSignerError.invalidResponse(profile, "no derived key") }
        return try derive(base, split.below, path)
    }

    private func derive(_ base: HDNode, _ below: [UInt32], _ path: [UInt32]) throws -> HDNode {
        var node = base
        for index in below {
            guard let child = try? node.derive(child: index) else {
                throw CardSignerError.invalidResponse(profile, "no key at \(CardSignerError.pathText(path)) (an invalid child; try the next index)")
            }
            node = child
        }
        return node
    }

    private func secret() throws -> SecretBytes {
        guard let cvc else { throw CardSignerError(kind: "no_secret", "the TAPSIGNER session is closed; open the card again with its CVC") }
        return cvc
    }
}
