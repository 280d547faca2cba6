import KeyhostRecord
import ArgumentParser
import KeyhostBitcoin
import KeyhostCrypto

/// `keyhost key xpub`: the extended public key at a path, usually an account (m/84'/0'/0').
struct KeyXpub: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "xpub",
        abstract: "Print the extended public key at a path (default: the coin's first account, e.g. m/84'/0'/0').",
        discussion: """
            The family (version bytes) comes from --family, else the path: m/44' xpub, m/49' ypub, m/84' zpub, m/86' xpub, \
            and tpub/upub/vpub on test networks (coin type 1'). Below an --xpub the default path is the key itself, \
            so --xpub KEY --family zpub re-writes a key in another family.
            --json prints {xpub, path, family, public_key, fingerprint, parent_fingerprint, master_fingerprint}; the master \
            fingerprint and path give the key origin [fingerprint/path] that output descriptors want.
            --descriptor prints the account's receive and change descriptors instead (as HWI's getdescriptors: \
            pkh, sh(wpkh), wpkh or tr by the kind, with the origin [master fingerprint/path] and checksum), ready for \
            Bitcoin Core's importdescriptors, Sparrow or BDK; with --json it adds {descriptors: {receive, change, multipath}}.
            """
            + "\n" + HelpExamples.text(
                "keyhost key xpub --family zpub",
                "keyhost key xpub --descriptor --json",
                "keyhost key xpub --card --path \"m/84'/0'/0'\" --reader virtual --card-state c.json")
    )

    @OptionGroup var source: KeySourceOptions

    @Option(help: ArgumentHelp("Coin symbol or SLIP-44 number (default: from --path, else btc).", valueName: "coin"))
    var coin: String?

    @Option(help: ArgumentHelp("Address kind whose standard account path and family to use: p2pkh, p2sh-p2wpkh, p2wpkh, p2tr, ethereum.", valueName: "kind"))
    var kind: String?

    @Option(help: ArgumentHelp("Derivation path of the key, e.g. m/84'/0'/0'. With --xpub it is relative to that key.", valueName: "path"))
    var path: String?

    @Option(help: ArgumentHelp("Version bytes: xpub, ypub, zpub, tpub, upub, vpub, Ypub, Zpub, Upub, Vpub, Ltub, ttub, dgub.", valueName: "family"))
    var family: String?

    @Flag(help: "Print the account's receive and change output descriptors (with origin and checksum) instead of the key.")
    var descriptor = false

    @Flag(help: "Print a JSON object {xpub, path, family, public_key, fingerprint, parent_fingerprint, master_fingerprint}.")
    var json = false

    // Caught here so that words pasted without an option are refused without being echoed back.
    @Argument(help: .hidden) var stray: [String] = []

    func validate() throws {
        try StrayArguments.refuse(stray, command: "keyhost key xpub")
        let plan = try fullPlan()
        if descriptor { try Self.checkDescriptor(kind: plan.kind, coin: plan.coin) }
    }

    /// The path (relative below an --xpub) and the family to write the key in; bad values are usage errors.
    func plan() throws -> (path: DerivationPath, family: ExtendedKeyVersion) {
        let (path, family, _, _) = try fullPlan()
        return (path, family)
    }

    /// The plan with the address kind and coin chosen (what --descriptor needs).
    func fullPlan() throws -> (path: DerivationPath, family: ExtendedKeyVersion, kind: AddressKind, coin: Coin) {
        let coin = try KeyTarget.coin(coin), kind = try KeyTarget.kind(kind)
        let xpub = try source.parsedXpub()
        let path: DerivationPath
        if let text = self.path {
            path = try KeyTarget.path(text, source: source.kind, xpub: xpub?.node)
        } else if source.kind == .xpub {
            path = try DerivationPath(indexes: [], absolute: false)
        } else {
            let defaultKind = kind ?? (coin ?? .bitcoin).defaultKind
            let defaultCoin = coin ?? (defaultKind == .ethereum ? .ethereum : .bitcoin)
            do { path = try StandardPath.account(defaultKind, coin: defaultCoin) } catch { throw ValidationError("--path: \(error)") }
        }
        if let family {
            try SecretArguments.refuse([("--family", family)])
            guard let version = ExtendedKeyVersion.lookup(prefix: family), version.publicPrefix == family else {
                throw ValidationError("--family: unknown extended public key family \"\(family.prefix(20))\"; use one of "
                    + ExtendedKeyVersion.all.map(\.publicPrefix).joined(separator: ", "))
            }
        }
        // The kind and coin the options or the path name; a path with no standard purpose gets the coin's BIP32 family.
        let hint = path.isAbsolute ? AddressInference.hint(path: path) : (kind: nil, coin: nil)
        let chosenKind = kind ?? hint.kind ?? xpub.flatMap { AddressInference.hint(family: $0.family).kind } ?? .p2pkh
        let chosenCoin = coin ?? hint.coin ?? xpub.flatMap { AddressInference.hint(family: $0.family).coin } ?? .bitcoin
        if let family, let version = ExtendedKeyVersion.lookup(prefix: family) { return (path, version, chosenKind, chosenCoin) }
        if let xpub, coin == nil, kind == nil { return (path, xpub.family, chosenKind, chosenCoin) }
        return (path, chosenCoin.extendedKeyVersion(for: chosenKind), chosenKind, chosenCoin)
    }

    func run() throws {
        try Failure.exitOnError {
            let (path, family, kind, coin) = try fullPlan()
            if descriptor { try Self.checkDescriptor(kind: kind, coin: coin) }
            let keys = try KeySource.open(source)
            defer { keys.close() }
            let node = try keys.extendedPublicNode(at: path)
            let text = node.extendedPublicKey(family)
            let descriptors = descriptor ? try accountDescriptors(node, path: path, kind: kind, coin: coin, keys: keys) : nil
            if let descriptors, !json {
                print(descriptors.receive.description)
                print(descriptors.change.description)
                return
            }
            guard json else { print(text); return }
            var out: Record = [
                "xpub": .string(text), "path": .string(path.description), "family": .string(family.publicPrefix),
                "public_key": .bytes(node.publicKey.compressed), "fingerprint": .string(fingerprintHex(node.fingerprint)),
                "parent_fingerprint": .string(fingerprintHex(node.parentFingerprint)),
                "master_fingerprint": .string(try keys.masterFingerprint().map(fingerprintHex)),
            ]
            if let descriptors {
                out = out.setting("descriptors", ["receive": .string(descriptors.receive.description),
                                                  "change": .string(descriptors.change.description),
                                                  "multipath": .string(descriptors.multipath.description)])
            }
            print(out.json())
        }
    }

    /// Descriptors are Bitcoin's: refused for other coins and for Ethereum keys before any secret is read.
    static func checkDescriptor(kind: AddressKind, coin: Coin) throws {
        guard BitcoinNetwork(coin: coin) != nil else {
            throw ValidationError("--descriptor: output descriptors describe Bitcoin scripts; \(coin.name) is not a Bitcoin network (use --coin btc, test or regtest)")
        }
        guard kind != .ethereum else { throw ValidationError("--descriptor: Ethereum keys have no output descriptors; use --kind p2pkh, p2sh-p2wpkh, p2wpkh or p2tr") }
    }

    /// The account's receive, change and multipath descriptors, with the origin when the master is known.
    private func accountDescriptors(_ node: HDNode, path: DerivationPath, kind: AddressKind, coin: Coin, keys: KeySource) throws -> AccountDescriptors {
        var origin: KeyOrigin?
        if let master = try keys.masterFingerprint() {
            // Below an --xpub that is itself the master, the relative path is the full path.
            origin = KeyOrigin(fingerprint: master, path: try DerivationPath(indexes: path.indexes))
        } else {
            Failure.writeError("note: the key origin [master fingerprint/path] is unknown below an --xpub that is not the master key; "
                + "the descriptors have none (add it by hand, or derive from the mnemonic or the card)\n")
        }
        return try AccountDescriptors(account: node, kind: kind, origin: origin, testnet: coin.isTestnet)
    }
}
