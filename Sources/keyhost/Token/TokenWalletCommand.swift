import ArgumentParser
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
            abstract: "Create a wallet with a new holder key (kept in the wallet file, mode 0600).",
            discussion: "Tokens are issued to the holder public key this prints; give it to issuers ('keyhost token issue --to KEY')."
        )
        @OptionGroup var options: WalletOptions
        @Flag(help: "Print JSON.") var json = false

        func run() throws {
            try Failure.exitOnError {
                let path = try options.path()
                let wallet = try TokenWallet.create(path: path)
                try TokenWalletCommand.show(wallet, path: path, json: json)
            }
        }
    }

    struct Info: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show the wallet's holder key, tokens by state and trusted issuers.")
        @OptionGroup var options: WalletOptions
        @Flag(help: "Print JSON (holder_public_key, holder_kind, tokens, trusted_issuers).") var json = false

        func run() throws {
            try Failure.exitOnError {
                let path = try options.path()
                try TokenWalletCommand.show(try TokenWallet(path: path), path: path, json: json)
            }
        }
    }

    static func show(_ wallet: TokenWallet, path: String, json: Bool) throws {
        let holder = try wallet.holder()
        let tokens = try wallet.store.tokens()
        var counts: [String: Int] = ["held": 0, "pending": 0, "spent": 0]
        for t in tokens { counts[t.state.rawValue.lowercased(), default: 0] += 1 }
        let trusted = try wallet.store.trustedIssuers().map(hexString)
        if json {
            var out: [String: Any] = [
                "wallet": path, "holder_public_key": hexString(holder.publicKey.compressed), "holder_kind": holder.kind,
                "tokens": counts, "trusted_issuers": trusted,
            ]
            if case .card(_, let uid, let keyPath) = holder { out["card_key_uid"] = hexString(uid); out["card_path"] = keyPath }
            try printJSON(out)
            return
        }
        print("wallet      \(path)")
        print("holder      \(hexString(holder.publicKey.compressed)) (\(holder.kind))")
        if case .card(_, let uid, let keyPath) = holder { print("card        key \(hexString(uid)), path \(keyPath)") }
        print("tokens      \(counts["held"]!) held, \(counts["pending"]!) pending, \(counts["spent"]!) spent")
        print("trusted     \(trusted.isEmpty ? "no issuer (bytecode tokens are refused)" : trusted.joined(separator: "\n            "))")
    }
}
