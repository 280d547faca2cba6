import KeyhostServices
import ArgumentParser
import KeyhostRecord
import KeyhostCrypto
import KeyhostTokens
import KeyhostWallet

/// `keyhost token import FILE…`.
struct TokenImport: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Add the tokens of files to the wallet, after checking each (signature, holder, bytecode trust).",
        discussion: """
            Every file is read and every token checked before any is added (as deposit reads all its files first): \
            one bad token refuses the whole import, exit 1. Importing a token again changes nothing (exit 0).
            Examples:
              keyhost token import voucher.tok
              keyhost token import *.tok --json
            """
    )
    @OptionGroup var options: WalletOptions
    @Argument(help: ArgumentHelp("Files of armoured tokens, or - for standard input.", valueName: "file")) var files: [String]
    @Flag(help: "Print JSON.") var json = false

    func validate() throws {
        if files.isEmpty { throw ValidationError("give at least one token file (or - for standard input)") }
    }

    func run() throws {
        try Failure.exitOnError {
            let wallet = try options.open()
            let tokens = try files.flatMap { file in try TokenArmor.tokens(in: try readTokenFile(file), source: file) }
            let results = try wallet.importTokens(tokens, now: currentUnixTime())
            var rows: [Record] = []
            for (signed, result) in zip(tokens, results) {
                let id = Hex.encode(signed.token.id)
                let state: String
                switch result {
                case .added: state = "added"
                case .alreadyPresent(let s): state = "already in the wallet (\(s.rawValue))"
                }
                if json { rows.append(["id": .bytes(signed.token.id), "result": result == .added ? "added" : "already_present"]) } else {
                    print("\(id)  \(signed.token.value) \(signed.token.unit)  \(state)")
                }
            }
            if json { print(Record.object([("imported", .array(rows))]).json()) }
        }
    }
}

/// `keyhost token list`.
struct TokenList: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the wallet's tokens with their state.")
    @OptionGroup var options: WalletOptions
    @Flag(help: "Print JSON.") var json = false

    func run() throws {
        try Failure.exitOnError {
            let wallet = try options.open()
            let (tokens, damaged) = try wallet.store.listing()
            if json {
                print(Record.object([("tokens", .array(tokens.map(Record.init(storedToken:))
                    + damaged.map { Record(damagedToken: $0.id, reason: $0.reason) }))]).json())
                return
            }
            if tokens.isEmpty && damaged.isEmpty { print("no tokens (import some with 'keyhost token import FILE')") }
            for stored in tokens {
                let t = stored.token.token
                var line = "\(Hex.encode(t.id))  \(stored.state.rawValue.padding(7))  \(t.value) \(t.unit)"
                if let expires = t.expires { line += "  until \(UnixTime.iso8601(expires))" }
                if let spent = stored.spentAt { line += "  spent \(UnixTime.iso8601(spent))" }
                print(line)
            }
            // Set aside, never run: listed so that a row that vanished from the list is explained.
            for row in damaged {
                print("\(Hex.encode(row.id))  DAMAGED  \(TerminalText.escaped(row.reason))")
            }
        }
    }
}

/// `keyhost token trust ISSUER`.
struct TokenTrust: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trust",
        abstract: "Trust an issuer: its tokens may carry Lua bytecode (which Lua does not verify).",
        discussion: "Trust only issuers you would let run native code: a hostile bytecode chunk can corrupt the worker's memory."
    )
    @OptionGroup var options: WalletOptions
    @Argument(help: ArgumentHelp("The issuer's x-only public key, 32 bytes in hex.", valueName: "issuer")) var issuer: String
    @Flag(help: "Stop trusting the issuer instead.") var remove = false
    @Flag(help: "Print JSON {issuer, trusted}.") var json = false

    func run() throws {
        try Failure.exitOnError {
            guard let bytes = try? Hex.decode(issuer), bytes.count == 32, (try? XOnlyPublicKey(bytes: bytes)) != nil else {
                throw Failure.kind("invalid_argument", "the issuer must be an x-only public key, 32 bytes in hex (64 digits), got \(issuer.prefix(80).debugDescription)")
            }
            let wallet = try options.open()
            if remove {
                try wallet.store.distrust(issuer: bytes)
            } else {
                try wallet.store.trust(issuer: bytes, now: currentUnixTime())
            }
            if json {
                print(Record.object([("issuer", .bytes(bytes)), ("trusted", .bool(!remove))]).json())
            } else {
                print("\(remove ? "no longer trusted" : "trusted"): \(Hex.encode(bytes))")
            }
        }
    }
}
