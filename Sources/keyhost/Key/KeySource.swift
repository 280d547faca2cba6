import KeyhostServices
import KeyhostCard
import KeyhostCrypto

/// The keys of one `keyhost key` command, opened: a seed's master node, an extended public key, or a card
/// ready to sign (any family, through its `CardSigner`). Each operation asks the card as little as it can (one
/// extended export of the parent for a run of addresses).
final class KeySource {
    enum Backing {
        case seed(HDNode)
        case xpub(HDNode)
        case card(SigningCard)
    }

    let backing: Backing

    private init(_ backing: Backing) { self.backing = backing }

    /// Opens the source the options name (the mnemonic is read and checked here, the card's PIN verified).
    static func open(_ options: KeySourceOptions) throws -> KeySource {
        switch options.kind {
        case .xpub:
            guard let parsed = try options.parsedXpub() else { throw Failure.kind("invalid_argument", "--xpub is missing") }
            return KeySource(.xpub(parsed.node))
        case .card, .mnemonic:
            switch try options.signing.open(alternatives: "; or use --xpub KEY or --card") {
            case .seed(let master): return KeySource(.seed(master))
            case .card(let connection): return KeySource(.card(connection))
            }
        }
    }

    /// Drops the card's secure channel; the seed's memory is wiped when the node goes.
    func close() {
        if case .card(let connection) = backing { connection.close() }
    }

    /// The public keys at `parent/child` for each child (the parent itself when `children` is empty).
    func publicKeys(parent: DerivationPath, children: [UInt32]) throws -> [PublicKey] {
        switch backing {
        case .seed(let node), .xpub(let node):
            let base = try node.derive(parent)
            if children.isEmpty { return [base.publicKey] }
            return try children.map { try base.derive(child: $0).publicKey }
        case .card(let connection):
            let signer = connection.signer
            // One extended export of the parent serves every unhardened child, except at m, whose chain code not
            // every card gives (no Keycard does: see KeycardCommandSet.exportsMaster); there each key is exported by itself.
            let masterChainCode = signer.profile.abilities.contains(.masterExtendedKey)
            if children.count > 1 && (parent.depth > 0 || masterChainCode) && children.allSatisfy({ $0 < DerivationPath.hardenedOffset }) {
                let base = try cardNode(signer, at: parent, withFingerprint: false)
                return try children.map { try base.derive(child: $0).publicKey }
            }
            let paths = children.isEmpty ? [parent] : try children.map { try parent.appending(DerivationPath(indexes: [$0], absolute: false)) }
            return try paths.map { try CardExtendedKey.exportedKey(signer, components: $0.indexes) }
        }
    }

    /// The public node (key, chain code, depth, parent fingerprint) at `path`.
    func extendedPublicNode(at path: DerivationPath) throws -> HDNode {
        switch backing {
        case .seed(let node), .xpub(let node):
            return try node.derive(path).neutered()
        case .card(let connection):
            // The card's refusals (the master's xpub is `unsupported`) keep the kinds `keyhost card export-key` gives them.
            return try connection.frontEnd.mapping("EXPORT KEY") { try cardNode(connection.signer, at: path, withFingerprint: true) }
        }
    }

    /// The master key's fingerprint (for key origins such as [d34db33f/84'/0'/0']), when the source knows the master.
    func masterFingerprint() throws -> UInt32? {
        switch backing {
        case .seed(let node): return node.fingerprint
        case .xpub(let node): return node.depth == 0 ? node.fingerprint : nil
        case .card(let connection):
            return try CardExtendedKey.exportedKey(connection.signer, components: []).fingerprint
        }
    }

    /// A signature over a 32-byte digest by the key at `path` (from the master), and that key.
    func sign(digest: [UInt8], at path: DerivationPath) throws -> (signature: RecoverableSignature, publicKey: PublicKey) {
        switch backing {
        case .seed(let master):
            let node = try master.derive(path)
            guard let key = node.privateKey else { throw Failure.kind("unsupported", "no private key at \(path)") }
            return (try key.signRecoverable(digest: digest), key.publicKey)
        case .xpub:
            throw Failure.kind("unsupported", "an --xpub holds no private key and cannot sign; use the mnemonic or --card")
        case .card(let connection):
            let signer = connection.signer
            try signer.check(.signECDSA, path: path.indexes)
            let answer = try signer.signECDSA(digest: digest, at: path.indexes)
            return (answer.signature, answer.publicKey)
        }
    }

    /// The extended public key at `path`, as a public node; its parent fingerprint costs one more export, made only
    /// when asked (addresses below the node do not depend on it).
    private func cardNode(_ signer: CardSigner, at path: DerivationPath, withFingerprint: Bool) throws -> HDNode {
        try CardExtendedKey.node(signer, components: path.indexes,
                                 parentKey: withFingerprint ? { try CardExtendedKey.exportedKey(signer, components: $0) } : nil)
    }
}

