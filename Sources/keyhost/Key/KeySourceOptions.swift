import ArgumentParser
import KeyhostCrypto

/// Where `keyhost key` takes keys from: the signing sources every key command shares (a mnemonic, `--card`), plus
/// `--xpub` for public derivation.
struct KeySourceOptions: ParsableArguments {
    @OptionGroup var signing: SigningKeyOptions

    @Option(help: ArgumentHelp("An extended public key (xpub, ypub, zpub, tpub, upub, vpub, ...): public derivation only, and --path is relative to it.", valueName: "key"))
    var xpub: String?

    /// Which source the options pick.
    enum Kind { case mnemonic, xpub, card }

    var kind: Kind { xpub != nil ? .xpub : signing.usesCard ? .card : .mnemonic }

    func validate() throws {
        if xpub != nil {
            if signing.usesCard { throw ValidationError("--xpub and --card exclude each other; give one key source") }
            try signing.secrets.refuse(with: "--xpub")
        }
        _ = try parsedXpub()
    }

    /// The parsed --xpub; a private key or a malformed one is a usage error. Commands call this from their own
    /// validate(), which may run before this group's, so the checks live here.
    func parsedXpub() throws -> (node: HDNode, family: ExtendedKeyVersion)? {
        guard let xpub else { return nil }
        // Judged by the decoded version bytes, never by the prefix text (Ltpv, dgpv are private too).
        if HDNode.isExtendedPrivateKey(xpub) == true {
            throw ValidationError("--xpub was given an extended PRIVATE key; it is a secret and must not be on the command line. "
                + "Give the extended public key, or the mnemonic (KEYHOST_MNEMONIC or --mnemonic-env VAR)")
        }
        try SecretArguments.refuse([("--xpub", xpub)])
        let parsed: (node: HDNode, family: ExtendedKeyVersion)
        do { parsed = try HDNode.parse(xpub.trimmingWhitespaceAndNewlines()) } catch { throw ValidationError("--xpub: \(error)") }
        guard !parsed.node.isPrivate else { throw ValidationError("--xpub was given an extended PRIVATE key; give the extended public key") }
        return parsed
    }
}
