import ArgumentParser
import KeyhostServices
import KeyhostWallet

/// The wallet's holder key for one command: the key in the wallet file, or the card it is bound
/// to (opened with the PIN from KEYHOST_PIN or a prompt, and checked to hold the wallet's key
/// before anything runs).
struct HolderSession {
    let signer: ReceiptSigner
    private let connection: SigningCard?

    /// `card`: the command's card options; nil where the command line gave none (the default reader).
    init(wallet: TokenWallet, card: TokenCardOptions?) throws {
        if let software = try wallet.softwareSigner() {
            if card?.given == true {
                throw Failure.kind("invalid_argument", "--reader and --card-state are for card-bound wallets; this wallet's holder key is in the wallet file")
            }
            signer = software
            connection = nil
        } else {
            let opened = try (card ?? TokenCardOptions.parse([])).openSigner()
            do {
                signer = try CardHolder.signer(opened.signer, holder: try wallet.holder())
            } catch {
                opened.close()
                throw error
            }
            connection = opened
        }
    }

    func close() { connection?.close() }
}
