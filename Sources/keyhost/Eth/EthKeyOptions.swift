import ArgumentParser
// ProcessInfo from FoundationEssentials: Foundation proper would link ICU into keyhost.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import KeyhostServices
import KeyhostCard
import KeyhostCrypto

/// Where the signing key comes from: a mnemonic in the environment or a card, and the derivation path.
struct EthKeyOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Read the BIP39 mnemonic from environment variable VAR (default KEYHOST_MNEMONIC when it is set and --card is not given).", valueName: "var"))
    var mnemonicEnv: String?

    @Option(help: ArgumentHelp("With --mnemonic-env: read the BIP39 passphrase from environment variable VAR.", valueName: "var"))
    var passphraseEnv: String?

    @Flag(help: "Sign with a Keycard (PIN from KEYHOST_PIN, else a prompt).")
    var card = false

    /// --reader, --card-state and --trusted-ca, as every command that opens a Keycard takes them.
    @OptionGroup var cardOptions: TokenCardOptions

    @Option(help: ArgumentHelp("The derivation path of the signing key.", valueName: "path"))
    var path = "m/44'/60'/0'/0/0"

    /// --mnemonic-env's variable, or KEYHOST_MNEMONIC by default.
    var mnemonicVariable: String? { SecretEnvironment.mnemonicVariable(mnemonicEnv, otherSource: usesCard) }

    /// --card, or --reader / --card-state, which imply it.
    var usesCard: Bool { card || cardOptions.selectsCard }

    func validate() throws {
        if usesCard && mnemonicEnv != nil { throw ValidationError("give one key source: --card or --mnemonic-env VAR, not both") }
        if !usesCard && mnemonicVariable == nil {
            throw ValidationError("give a key source: --mnemonic-env VAR (or set KEYHOST_MNEMONIC) or --card")
        }
        if passphraseEnv != nil && mnemonicVariable == nil { throw ValidationError("--passphrase-env goes with --mnemonic-env") }
        try cardOptions.requireCard(usesCard)
        do { _ = try DerivationPath(path) } catch { throw ValidationError("--path \(path): \(error)") }
    }

    /// A signer for 32-byte digests; `close` releases the card. The address is the signer's, for output and checks.
    func signer() throws -> EthDigestSigner {
        if let mnemonicEnv = mnemonicVariable {
            let phrase = try environmentValue(mnemonicEnv, what: "the mnemonic")
            let mnemonic: Mnemonic
            do { mnemonic = try Mnemonic(phrase: phrase) } catch {
                throw Failure.message("the mnemonic in \(mnemonicEnv) is not a valid BIP39 phrase (\(Discover.redacted(error, phrase)))")
            }
            let passphrase = try passphraseEnv.map { try environmentValue($0, what: "the BIP39 passphrase") } ?? ""
            let node = try HDNode(seed: mnemonic.seed(passphrase: passphrase)).derive(path)
            guard let key = node.privateKey else { throw Failure.message("the derived node has no private key") }
            return EthDigestSigner(sign: { try key.signRecoverable(digest: $0) }, close: {})
        }
        // The path is checked before the card is opened, so a bad path costs no PIN entry.
        let keyPath: KeyPath
        do { keyPath = try KeyPath(path) } catch { throw Failure.message("--path \(path) cannot be sent to the card: \(error)") }
        let connection = try cardOptions.connect()
        return EthDigestSigner(sign: { digest in try connection.card.sign(digest: digest, mode: .derive(keyPath)).signature },
                               close: { connection.close() })
    }

    private func environmentValue(_ variable: String, what: String) throws -> String {
        guard let value = ProcessInfo.processInfo.environment[variable], !value.isEmpty else {
            throw Failure.message("the environment variable \(variable) (\(what)) is not set or empty; export \(variable)=...")
        }
        return value
    }
}

struct EthDigestSigner {
    let sign: ([UInt8]) throws -> RecoverableSignature
    let close: () -> Void
}
