import ArgumentParser
import KeyhostCrypto

/// `--trusted-ca KEY`: part of every option group that opens a card, so no command can leave it out. A 4.x card's
/// identity certificate signed by a CA other than Status' is refused unless its key is given here.
struct TrustedCAOptions: ParsableArguments {
    @Option(name: .customLong("trusted-ca"), help: ArgumentHelp(
        "With a card: also trust this certificate authority's public key (33 or 65 bytes, hex) for 4.x identity certificates; repeatable.",
        valueName: "key"))
    var trustedCA: [String] = []

    var given: Bool { !trustedCA.isEmpty }

    func validate() throws { _ = try keys() }

    /// The keys, each 33 or 65 bytes of hex.
    func keys() throws -> [PublicKey] { try Self.publicKeys(trustedCA) }

    static func publicKeys(_ texts: [String]) throws -> [PublicKey] {
        try texts.map { text in
            guard let bytes = try? Hex.decode(text), [33, 65].contains(bytes.count) else {
                throw ValidationError("--trusted-ca needs a certificate authority's public key, 33 or 65 bytes in hex, got \(text.debugDescription)")
            }
            guard let key = try? PublicKey(bytes: bytes) else {
                throw ValidationError("--trusted-ca \(text.debugDescription) has the length of a public key (\(bytes.count) bytes) but is not a point "
                                      + "on secp256k1; copy the certificate authority's key again")
            }
            return key
        }
    }
}
