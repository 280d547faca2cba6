import ArgumentParser
import KeyhostCrypto
import KeyhostRecord
import KeyhostServices

struct CardSign: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign",
        abstract: "SIGN a 32-byte digest (64 hex digits) with the key at --path (ECDSA secp256k1, low S).",
        discussion: secretsHelp(["KEYHOST_PIN", "KEYHOST_PAIRING_PASSWORD (3.x, when not paired yet)"])
            + " The card signs the digest as given: hash the message first. "
            + "JSON: {path, public_key, r, s, v, recovery_id, compact, der, rsv} (v = 27 + recovery_id, rsv = r‖s‖v)."
    )

    @OptionGroup var card: CardSessionOptions

    @Option(help: ArgumentHelp("The signing key's path from the master key, e.g. m/44'/60'/0'/0/0.", valueName: "path"))
    var path: String

    @Argument(help: ArgumentHelp("The 32-byte digest in hex (an optional 0x prefix is allowed).", valueName: "hash"))
    var hash: String

    @Flag(help: "Print JSON.")
    var json = false

    func validate() throws {
        _ = try absoluteKeyPath(path)
        _ = try digest()
    }

    func digest() throws -> [UInt8] {
        let text = hash.hasPrefix("0x") || hash.hasPrefix("0X") ? String(hash.dropFirst(2)) : hash
        guard let bytes = try? Hex.decode(text) else { throw ValidationError("HASH must be hex digits, 64 of them (32 bytes)") }
        guard bytes.count == 32 else { throw ValidationError("HASH has \(bytes.count) bytes; SIGN takes a 32-byte digest (64 hex digits)") }
        return bytes
    }

    func run() throws {
        let keyPath = try absoluteKeyPath(path)
        let bytes = try digest()
        try runCardCommand(card, json: json, access: .pinVerified, requirement: .masterKey, human: { result in
            ["signature (r‖s‖v): \(result.text("rsv"))", "public key: \(result.text("public_key"))"]
        }) { try $0.sign(digest: bytes, path: keyPath) }
    }
}
