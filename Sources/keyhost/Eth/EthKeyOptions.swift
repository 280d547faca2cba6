import ArgumentParser
import KeyhostServices
import KeyhostCard
import KeyhostCrypto

/// Where the signing key comes from (the key sources every signing command shares), and its derivation path.
struct EthKeyOptions: ParsableArguments {
    @OptionGroup var key: SigningKeyOptions

    @Option(help: ArgumentHelp("The derivation path of the signing key.", valueName: "path"))
    var path = "m/44'/60'/0'/0/0"

    func validate() throws {
        do { _ = try DerivationPath(path) } catch { throw ValidationError("--path \(path): \(error)") }
        // The path is checked before the card is opened, so a bad path costs no PIN entry.
        if key.usesCard {
            let keyPath: KeyPath
            do { keyPath = try KeyPath(path) } catch { throw ValidationError("--path \(path) cannot be sent to the card: \(error)") }
            guard keyPath.source == .master else { throw ValidationError("--path \(path) must start at the master key (m/…) to be sent to the card") }
        }
    }

    /// A signer for 32-byte digests; `close` releases the card.
    func signer() throws -> EthDigestSigner {
        switch try key.open() {
        case .seed(let master):
            let node = try master.derive(DerivationPath(path))
            guard let privateKey = node.privateKey else { throw Failure.kind("unsupported", "the derived node has no private key") }
            return EthDigestSigner(sign: { try privateKey.signRecoverable(digest: $0) }, close: {})
        case .card(let connection):
            let components = try KeyPath(path).components
            let signer = connection.signer
            try connection.frontEnd.mapping(nil) { try signer.check(.signECDSA, path: components) }
            return EthDigestSigner(sign: { digest in try signer.signECDSA(digest: digest, at: components).signature },
                                   close: { connection.close() })
        }
    }
}

struct EthDigestSigner {
    let sign: ([UInt8]) throws -> RecoverableSignature
    let close: () -> Void
}
