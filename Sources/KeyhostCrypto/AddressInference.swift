/// Which coin and address kind a node's addresses should have when the caller names no kind: read from a
/// standard derivation path (BIP44/49/84/86, with coin type 60 for Ethereum) or from a SLIP-132 extended-key
/// version that names a kind (ypub, zpub, upub, vpub, ...). Where neither tells, it raises rather than guess.
public enum AddressInference {
    /// What a path says: the kind its purpose names (nil when not a standard path) and the coin of its coin type.
    public static func hint(path: DerivationPath) -> (kind: AddressKind?, coin: Coin?) {
        let h = DerivationPath.hardenedOffset
        guard path.isAbsolute, let purpose = path.indexes.first, purpose >= h else { return (nil, nil) }
        let coin = path.indexes.count >= 2 && path.indexes[1] >= h ? Coin.withSLIP44(path.indexes[1] - h) : nil
        switch purpose - h {
        case 44:
            // BIP44 is P2PKH for Bitcoin-like coins and the Ethereum address for coin types 60/61; the coin type decides.
            guard let coin else { return (nil, nil) }
            return (coin.addressKinds.contains(.ethereum) ? .ethereum : .p2pkh, coin)
        case 49: return (.p2shP2wpkh, coin)
        case 84: return (.p2wpkh, coin)
        case 86: return (.p2tr, coin)
        default: return (nil, coin)
        }
    }

    /// What an extended-key version says: a kind only for the SLIP-132 families that name one (not xpub, tpub,
    /// Ltub, ttub, dgub, which BIP32 and wallets use for any script type), and a coin where the family is one coin's.
    public static func hint(family: ExtendedKeyVersion) -> (kind: AddressKind?, coin: Coin?) {
        let generic: [ExtendedKeyVersion] = [.xpub, .tpub, .Ltub, .ttub, .dgub]
        let coin: Coin?
        switch family {
        case .Ltub: coin = .litecoin
        case .ttub: coin = .litecoinTestnet
        case .dgub: coin = .dogecoin
        default: coin = family.isTestnet ? .bitcoinTestnet : nil
        }
        return (generic.contains(family) ? nil : family.kind, coin)
    }

    /// The coin and kind for a node's addresses. An explicit `kind`/`coin` wins; then the node's absolute `path`
    /// (when known); then the `family` it was parsed from (when it was); then a coin with only one kind.
    /// Throws `AddressError.kindUnknown` when none of these tells the kind.
    public static func resolve(kind: AddressKind?, coin: Coin?, path: DerivationPath?, family: ExtendedKeyVersion?) throws
        -> (coin: Coin, kind: AddressKind) {
        let none: (kind: AddressKind?, coin: Coin?) = (nil, nil)
        let fromPath = path.map { hint(path: $0) } ?? none
        let fromFamily = family.map { hint(family: $0) } ?? none
        let hintedCoin = fromPath.coin ?? fromFamily.coin
        guard let kind = kind ?? fromPath.kind ?? fromFamily.kind ?? (coin ?? hintedCoin).flatMap(onlyKind) else {
            var why = path.map { "its path \($0) is not a BIP44/49/84/86 path" } ?? "its path is not known"
            if let family { why += " and its \(family.publicPrefix) version names no address kind" }
            throw AddressError.kindUnknown(why)
        }
        if let coin { return (coin, kind) }
        // A hinted coin that lacks the kind asked for (an explicit "ethereum" at m/84'/0'/...) is no hint.
        if let hintedCoin, (try? Address.checkSupported(kind, coin: hintedCoin)) != nil { return (hintedCoin, kind) }
        return (kind == .ethereum ? .ethereum : .bitcoin, kind)
    }

    private static func onlyKind(_ coin: Coin) -> AddressKind? {
        coin.addressKinds.count == 1 ? coin.addressKinds[0] : nil
    }
}
