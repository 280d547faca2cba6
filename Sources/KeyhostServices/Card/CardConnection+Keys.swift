import KeyhostCard
import KeyhostCrypto
import KeyhostRecord

#if canImport(Glibc)
import Glibc
#endif

/// Key commands of `keyhost card …`: loading, generating and exporting keys.
extension CardConnection {
    /// Refuses to replace a loaded key unless `replace`: LOAD KEY and GENERATE KEY overwrite it for good.
    func checkNoKey(replace: Bool) throws {
        guard !replace, selectInfo.hasMasterKey else { return }
        let uid = selectInfo.keyUID.map { " (key UID \(Hex.encode($0)))" } ?? ""
        throw CardServiceError(kind: "has_key", "the card already holds a key\(uid); a new one replaces it for good; add --replace if that is what you want")
    }

    /// LOAD KEY of the BIP39 seed of `KEYHOST_MNEMONIC` (or a prompt), with the passphrase of `KEYHOST_PASSPHRASE`
    /// (or a prompt) when `passphrase`. `{key_uid}`.
    public func loadSeed(passphrase: Bool, replace: Bool) throws -> Record {
        if !passphrase, let value = getenv(CardSecret.passphrase.environment), value.pointee != 0 {
            // A passphrase silently left out would load another wallet than the user meant.
            throw CardServiceError(kind: "invalid_argument", "\(CardSecret.passphrase.environment) is set but --passphrase was not given; "
                               + "add --passphrase to use it, or unset the variable")
        }
        try checkNoKey(replace: replace)
        return try CardServiceError.mappingForCommandLine("LOAD KEY") {
            let phrase = try CardSecret.mnemonic.resolve()
            let mnemonic: Mnemonic
            do { mnemonic = try Mnemonic(phrase: phrase.text) } catch {
                // MnemonicError names positions and counts, never words.
                throw CardServiceError(kind: "invalid_mnemonic", "the mnemonic (\(CardSecret.mnemonic.environment) or the prompt) is not a valid BIP39 phrase: \(error)")
            }
            let words = try passphrase ? CardSecret.passphrase.resolve() : SecretBytes([])
            let keyUID = try card.loadKey(seed: mnemonic.seed(passphrase: words.text))
            return Record.object([("key_uid", .bytes(keyUID))])
        }
    }

    /// GENERATE KEY: a new random master key on the card (no backup exists). `{key_uid}`.
    public func generateKey(replace: Bool) throws -> Record {
        try checkNoKey(replace: replace)
        return try CardServiceError.mappingForCommandLine("GENERATE KEY") { Record.object([("key_uid", .bytes(try card.generateKey()))]) }
    }

    /// GENERATE MNEMONIC: `words` words from the card's random generator; the card keeps nothing. `{mnemonic, indexes}`.
    public func generateMnemonic(words: Int) throws -> Record {
        try CardServiceError.mappingForCommandLine("GENERATE MNEMONIC") {
            let indexes = try card.generateMnemonic(wordCount: words)
            return Record.object([("mnemonic", .string(try KeycardMnemonic.mnemonic(fromIndexes: indexes).phrase)),
                                  ("indexes", Record.integers(indexes))])
        }
    }

    /// EXPORT KEY of the public key at `path`, or with `extended` the chain code and the extended key in `family`.
    /// `{path, public_key, chain_code, xpub}`.
    public func exportKey(path: KeyPath, extended: Bool, family: ExtendedKeyVersion) throws -> Record {
        try CardServiceError.mappingForCommandLine("EXPORT KEY") {
            let exported = try card.exportKey(extended ? .extendedPublic : .publicOnly, path: path)
            guard let key = exported.resolvedPublicKey else { throw KeycardError.invalidResponse(.exportKey, "no public key in the answer") }
            var xpub: Record = .null
            if extended {
                guard let chainCode = exported.chainCode else { throw KeycardError.invalidResponse(.exportKey, "no chain code in the answer") }
                xpub = .string(try CardExtendedKey.serialize(card, path: path, key: key, chainCode: chainCode, family: family))
            }
            return Record.object([("path", .string(path.description)), ("public_key", .bytes(key.compressed)),
                                  ("chain_code", .optional(exported.chainCode)), ("xpub", xpub)])
        }
    }
}
