import KeyhostRecord
import ArgumentParser
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
            """
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

    @Flag(help: "Print a JSON object {xpub, path, family, public_key, fingerprint, parent_fingerprint, master_fingerprint}.")
    var json = false

    // Caught here so that words pasted without an option are refused without being echoed back.
    @Argument(help: .hidden) var stray: [String] = []

    func validate() throws {
        try StrayArguments.refuse(stray, command: "keyhost key xpub")
        _ = try plan()
    }

    /// The path (relative below an --xpub) and the family to write the key in; bad values are usage errors.
    func plan() throws -> (path: DerivationPath, family: ExtendedKeyVersion) {
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
            return (path, version)
        }
        if let xpub, coin == nil, kind == nil { return (path, xpub.family) }
        // The kind and coin the options or the path name; a path with no standard purpose gets the coin's BIP32 family.
        let hint = path.isAbsolute ? AddressInference.hint(path: path) : (kind: nil, coin: nil)
        let chosenKind = kind ?? hint.kind ?? xpub.flatMap { AddressInference.hint(family: $0.family).kind } ?? .p2pkh
        let chosenCoin = coin ?? hint.coin ?? xpub.flatMap { AddressInference.hint(family: $0.family).coin } ?? .bitcoin
        return (path, chosenCoin.extendedKeyVersion(for: chosenKind))
    }

    func run() throws {
        try KeyFailure.run {
            let (path, family) = try plan()
            let keys = try KeySource.open(source)
            defer { keys.close() }
            let node = try keys.extendedPublicNode(at: path)
            let text = node.extendedPublicKey(family)
            guard json else { print(text); return }
            let out: Record = [
                "xpub": .string(text), "path": .string(path.description), "family": .string(family.publicPrefix),
                "public_key": .bytes(node.publicKey.compressed), "fingerprint": .string(fingerprintHex(node.fingerprint)),
                "parent_fingerprint": .string(fingerprintHex(node.parentFingerprint)),
                "master_fingerprint": .string(try keys.masterFingerprint().map(fingerprintHex)),
            ]
            print(out.json())
        }
    }
}
