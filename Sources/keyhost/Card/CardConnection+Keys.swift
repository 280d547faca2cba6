import KeyhostCard
import KeyhostCrypto
import KeyhostRecord
import KeyhostServices

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

    /// Refuses, before the PIN is asked, a new mnemonic's LOAD KEY that would not do what the user meant:
    /// KEYHOST_PASSPHRASE set without `passphrase` (is the variable meant for this new wallet?), or a key already
    /// there without `replace`.
    public func checkSeedLoad(passphrase: Bool, replace: Bool) throws {
        if !passphrase, let value = getenv(CardSecret.passphrase.environment), value.pointee != 0 {
            throw CardServiceError(kind: "invalid_argument", "\(CardSecret.passphrase.environment) is set but --passphrase was not given; "
                               + "add --passphrase to use it, or unset the variable")
        }
        try checkNoKey(replace: replace)
    }

    /// LOAD KEY of the BIP39 seed of `KEYHOST_MNEMONIC` (or a prompt), with the passphrase of `KEYHOST_PASSPHRASE`
    /// (or a prompt) when `passphrase`: `card load-seed` decides that as every command taking a mnemonic does. `{key_uid}`.
    public func loadSeed(passphrase: Bool, replace: Bool) throws -> Record {
        try checkNoKey(replace: replace)
        return try frontEnd.mapping("LOAD KEY") {
            let phrase = try CardSecret.mnemonic.resolve()
            let mnemonic: Mnemonic
            do { mnemonic = try Mnemonic(phrase: phrase.text) } catch {
                // MnemonicError names positions and counts, never words.
                throw CardServiceError(kind: "invalid_mnemonic", "the mnemonic (\(CardSecret.mnemonic.environment) or the prompt) is not a valid BIP39 phrase: \(error)")
            }
            return Record.object([("key_uid", .bytes(try load(mnemonic, passphrase: passphrase ? CardSecret.passphrase.resolve() : nil)))])
        }
    }

    /// LOAD KEY of `mnemonic`'s BIP39 seed with `passphrase` (none when nil); the key UID.
    private func load(_ mnemonic: Mnemonic, passphrase: SecretBytes?) throws -> [UInt8] {
        try card.loadKey(seed: mnemonic.seed(passphrase: (passphrase ?? SecretBytes([])).text))
    }

    /// GENERATE KEY: a new random master key on the card (no backup exists). `{key_uid}`.
    public func generateKey(replace: Bool) throws -> Record {
        try checkNoKey(replace: replace)
        return try frontEnd.mapping("GENERATE KEY") { Record.object([("key_uid", .bytes(try card.generateKey()))]) }
    }

    /// GENERATE MNEMONIC: `words` words from the card's random generator; the card keeps nothing. `{mnemonic, indexes}`.
    public func generateMnemonic(words: Int) throws -> Record {
        try frontEnd.mapping("GENERATE MNEMONIC") {
            let indexes = try card.generateMnemonic(wordCount: words)
            return Record.object([("mnemonic", .string(try KeycardMnemonic.mnemonic(fromIndexes: indexes).phrase)),
                                  ("indexes", Record.integers(indexes))])
        }
    }

    /// GENERATE MNEMONIC, then LOAD KEY of its seed (PIN verified; `checkSeedLoad` first): a key made from the card's
    /// own randomness whose backup is the words. The passphrase, when `passphrase`, is a new one: a prompt asks for it
    /// twice, since a typo would make a wallet nobody can restore. `{mnemonic, indexes, key_uid}`.
    public func generateMnemonicAndLoad(words: Int, passphrase: Bool) throws -> Record {
        try frontEnd.mapping("GENERATE MNEMONIC") {
            let indexes = try card.generateMnemonic(wordCount: words)
            let mnemonic = try KeycardMnemonic.mnemonic(fromIndexes: indexes)
            let keyUID = try frontEnd.mapping("LOAD KEY") {
                try load(mnemonic, passphrase: passphrase ? CardSecret.passphrase.resolve(setting: true) : nil)
            }
            return Record.object([("mnemonic", .string(mnemonic.phrase)), ("indexes", Record.integers(indexes)), ("key_uid", .bytes(keyUID))])
        }
    }

    /// REMOVE KEY (PIN verified): the master key, and with it every key the card derives, is gone; so is the PIN-less
    /// path (3.x). The caller confirms first. `{key_uid, has_master_key}`: the removed key's UID, and what GET STATUS says now.
    public func removeKey() throws -> Record {
        try frontEnd.mapping("REMOVE KEY") {
            let keyUID = selectInfo.keyUID
            try card.removeKey()
            return Record.object([("key_uid", .bytes(keyUID)), ("has_master_key", .bool(try card.getStatus().hasMasterKey))])
        }
    }

    /// Refuses, before anything is sent, a private key export the applet would refuse: it exports private keys on EIP-1581
    /// paths only (m/43'/60'/1581'/…, two levels below at least), keys meant to be used off the card.
    public static func checkPrivateExport(_ path: KeyPath) throws {
        guard !path.isEIP1581 else { return }
        throw CardServiceError(kind: "invalid_argument", "a Keycard exports private keys on EIP-1581 paths only (m/43'/60'/1581'/…, at least two "
                               + "levels below it, e.g. m/43'/60'/1581'/0'/0); \(path) is not one, and its key never leaves the card")
    }

    /// EXPORT KEY P2 00 of the key at the EIP-1581 `path` (PIN verified): `{path, public_key, chain_code, xpub, private_key}`
    /// (`CardRecords.exportedKey`, as Lua's `s:export_key{kind = "private"}`). The private key is the caller's to print
    /// where the user asked, and nowhere else.
    public func exportPrivateKey(path: KeyPath) throws -> Record {
        try Self.checkPrivateExport(path)
        return try frontEnd.mapping("EXPORT KEY") { try CardRecords.exportedKey(card, .privateAndPublic, path: path, family: .xpub) }
    }

    /// EXPORT KEY of the public key at `path`, or with `extended` the chain code and the extended key in `family`.
    /// `{path, public_key, chain_code, xpub}` (`CardRecords.exportedKey`, as Lua's `s:export_key{}`).
    public func exportKey(path: KeyPath, extended: Bool, family: ExtendedKeyVersion) throws -> Record {
        try frontEnd.mapping("EXPORT KEY") { try CardRecords.exportedKey(card, extended ? .extendedPublic : .publicOnly, path: path, family: family) }
    }
}
