import ArgumentParser
import KeyhostServices
import KeyhostBitcoin
import KeyhostBitcoinCard
import KeyhostCrypto

/// Where signing keys come from for `keyhost psbt`: the key sources every signing command shares (SigningKeyOptions).
struct PSBTKeyOptions: ParsableArguments {
    @OptionGroup var key: SigningKeyOptions

    var given: Bool { key.given }

    /// The key source, opened (mnemonic read and checked, card PIN verified); `close` releases it. Without `required`
    /// (inspect marks inputs as ours only when a key is named) nil when none is named; with it, the mnemonic is asked
    /// on the terminal as for every command that takes a key.
    func open(required: Bool) throws -> (source: PSBTKeySource, connection: SigningCard?)? {
        guard required || given else { return nil }
        switch try key.open() {
        case .seed(let master):
            return (try HDKeySource(master: master), nil)
        case .card(let connection):
            do {
                return (try PSBTCardKeySource(signer: connection.signer), connection)
            } catch {
                connection.close()
                throw error
            }
        }
    }
}
