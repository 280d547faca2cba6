/// Derivation paths defined by BIP44/49/84/86 and EIP-1581.
public enum StandardPath {
    private static let h = DerivationPath.hardenedOffset

    /// The account path m/purpose'/coin'/account' for `kind` (BIP44 for P2PKH and Ethereum, BIP49, BIP84, BIP86).
    public static func account(_ kind: AddressKind, coin: Coin, account: UInt32 = 0) throws -> DerivationPath {
        try DerivationPath(indexes: [kind.purpose | h, coin.slip44 | h, hardened(account, component: 3)])
    }

    /// The address path m/purpose'/coin'/account'/change/index for `kind`.
    public static func address(_ kind: AddressKind, coin: Coin, account: UInt32 = 0, change: UInt32 = 0, index: UInt32 = 0) throws -> DerivationPath {
        try self.account(kind, coin: coin, account: account)
            .appending(DerivationPath(indexes: [plain(change, component: 4), plain(index, component: 5)], absolute: false))
    }

    /// BIP44: m/44'/coin'/account'/change/index.
    public static func bip44(coin: Coin, account: UInt32 = 0, change: UInt32 = 0, index: UInt32 = 0) throws -> DerivationPath {
        try address(.p2pkh, coin: coin, account: account, change: change, index: index)
    }

    /// BIP49: m/49'/coin'/account'/change/index.
    public static func bip49(coin: Coin, account: UInt32 = 0, change: UInt32 = 0, index: UInt32 = 0) throws -> DerivationPath {
        try address(.p2shP2wpkh, coin: coin, account: account, change: change, index: index)
    }

    /// BIP84: m/84'/coin'/account'/change/index.
    public static func bip84(coin: Coin, account: UInt32 = 0, change: UInt32 = 0, index: UInt32 = 0) throws -> DerivationPath {
        try address(.p2wpkh, coin: coin, account: account, change: change, index: index)
    }

    /// BIP86: m/86'/coin'/account'/change/index.
    public static func bip86(coin: Coin, account: UInt32 = 0, change: UInt32 = 0, index: UInt32 = 0) throws -> DerivationPath {
        try address(.p2tr, coin: coin, account: account, change: change, index: index)
    }

    /// EIP-1581 non-wallet key: m/43'/60'/1581'/keyType'/index (Keycard: whisper key type 0, encryption key type 1).
    public static func eip1581(keyType: UInt32, index: UInt32 = 0) throws -> DerivationPath {
        try DerivationPath(indexes: [43 | h, 60 | h, 1581 | h, hardened(keyType, component: 4), plain(index, component: 5)])
    }

    /// EIP-1581 key type of the Status/Keycard whisper (chat) key.
    public static let eip1581Whisper: UInt32 = 0
    /// EIP-1581 key type of the Status/Keycard encryption key.
    public static let eip1581Encryption: UInt32 = 1

    private static func hardened(_ value: UInt32, component: Int) throws -> UInt32 {
        guard value < h else {
            throw DerivationPathError(path: "", component: component, text: String(value), problem: .indexTooLarge)
        }
        return value | h
    }

    private static func plain(_ value: UInt32, component: Int) throws -> UInt32 {
        guard value < h else {
            throw DerivationPathError(path: "", component: component, text: String(value), problem: .indexTooLarge)
        }
        return value
    }
}
