import ArgumentParser
import KeyhostCrypto
import KeyhostRecord
import KeyhostServices

struct CardSign: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign",
        abstract: "SIGN a 32-byte digest (64 hex digits) with the key at --path (ECDSA secp256k1, low S; --schnorr: BIP340).",
        discussion: secretsHelp(["KEYHOST_PIN", "KEYHOST_PAIRING_PASSWORD (3.x, when not paired yet)"])
            + " The card signs the digest as given: hash the message first. "
            + "JSON: {path, public_key, r, s, v, recovery_id, compact, der, rsv} (v = 27 + recovery_id, rsv = r‖s‖v). "
            + "--pinless (3.x): the key at the card's PIN-less path signs, with no PIN, secure channel or pairing, as the applet "
            + "allows anyone holding the card (set the path with keyhost card set-pinless-path); path is then null. "
            + "--schnorr (4.x): a BIP340 signature; JSON: {path, signature, public_key, x_only} (the 64-byte signature, the "
            + "compressed and the x-only public key it verifies under)."
            + "\n" + HelpExamples.text(
                "keyhost card sign --path \"m/44'/60'/0'/0/0\" \"$(printf hello | sha256sum | cut -c1-64)\" --reader virtual --card-state c.json --json")
    )

    @OptionGroup var card: CardSessionOptions

    @Option(help: ArgumentHelp("The signing key's path from the master key, e.g. m/44'/60'/0'/0/0 (not with --pinless).", valueName: "path"))
    var path: String?

    @Argument(help: ArgumentHelp("The 32-byte digest in hex (an optional 0x prefix is allowed).", valueName: "hash"))
    var hash: String

    @Flag(help: "Sign with the key at the card's PIN-less path (3.x), without PIN or secure channel.")
    var pinless = false

    @Flag(help: "Sign with BIP340 Schnorr (4.x) instead of ECDSA.")
    var schnorr = false

    @Flag(help: "Print JSON.")
    var json = false

    func validate() throws {
        if pinless {
            if path != nil { throw ValidationError("--pinless signs with the key at the card's PIN-less path: leave out --path") }
            if schnorr { throw ValidationError("--pinless and --schnorr exclude each other: PIN-less signing is ECDSA on 3.x cards, Schnorr needs 4.x") }
        } else {
            guard let path else { throw ValidationError("--path is required (or --pinless, to sign with the card's PIN-less path)") }
            _ = try absoluteKeyPath(path)
        }
        _ = try digest()
    }

    func digest() throws -> [UInt8] {
        let text = hash.hasPrefix("0x") || hash.hasPrefix("0X") ? String(hash.dropFirst(2)) : hash
        guard let bytes = try? Hex.decode(text) else { throw ValidationError("HASH must be hex digits, 64 of them (32 bytes)") }
        guard bytes.count == 32 else { throw ValidationError("HASH has \(bytes.count) bytes; SIGN takes a 32-byte digest (64 hex digits)") }
        return bytes
    }

    func run() throws {
        let bytes = try digest()
        let ecdsa: (Record) -> [String] = { ["signature (r‖s‖v): \($0.text("rsv"))", "public key: \($0.text("public_key"))"] }
        if pinless {
            // No secure channel: SELECT is all the card needs to sign with its PIN-less key.
            try runCardCommand(card, json: json, access: .selected, requirement: .masterKey, human: ecdsa) { try $0.signPinless(digest: bytes) }
            return
        }
        let keyPath = try absoluteKeyPath(path ?? "")
        if schnorr {
            try runCardCommand(card, json: json, access: .selected, requirement: .masterKey, human: { result in
                ["signature (BIP340): \(result.text("signature"))", "x-only public key: \(result.text("x_only"))"]
            }) { connection in
                try connection.requireSchnorr()
                try connection.open(.pinVerified)
                return try connection.signSchnorr(digest: bytes, path: keyPath)
            }
            return
        }
        try runCardCommand(card, json: json, access: .pinVerified, requirement: .masterKey, human: ecdsa) { try $0.sign(digest: bytes, path: keyPath) }
    }
}
