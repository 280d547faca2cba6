import KeyhostServices
import KeyhostCard
import KeyhostCrypto

/// The keys of one `keyhost key` command, opened: a seed's master node, an extended public key, or a
/// PIN-verified Keycard session. Each operation asks the card as little as it can (one EXPORT KEY of the
/// parent for a run of addresses).
final class KeySource {
    enum Backing {
        case seed(HDNode)
        case xpub(HDNode)
        case card(CardConnection)
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
            // One extended export of the parent serves every unhardened child, except at m: no Keycard gives the
            // master's chain code (see KeycardCommandSet.exportsMaster), so there each key is exported by itself.
            if children.count > 1 && parent.depth > 0 && children.allSatisfy({ $0 < DerivationPath.hardenedOffset }) {
                let base = try cardNode(connection.card, at: parent, withFingerprint: false)
                return try children.map { try base.derive(child: $0).publicKey }
            }
            let paths = children.isEmpty ? [parent] : try children.map { try parent.appending(DerivationPath(indexes: [$0], absolute: false)) }
            return try paths.map { path in
                guard let key = try connection.card.exportKey(.publicOnly, path: KeyPath(source: .master, components: path.indexes)).resolvedPublicKey else {
                    throw KeycardError.invalidResponse(.exportKey, "no public key for \(path)")
                }
                // The card writes keys uncompressed; BIP32 wallets (and so the mnemonic here) use the compressed form.
                return key.compressed(true)
            }
        }
    }

    /// The public node (key, chain code, depth, parent fingerprint) at `path`.
    func extendedPublicNode(at path: DerivationPath) throws -> HDNode {
        switch backing {
        case .seed(let node), .xpub(let node):
            return try node.derive(path).neutered()
        case .card(let connection):
            // The card's refusals (the master's xpub is `unsupported`) keep the kinds `keyhost card export-key` gives them.
            return try connection.frontEnd.mapping("EXPORT KEY") { try cardNode(connection.card, at: path, withFingerprint: true) }
        }
    }

    /// The master key's fingerprint (for key origins such as [d34db33f/84'/0'/0']), when the source knows the master.
    func masterFingerprint() throws -> UInt32? {
        switch backing {
        case .seed(let node): return node.fingerprint
        case .xpub(let node): return node.depth == 0 ? node.fingerprint : nil
        case .card(let connection):
            guard let key = try connection.card.exportKey(.publicOnly, path: KeyPath(source: .master, components: [])).resolvedPublicKey else { return nil }
            return key.fingerprint
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
            // The card returns its public key; KeycardSignature found the recovery id by recovering that key.
            let answer = try connection.card.sign(digest: digest, mode: .derive(KeyPath(source: .master, components: path.indexes)))
            guard answer.isValid else { throw KeycardError.invalidResponse(.sign, "the signature does not verify against the card's public key") }
            return (answer.signature, answer.publicKey.compressed(true))
        }
    }

    /// EXPORT KEY (extended public) at `path`, as a public node; its parent fingerprint costs one more EXPORT KEY,
    /// made only when asked (addresses below the node do not depend on it).
    private func cardNode(_ card: KeycardCommandSet, at path: DerivationPath, withFingerprint: Bool) throws -> HDNode {
        try CardExtendedKey.node(card, components: path.indexes,
                                 parentKey: withFingerprint ? { try CardExtendedKey.exportedKey(card, components: $0) } : nil)
    }
}

