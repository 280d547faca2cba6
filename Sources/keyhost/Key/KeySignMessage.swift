import KeyhostRecord
import ArgumentParser
import KeyhostCrypto

/// `keyhost key sign-message`: a Bitcoin signed message (Core/Electrum format) or an Ethereum personal_sign (EIP-191).
struct KeySignMessage: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign-message",
        abstract: "Sign a message as Bitcoin Core/Electrum (base64) or Ethereum personal_sign (EIP-191, 0x-hex) do.",
        discussion: """
            The key is the one at --path (default: the coin's first receive address, as 'keyhost key address'); --coin eth \
            or an m/44'/60' path signs the EIP-191 way and prints 65 bytes r‖s‖v (v 27/28) as 0x-hex. Bitcoin kinds print \
            base64 of header‖r‖s: header 31+recid for p2pkh, and the BIP137 headers 35+recid (p2sh-p2wpkh) and 39+recid \
            (p2wpkh) that Trezor writes and Electrum accepts. p2tr has no such format (BIP322 is not supported).
            With --card the card signs the message hash at the path; the recovery id comes from the public key it returns.
            --json prints {address, signature, path, kind, coin, public_key}.
            """
            + "\n" + HelpExamples.text(
                "keyhost key sign-message \"hello\"",
                "keyhost key sign-message --coin eth --json \"hello\"",
                "keyhost key sign-message --coin eth --card --reader virtual --card-state c.json \"hello\"")
    )

    @OptionGroup var message: MessageOptions
    @OptionGroup var source: KeySourceOptions
    @OptionGroup var target: KeyTargetOptions

    @Flag(help: "Print a JSON object {address, signature, path, kind, coin, public_key}.")
    var json = false

    func validate() throws {
        _ = try plan()
    }

    func plan() throws -> KeyTarget {
        if source.kind == .xpub { throw ValidationError("an --xpub holds no private key and cannot sign; use the mnemonic (KEYHOST_MNEMONIC or --mnemonic-env VAR) or --card") }
        let target = try KeyTarget.address(self.target, source: source.kind, xpub: nil)
        if target.kind == .p2tr {
            throw ValidationError("Taproot (p2tr) keys have no legacy signed-message format and BIP322 is not supported; "
                + "sign with a p2wpkh, p2sh-p2wpkh or p2pkh key (e.g. --path m/84'/0'/0'/0/0)")
        }
        return target
    }

    func run() throws {
        try Failure.exitOnError {
            let target = try plan()
            let bytes = try message.bytes()
            let keys = try KeySource.open(source)
            defer { keys.close() }
            let ethereum = target.kind == .ethereum
            let digest = ethereum ? EthereumMessage.hash(bytes) : BitcoinMessage.hash(bytes)
            let (signature, publicKey) = try keys.sign(digest: digest, at: target.path)
            let address = try Address.encode(publicKey, kind: target.kind, coin: target.coin)
            let text: String
            if ethereum {
                text = "0x" + Hex.encode(signature.rsv)
                guard try EthereumMessage.recoverAddress(bytes, signature: signature.rsv) == address else {
                    throw Failure.kind("wrong_signer", "the signature does not recover to \(address); nothing was printed")
                }
            } else {
                text = try BitcoinMessage.encode(signature, kind: target.kind, compressed: true)
                // A check that costs one recovery: a card's answer or a header choice that went wrong never leaves keyhost.
                guard try BitcoinMessage.verify(bytes, signature: text, address: address, coin: target.coin) else {
                    throw Failure.kind("wrong_signer", "the signature does not verify for \(address); nothing was printed")
                }
            }
            guard json else { print(text); return }
            print(Record.object([("address", .string(address)), ("signature", .string(text)), ("path", .string(target.path.description)),
                                 ("kind", .string(target.kind.rawValue)), ("coin", .string(target.coinName)),
                                 ("public_key", .bytes(publicKey.compressed))]).json())
        }
    }
}
