import ArgumentParser
import KeyhostCard
import KeyhostCrypto

/// --coin, --kind and --path: which key, and what its address looks like.
struct KeyTargetOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Coin symbol or SLIP-44 number: btc, test, regtest, ltc, tltc, doge, dash, bch, eth, etc (default: from --path, else btc).", valueName: "coin"))
    var coin: String?

    @Option(help: ArgumentHelp("Address kind: p2pkh, p2sh-p2wpkh, p2wpkh, p2tr, ethereum (default: from --path or the xpub's version, else the coin's default).", valueName: "kind"))
    var kind: String?

    @Option(help: ArgumentHelp("Derivation path, e.g. m/84'/0'/0'/0/0 (' or h for hardened). With --xpub it is relative to that key, e.g. 0/5.", valueName: "path"))
    var path: String?

    func validate() throws {
        _ = try KeyTarget.coin(coin)
        _ = try KeyTarget.kind(kind)
    }
}

/// A resolved key target: the coin and address kind, and the path from the key source's root.
struct KeyTarget {
    let coin: Coin
    let kind: AddressKind
    let path: DerivationPath

    static func coin(_ text: String?) throws -> Coin? {
        guard let text else { return nil }
        try SecretArguments.refuse([("--coin", text)])
        guard let coin = Coin.named(text) ?? UInt32(text).flatMap(Coin.withSLIP44) else {
            throw ValidationError("--coin: unknown coin \"\(text.prefix(40))\"; use one of \(Coin.all.map { $0.symbol.lowercased() }.joined(separator: ", "))")
        }
        return coin
    }

    static func kind(_ text: String?) throws -> AddressKind? {
        guard let text else { return nil }
        try SecretArguments.refuse([("--kind", text)])
        guard let kind = AddressKind(name: text) else {
            throw ValidationError("--kind: unknown address kind \"\(text.prefix(40))\"; use one of \(AddressKind.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return kind
    }

    /// --path checked against the key source: from the master ("m/...") for a mnemonic or card, relative and
    /// without hardened steps for an --xpub (unless it is a master xpub), and short enough for the card.
    static func path(_ text: String, source: KeySourceOptions.Kind, xpub: HDNode?) throws -> DerivationPath {
        try SecretArguments.refuse([("--path", text)])
        let path: DerivationPath
        do { path = try DerivationPath(text) } catch { throw ValidationError("--path: \(error)") }
        switch source {
        case .mnemonic, .card:
            guard path.isAbsolute else {
                throw ValidationError("--path \(text.prefix(80)) does not say where it starts; write it from the master key: m/\(text.prefix(80))")
            }
            if source == .card && path.depth > KeyPath.maxDepth {
                throw ValidationError("--path \(path) has \(path.depth) levels; cards (Keycard, Satochip) derive at most \(KeyPath.maxDepth)")
            }
        case .xpub:
            let depth = xpub?.depth ?? 0
            if path.isAbsolute && depth != 0 {
                throw ValidationError("--path \(path) starts at the master key, but the --xpub is a key at depth \(depth); "
                    + "with --xpub the path is relative to it, e.g. 0/5 for receive address 5 of an account xpub")
            }
            if let hardened = path.indexes.first(where: { $0 >= DerivationPath.hardenedOffset }) {
                throw ValidationError("--path \(path): the hardened step \(DerivationPath.format(hardened)) needs the private key, and an --xpub "
                    + "has only the public one; use non-hardened steps (e.g. 0/5), the xpub of the level below, or the mnemonic / --card")
            }
        }
        return path
    }

    /// The target of an address or a signature: --path, else the coin's standard first receive address
    /// (m/84'/0'/0'/0/0 for btc; 0/0 below an --xpub); the kind and coin from the options, else the path, else
    /// the xpub's version. Errors are bad option values (status 64).
    static func address(_ options: KeyTargetOptions, source: KeySourceOptions.Kind, xpub: (node: HDNode, family: ExtendedKeyVersion)?) throws -> KeyTarget {
        let coin = try coin(options.coin), kind = try kind(options.kind)
        let path: DerivationPath
        if let text = options.path {
            path = try self.path(text, source: source, xpub: xpub?.node)
        } else if source == .xpub {
            path = try DerivationPath("0/0")
        } else {
            let defaultKind = kind ?? (coin ?? .bitcoin).defaultKind
            let defaultCoin = coin ?? (defaultKind == .ethereum ? .ethereum : .bitcoin)
            do { path = try StandardPath.address(defaultKind, coin: defaultCoin) } catch {
                throw ValidationError("--coin \(defaultCoin.symbol.lowercased()) has no \(defaultKind.rawValue) addresses; use --kind "
                    + defaultCoin.addressKinds.map(\.rawValue).joined(separator: ", "))
            }
        }
        return try resolve(coin: coin, kind: kind, path: path, family: xpub?.family)
    }

    static func resolve(coin: Coin?, kind: AddressKind?, path: DerivationPath, family: ExtendedKeyVersion?) throws -> KeyTarget {
        let resolved: (coin: Coin, kind: AddressKind)
        do {
            resolved = try AddressInference.resolve(kind: kind, coin: coin, path: path.isAbsolute ? path : nil, family: family)
        } catch AddressError.kindUnknown(let why) {
            // The library's own wording suggests Lua options; say it in command-line terms.
            throw ValidationError("cannot tell the address kind: \(why.replacing("its path", with: "the path")); "
                + "give --kind p2pkh, p2sh-p2wpkh, p2wpkh, p2tr or ethereum")
        }
        do { try Address.checkSupported(resolved.kind, coin: resolved.coin) } catch {
            throw ValidationError("\(error); give --kind \(resolved.coin.addressKinds.map(\.rawValue).joined(separator: ", ")) or another --coin")
        }
        return KeyTarget(coin: resolved.coin, kind: resolved.kind, path: path)
    }

    /// What the JSON and text output call the coin: its registry symbol, as the Lua tables do.
    var coinName: String { coin.symbol }
}
