import KeyhostRecord
import ArgumentParser
import KeyhostServices
import KeyhostCrypto
import KeyhostWallet

/// `keyhost token wallet init|info`.
struct TokenWalletCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wallet",
        abstract: "Create a token wallet or show what it holds.",
        subcommands: [Init.self, Info.self]
    )

    struct Init: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "init",
            abstract: "Create a wallet with a new holder key (kept in the wallet file, mode 0600), or bound to a Keycard's key.",
            discussion: """
                Tokens are issued to the holder public key this prints; give it to issuers ('keyhost token issue --to KEY'). \
                With --card the holder key is the card's key at --path: the wallet keeps only its public key, the card's key \
                UID and the path, and every run signs its receipt on that card. The PIN and pairing password come from \
                KEYHOST_PIN / KEYHOST_PAIRING_PASSWORD or a prompt that does not echo.
                """
            + "\n" + HelpExamples.text(
                "keyhost token wallet init",
                "keyhost token wallet init --wallet card.db --card --path \"m/44'/60'/0'/0/0\" --reader virtual --card-state c.json")
    )
        @OptionGroup var options: WalletOptions
        @Flag(help: "Bind the wallet to a Keycard's key instead of a new software key.") var card = false
        @OptionGroup var cardOptions: TokenCardOptions
        @Option(help: ArgumentHelp("With --card: the holder key's derivation path on the card.", valueName: "path"))
        var path: String?
        @Flag(help: "Print JSON.") var json = false

        var usesCard: Bool { card || cardOptions.selectsCard }

        func validate() throws {
            // --reader, --card-state and the other card options imply --card.
            if usesCard && path == nil { throw ValidationError("--card needs --path, the holder key's derivation path (e.g. \"m/44'/60'/0'/0/0\")") }
            if !usesCard && path != nil { throw ValidationError("--path goes with --card") }
            try cardOptions.requireCard(usesCard)
            try cardOptions.validate()
        }

        func run() throws {
            try Failure.exitOnError {
                let walletPath = try options.path()
                var binding: (publicKey: PublicKey, keyUID: [UInt8], path: String)?
                if usesCard, let path {
                    let connection = try cardOptions.openSigner()
                    defer { connection.close() }
                    binding = try CardHolder.binding(connection.signer, path: path)
                }
                let wallet = try TokenWallet.create(path: walletPath, card: binding)
                try TokenWalletCommand.show(wallet, path: walletPath, json: json)
            }
        }
    }

    struct Info: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "info", abstract: "Show the wallet's holder key, tokens by state and trusted issuers.")
        @OptionGroup var options: WalletOptions
        @Flag(help: "Print JSON (holder, holder_kind, tokens, trusted_issuers).") var json = false

        func run() throws {
            try Failure.exitOnError {
                let path = try options.path()
                try TokenWalletCommand.show(try TokenWallet(path: path), path: path, json: json)
            }
        }
    }

    static func show(_ wallet: TokenWallet, path: String, json: Bool) throws {
        let holder = try wallet.holder()
        let (tokens, damaged) = try wallet.store.listing()
        var counts: [String: Int] = ["held": 0, "pending": 0, "spent": 0, "damaged": damaged.count]
        for t in tokens { counts[t.state.rawValue.lowercased(), default: 0] += 1 }
        let trusted = try wallet.store.trustedIssuers().map { Hex.encode($0) }
        if json {
            var out: Record = [
                "wallet": .string(path), "holder": .bytes(holder.publicKey.compressed), "holder_kind": .string(holder.kind),
                "tokens": .object(counts.map { ($0.key, .count($0.value)) }), "trusted_issuers": .strings(trusted),
            ]
            if case .card(_, let uid, let keyPath) = holder { out = out.setting("card_key_uid", .bytes(uid)).setting("card_path", .string(keyPath)) }
            print(out.json())
            return
        }
        print("wallet      \(path)")
        print("holder      \(Hex.encode(holder.publicKey.compressed)) (\(holder.kind))")
        if case .card(_, let uid, let keyPath) = holder { print("card        key \(Hex.encode(uid)), path \(keyPath)") }
        print("tokens      \(counts["held"]!) held, \(counts["pending"]!) pending, \(counts["spent"]!) spent"
              + (damaged.isEmpty ? "" : ", \(damaged.count) damaged (set aside; 'keyhost token list' says why)"))
        print("trusted     \(trusted.isEmpty ? "no issuer (bytecode tokens are refused)" : trusted.joined(separator: "\n            "))")
    }
}

/// The Keycard of a card-bound wallet, opened as every command opens a card (`CardOptions`).
typealias TokenCardOptions = CardOptions
