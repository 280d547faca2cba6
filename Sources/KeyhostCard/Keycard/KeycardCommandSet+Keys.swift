import KeyhostCrypto

extension KeycardCommandSet {
    /// LOAD KEY P1 03: a BIP39 (or any 16–64 byte BIP32) seed. Returns the key UID.
    @discardableResult
    public func loadKey(seed: SecretBytes) throws -> [UInt8] {
        guard (16...64).contains(seed.count) else { throw KeycardError.invalidArgument("a seed has 16 to 64 bytes, got \(seed.count)") }
        var data = seed.revealedBytes()
        defer { wipe(&data) }
        return try sendSecure(.loadKey, p1: LoadKeyType.seed.rawValue, data: data)
    }

    /// LOAD KEY P1 01/02: a key pair, extended when `chainCode` is given. Returns the key UID.
    @discardableResult
    public func loadKey(privateKey: PrivateKey, chainCode: [UInt8]? = nil, includePublicKey: Bool = true) throws -> [UInt8] {
        if let chainCode, chainCode.count != 32 { throw KeycardError.invalidArgument("a chain code has 32 bytes") }
        var children: [TLV] = []
        if includePublicKey { children.append(TLV(tag: 0x80, value: privateKey.publicKey.uncompressed)) }
        children.append(TLV(tag: 0x81, value: privateKey.revealedBytes()))
        if let chainCode { children.append(TLV(tag: 0x82, value: chainCode)) }
        var data = TLV(tag: 0xA1, children: children).encoded()
        defer { wipe(&data) }
        let type: LoadKeyType = chainCode == nil ? .keyPair : .extendedKeyPair
        return try sendSecure(.loadKey, p1: type.rawValue, data: data)
    }

    /// GENERATE KEY: the card makes a random 64-byte seed. Returns the key UID.
    @discardableResult
    public func generateKey() throws -> [UInt8] { try sendSecure(.generateKey) }

    /// GENERATE MNEMONIC: `wordCount` (12, 15, 18, 21, 24) word indexes; the card does not keep them.
    public func generateMnemonic(wordCount: Int = 12) throws -> [Int] {
        guard Mnemonic.validWordCounts.contains(wordCount) else { throw KeycardError.invalidArgument("word count must be 12, 15, 18, 21 or 24") }
        let data = try sendSecure(.generateMnemonic, p1: UInt8(wordCount / 3))
        guard data.count == wordCount * 2 else { throw KeycardError.invalidResponse(.generateMnemonic, "\(data.count) bytes for \(wordCount) words") }
        return stride(from: 0, to: data.count, by: 2).map { Int(data[$0]) << 8 | Int(data[$0 + 1]) }
    }

    /// REMOVE KEY.
    public func removeKey() throws { try sendSecure(.removeKey) }

    /// DERIVE KEY (v1): makes `path` the current key.
    public func deriveKey(_ path: KeyPath) throws {
        try requireV1(.deriveKey)
        try sendSecure(.deriveKey, p1: path.source.rawValue, data: path.encoded)
    }

    /// SET PINLESS PATH (v1): an absolute path whose key SIGN P1 03 may use without PIN; empty unsets it.
    public func setPinlessPath(_ components: [UInt32]) throws {
        try requireV1(.setPinlessPath)
        try sendSecure(.setPinlessPath, data: KeyPath(source: .master, components: components).encoded)
    }

    /// EXPORT KEY. `path` nil exports the current key (v1). On 4.x the path is always from the master.
    /// The master's extended public key is refused before anything is sent: see `exportsMaster`.
    public func exportKey(_ option: ExportOption, path: KeyPath? = nil, makeCurrent: Bool = false) throws -> ExportedKey {
        if option == .extendedPublic, try exportsMaster(path) {
            let why = version == .v2
                ? "the 4.x applet refuses to export the master's chain code (6985)"
                : "the 3.x applet answers it with the chain code of the key it derived last, not the master's, so the xpub would be wrong"
            throw KeycardError.unsupportedForm(.exportKey, what: "the master key's extended public key (m): \(why); no other command reveals "
                + "the master chain code. Export an account's extended key instead (e.g. m/84'/0'/0'), or the master's public key without the chain code",
                applet: appletName)
        }
        let p1: UInt8
        var data: [UInt8] = []
        if version == .v2 {
            guard !makeCurrent else {
                throw KeycardError.unsupportedForm(.exportKey, what: "make_current (4.x has no current key to change)", applet: appletName)
            }
            if let path, path.source != .master { throw Self.absolutePathsOnly(.exportKey, appletName) }
            p1 = 0x01
            data = path?.encoded ?? []
        } else if let path {
            p1 = (makeCurrent ? 0x02 : 0x01) | path.source.rawValue
            data = path.encoded
        } else {
            p1 = 0x00
        }
        return try ExportedKey(response: sendSecure(.exportKey, p1: p1, p2: option.rawValue, data: data))
    }

    /// Whether EXPORT KEY of `path` (nil: the current key) lands on the master key. The 3.2 applet's derivation of
    /// the empty path copies only the master private key into its output buffer and leaves the chain code of the
    /// previous derivation there (KeycardApplet.doDerive), and no command yields the master chain code, so the
    /// master's extended key cannot be had from a 3.x card at all. Relative paths cost one GET STATUS, only when empty.
    func exportsMaster(_ path: KeyPath?) throws -> Bool {
        if version == .v2 { return path?.components.isEmpty ?? true }
        if let path, path.source == .master || !path.components.isEmpty { return path.components.isEmpty }
        let current = try getCurrentPath().components
        switch path?.source {
        case nil, .current?: return current.isEmpty
        case .parent?: return current.count <= 1
        default: return false
        }
    }
}
