import ArgumentParser
import KeyhostRecord
import KeyhostCrypto
import KeyhostPlayer
import KeyhostTokens
import KeyhostWallet
import KeyhostWorkerProcess

/// `keyhost token deposit-chains ID…`: hands HELD tokens to their issuer (one run each, a transfer
/// to the issuer's deposit key) and prints the deposit chains, one `khchain1:` a line, for
/// `keyhost token deposit FILE --ledger …`.
struct TokenDepositChains: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "deposit-chains",
        abstract: "Hand tokens to their issuer for deposit: one 'khchain1:' line per token, for 'keyhost token deposit'.",
        discussion: """
            Each HELD token is run once with a transfer to its issuer's deposit key (02‖issuer); a token already \
            handed over prints the same chain again, so a lost file can be made again. Tokens are named by id: \
            the full 64 hex digits or a unique prefix of at least 4.
            """
    )
    @OptionGroup var options: WalletOptions
    @OptionGroup var cardOptions: TokenCardOptions
    @Argument(help: ArgumentHelp("Tokens to deposit (hex id or unique prefix).", valueName: "id")) var ids: [String]
    @Option(name: [.short, .long], help: ArgumentHelp("Write the chains to this new file (mode 0600).", valueName: "file")) var output: String?
    @Flag(help: "Print JSON {chains, tokens, file}.") var json = false

    func validate() throws {
        guard !ids.isEmpty else { throw ValidationError("name at least one token to deposit") }
        try cardOptions.validate()
    }

    func run() throws {
        try Failure.exitOnError {
            // Started first, so the fork server gets ready while the wallet is opened and checked.
            let runner = WorkerRunner.forkingCurrent()
            runner.start()
            defer { runner.stop() }
            let wallet = try options.open()
            let tokens = try ids.map { try wallet.store.find(idPrefix: $0).id }
            let holder = try HolderSession(wallet: wallet, card: cardOptions)
            defer { holder.close() }
            let chains = try wallet.depositChains(ids: tokens, now: currentUnixTime(), signer: holder.signer, runner: runner.run)
            let text = chains.map { $0.armored + "\n" }.joined()
            if let output { try OutputFile.create(output, text: text) }
            if json {
                print(Record.object([
                    ("chains", .array(chains.map { .string($0.armored) })), ("tokens", .array(chains.map { .bytes($0.token.token.id) })),
                    ("file", .string(output)),
                ]).json())
            } else if let output {
                OutputFile.note("\(chains.count) deposit chain\(chains.count == 1 ? "" : "s") into \(output)")
            } else {
                print(text, terminator: "")
            }
        }
    }
}
