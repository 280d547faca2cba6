import KeyhostServices
import ArgumentParser
import KeyhostRecord
import KeyhostCrypto
import KeyhostPlayer
import KeyhostTokens
import KeyhostWallet
import KeyhostWorkerProcess

/// `keyhost token run ID…`: runs tokens once each, in worker processes, and commits their effects.
struct TokenRun: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run a token's program once: its effects and its SPENT state are committed together.",
        discussion: """
            The program runs in a separate sandboxed worker process; a failure, limit, crash or Ctrl-C leaves the \
            token HELD with no effects. The effects are printed only after the commit, with the receipt's id; \
            --receipt writes the holder-signed receipt (check it with 'keyhost token verify-receipt'). A card-bound \
            wallet signs the receipt on its Keycard (--reader, --card-state; PIN and pairing password from KEYHOST_PIN / \
            KEYHOST_PAIRING_PASSWORD or a prompt): the card must hold the wallet's key, else nothing runs.

            Several ids run as one batch: each token runs on its own (its own worker, checks and receipt), and every \
            run that completed is committed in one durable transaction. A token that fails stays HELD and is reported \
            (exit status 1) without holding back the others. The same --arg/--int go to every program.
            """
            + "\n" + HelpExamples.text(
                "keyhost token run 3fa9c1 --arg shop=bakery --receipt r.rcpt",
                "keyhost token run 3fa9c1 77b0e2 --json             # a batch: one commit for all")
    )
    @OptionGroup var options: WalletOptions
    @OptionGroup var cardOptions: TokenCardOptions
    @Argument(help: ArgumentHelp("Token ids, or unique prefixes of at least 4 hex digits.", valueName: "id")) var ids: [String]
    @Option(name: .customLong("arg"), help: ArgumentHelp("An argument for the program, as text (repeatable).", valueName: "key=value"))
    var textArguments: [String] = []
    @Option(name: .customLong("int"), help: ArgumentHelp("An integer argument for the program (repeatable).", valueName: "key=n"))
    var integerArguments: [String] = []
    @Option(help: ArgumentHelp("Write the receipt to this new file (mode 0600).", valueName: "file")) var receipt: String?
    @Flag(help: "Print JSON (token_id, receipt_id, now, effects, receipt).") var json = false

    func validate() throws {
        try cardOptions.validate()
        guard !ids.isEmpty else { throw ValidationError("name the token to run (its id, or a prefix of at least 4 hex digits)") }
        if ids.count > 1, receipt != nil {
            throw ValidationError("--receipt writes one token's receipt; with several tokens, use --json (each result has its receipt)")
        }
        for item in textArguments + integerArguments {
            guard let eq = item.firstIndex(of: "="), eq != item.startIndex else {
                throw ValidationError("arguments are key=value, got \(item.prefix(40).debugDescription)")
            }
        }
        for item in integerArguments where Int64(item[item.index(after: item.firstIndex(of: "=")!)...]) == nil {
            throw ValidationError("--int needs an integer value, got \(item.prefix(40).debugDescription)")
        }
    }

    var arguments: CBORValue {
        var pairs: [String: CBORValue] = [:]
        for item in textArguments {
            let eq = item.firstIndex(of: "=")!
            pairs[String(item[..<eq])] = .text(String(item[item.index(after: eq)...]))
        }
        for item in integerArguments {
            let eq = item.firstIndex(of: "=")!
            pairs[String(item[..<eq])] = .int(Int64(item[item.index(after: eq)...])!)
        }
        return .map(pairs.map { CBORPair(.text($0.key), $0.value) })
    }

    func run() throws {
        try Self.execute(ids: ids, arguments: arguments, receipt: receipt, json: json, wallet: options.wallet, card: cardOptions)
    }

    /// The plain shape scripts loop over, `keyhost token run [--wallet PATH] ID…` and nothing else,
    /// read without the argument parser (whose set-up is a tenth of a short batch's time). Anything
    /// else, a typo included, is nil and goes to the parser, which reports it as it always has.
    struct Plain: Equatable {
        let wallet: String?
        let ids: [String]

        init(wallet: String?, ids: [String]) {
            self.wallet = wallet
            self.ids = ids
        }

        init?(_ arguments: [String]) {
            var wallet: String?, ids: [String] = [], rest = arguments[...]
            while let argument = rest.popFirst() {
                if argument == "--wallet", wallet == nil, let path = rest.popFirst(), !path.isEmpty, !path.hasPrefix("-") {
                    wallet = path
                } else if argument.hasPrefix("--wallet="), wallet == nil, argument.count > "--wallet=".count {
                    wallet = String(argument.dropFirst("--wallet=".count))
                } else if !argument.isEmpty, !argument.hasPrefix("-") {
                    ids.append(argument)
                } else {
                    return nil
                }
            }
            guard !ids.isEmpty else { return nil }
            self.init(wallet: wallet, ids: ids)
        }

        func run() throws {
            try TokenRun.execute(ids: ids, arguments: .map([]), receipt: nil, json: false, wallet: wallet, card: nil)
        }
    }

    /// The command with its options read: `card` nil when none was given.
    static func execute(ids: [String], arguments: CBORValue, receipt: String?, json: Bool, wallet walletPath: String?,
                        card: TokenCardOptions?) throws {
        try Failure.exitOnError {
            // The workers are started first, so that they get ready while the wallet is opened and
            // checked; and forked from this process while it is single-threaded and holds no secret
            // and no open file, so that a short batch does not pay a whole keyhost start per worker.
            let lanes = WorkerRunner.batchLanes(for: ids.count, forkingTo: { TokenWorkerCommand.serve(fork: false, serving: true) })
            defer { WorkerRunner.stop(lanes) }
            let runner = lanes[0]
            let wallet = try WalletOptions.open(given: walletPath)
            let holder = try HolderSession(wallet: wallet, card: card)
            defer { holder.close() }
            let found = try ids.map { try wallet.store.find(idPrefix: $0) }
            let signer = holder.signer
            guard found.count > 1 else {
                let result = try wallet.run(id: found[0].id, arguments: arguments, now: currentUnixTime(), signer: signer, runner: runner.run)
                if let receipt {
                    try OutputFile.create(receipt, text: result.receipt.armored + "\n")
                }
                if json { print(Self.record(result.receipt, file: receipt).json()) } else { Self.show(result.receipt) }
                return
            }
            let items = found.map { TokenWallet.RunItem($0, arguments: arguments) }
            let results = try wallet.runMany(items, now: currentUnixTime(), signer: signer, runners: lanes.map { $0.run })
            var failed = 0
            var records: [Record] = []
            for (item, result) in zip(items, results) {
                switch result {
                case .success(let run):
                    if json { records.append(Self.record(run.receipt, file: nil)) } else { Self.show(run.receipt) }
                case .failure(let error):
                    failed += 1
                    if json {
                        records.append(.object([("token_id", .bytes(item.id)), ("error", error.errorRecord)]))
                    } else {
                        Failure.report(error)
                    }
                }
            }
            if json { print(Record.array(records).json()) }
            if failed > 0 {
                if !json { Failure.report(Failure.kind("partial", "\(failed) of \(items.count) tokens did not run (they stay HELD or were spent already); the other \(items.count - failed) are SPENT")) }
                throw ExitCode(1)
            }
        }
    }

    static func record(_ signed: SignedReceipt, file: String?) -> Record {
        .object([
            ("token_id", .bytes(signed.receipt.token.token.id)), ("receipt_id", .bytes(signed.id)), ("now", .integer(signed.receipt.now)),
            ("effects", .array(signed.receipt.effects.map(Record.init(cbor:)))), ("receipt", .string(signed.armored)), ("file", .string(file)),
        ])
    }

    static func show(_ signed: SignedReceipt) {
        print("ran token \(Hex.encode(signed.receipt.token.token.id)): SPENT, receipt \(Hex.encode(signed.id))")
        for (i, effect) in signed.receipt.effects.enumerated() {
            print("effect \(i + 1): \(effect.diagnostic)")
        }
    }
}

