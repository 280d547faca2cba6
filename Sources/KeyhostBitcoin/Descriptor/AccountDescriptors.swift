import KeyhostCrypto

/// An account's descriptors as wallets export them (Bitcoin Core's listdescriptors, HWI's getdescriptors): the
/// receive chain `/0/*`, the change chain `/1/*`, and both in one BIP389 `/<0;1>/*`.
public struct AccountDescriptors: Sendable {
    public let receive: OutputDescriptor
    public let change: OutputDescriptor
    public let multipath: OutputDescriptor

    /// The descriptors of `account` (an account-level key) for single-key addresses of `kind`; `origin` is where
    /// the key comes from ([master fingerprint/account path]), nil when unknown. Hardened steps are written "h".
    public init(account: HDNode, kind: AddressKind, origin: KeyOrigin?, testnet: Bool) throws {
        receive = try Self.descriptor(kind, account: account, origin: origin, testnet: testnet, steps: "/0/*")
        change = try Self.descriptor(kind, account: account, origin: origin, testnet: testnet, steps: "/1/*")
        multipath = try Self.descriptor(kind, account: account, origin: origin, testnet: testnet, steps: "/<0;1>/*")
    }

    /// One single-key descriptor: `kind`'s script expression around `[origin]xpub` followed by `steps`.
    public static func descriptor(_ kind: AddressKind, account: HDNode, origin: KeyOrigin?, testnet: Bool, steps: String) throws -> OutputDescriptor {
        let originText = origin?.text(hardened: "h") ?? ""
        let key = originText + account.neutered().extendedPublicKey(testnet ? .tpub : .xpub) + steps
        let text: String
        switch kind {
        case .p2pkh: text = "pkh(\(key))"
        case .p2shP2wpkh: text = "sh(wpkh(\(key)))"
        case .p2wpkh: text = "wpkh(\(key))"
        case .p2tr: text = "tr(\(key))"
        case .ethereum: throw DescriptorError(.unsupported, "Ethereum addresses have no output descriptors; descriptors describe Bitcoin output scripts")
        }
        return try OutputDescriptor.parse(text)
    }
}