/// `keyhost token receipt ID`: the receipt of a spent token.
struct TokenReceipt: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "receipt", abstract: "Print the holder-signed receipt of a spent token.")
    @OptionGroup var options: WalletOptions
    @Argument(help: ArgumentHelp("The token id, or a unique prefix of at least 4 hex digits.", valueName: "id")) var id: String
    @Option(name: [.short, .long], help: ArgumentHelp("Write it to this new file (mode 0600).", valueName: "file")) var output: String?
    @Flag(help: "Print JSON {receipt, receipt_id, token_id, file}.") var json = false

    func run() throws {
        try Failure.exitOnError {
            let wallet = try options.open()
            let stored = try wallet.store.find(idPrefix: id)
            guard let receipt = try wallet.receipt(id: stored.token.token.id) else {
                throw Failure.kind("not_found", "token \(Hex.encode(stored.token.token.id)) has not run (it is \(stored.state.rawValue)): it has no receipt")
            }
            if let output { try OutputFile.create(output, text: receipt.armored + "\n") }
            if json {
                print(Record.object([
                    ("receipt", .string(receipt.armored)), ("receipt_id", .bytes(receipt.id)), ("token_id", .bytes(receipt.receipt.token.token.id)),
                    ("file", .string(output)),
                ]).json())
            } else if let output {
                OutputFile.note("receipt \(Hex.encode(receipt.id.prefix(8)))… of token \(Hex.encode(receipt.receipt.token.token.id.prefix(8)))… into \(output)")
            } else {
                print(receipt.armored)
            }
        }
    }
}

/// `keyhost token verify-receipt FILE`.
struct TokenVerifyReceipt: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify-receipt",
        abstract: "Check receipts without trusting the wallet: both signatures, then re-run the program and compare the effects.",
        discussion: """
            Each file is checked on its own (as deposit and run treat theirs). Exit status 0 when every receipt holds, \
            1 when any does not (or cannot be read). --json prints one receipt's verdict as {valid, …}; with several \
            files {results: [{file, valid, …} or {file, valid: false, error}]}.
            Examples:
              keyhost token verify-receipt r.rcpt
              keyhost token verify-receipt receipts/*.rcpt --json
            """
    )
    @Argument(help: ArgumentHelp("Receipt files ('khrcpt1:…'), or - for standard input.", valueName: "file")) var files: [String]
    @Flag(help: "Allow the token's program to be bytecode (only for issuers you trust).") var trustBytecode = false
    @Flag(help: "Print JSON.") var json = false

    func validate() throws {
        if files.isEmpty { throw ValidationError("give at least one receipt file (or - for standard input)") }
    }

    func run() throws {
        var failed = false
        try Failure.exitOnError {
            // Started first, so the fork server gets ready while the receipts are read and checked.
            let runner = WorkerRunner.forkingCurrent()
            runner.start()
            defer { runner.stop() }
            var verdicts = FileVerdicts(json: json, count: files.count)
            for file in files {
                try verdicts.judge(file) { try check(file, runner: runner) }
            }
            verdicts.printJSON()
            failed = verdicts.failed
        }
        if failed { throw ExitCode(1) }
    }

    /// One receipt checked: whether it holds, and its fields (printed as text unless --json).
    private func check(_ file: String, runner: WorkerRunner) throws -> (Bool, [(String, Record)]) {
        let receipt = try SignedReceipt(armored: try readTokenFile(file), source: file)
        let report = ReceiptVerifier(runner: runner.run).verify(receipt, bytecodeAllowed: trustBytecode)
        if !json {
            if files.count > 1 { print("\(file):") }
            print("receipt \(Hex.encode(receipt.id)) for token \(Hex.encode(receipt.receipt.token.token.id))")
            print("  issuer signature  \(report.issuerSignatureValid ? "valid" : "INVALID")")
            print("  holder signature  \(report.holderSignatureValid ? "valid" : "INVALID")")
            print("  re-run effects    \(report.effectsMatch.map { $0 ? "match (\(receipt.receipt.effects.count) records)" : "DIFFER" } ?? "not compared")")
            for problem in report.problems { print("  problem: \(problem)") }
            print(report.isValid ? "valid" : "NOT VALID")
        }
        return (report.isValid, [
            ("valid", .bool(report.isValid)), ("issuer_signature_valid", .bool(report.issuerSignatureValid)),
            ("holder_signature_valid", .bool(report.holderSignatureValid)), ("problems", .strings(report.problems)),
            ("effects_match", report.effectsMatch.map(Record.bool) ?? .null),
            ("token_id", .bytes(receipt.receipt.token.token.id)), ("receipt_id", .bytes(receipt.id)),
        ])
    }
}
