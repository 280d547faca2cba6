import ArgumentParser
import KeyhostHTTP
import KeyhostServices
import KeyhostCrypto
import KeyhostLedger
import KeyhostPlayer
import KeyhostRecord
import KeyhostTokens
import KeyhostWorkerProcess

#if canImport(Glibc)
import Glibc
import KeyhostWallet
#endif

/// `keyhost token deposit FILE… --ledger …`.
struct TokenDeposit: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "deposit",
        abstract: "Hand tokens to the issuer's ledger: deposit chains ('khchain1:' files) or tokens of this wallet by id.",
        discussion: """
            A token id (a unique hex prefix of a token in the wallet) is first handed to its issuer as \
            'keyhost token deposit-chains' does (run once; again: the same chain), so a failed send can simply be \
            repeated. --ledger is a ledger service (http://HOST:PORT), or its database (sqlite:FILE, postgres://USER@HOST:PORT/DB), \
            verified and recorded in this process with the --issuer keys it serves. Exit status 0 when every token was \
            accepted or already deposited, 1 on any double spend or error. A double spend's proof is checked here \
            before it is printed or written.
            """
            + "\n" + HelpExamples.text(
                "keyhost token deposit payment.khchain --ledger http://ledger.example:8080",
                "keyhost token deposit 3fa9c1 --ledger sqlite:ledger.db --issuer 5f2c…issuer… --proofs proofs/ --json")
    )
    @Argument(help: ArgumentHelp("Files of armoured chains (one 'khchain1:' a line), or ids of tokens in the wallet.", valueName: "file|id")) var files: [String]
    @OptionGroup var options: WalletOptions
    @OptionGroup var cardOptions: TokenCardOptions
    @Option(help: ArgumentHelp("http://HOST:PORT, sqlite:FILE or postgres://USER@HOST:PORT/DB.", valueName: "ledger")) var ledger: String
    @Option(help: ArgumentHelp("With a database: an issuer the ledger serves (x-only key, hex). Repeat for several.", valueName: "hex")) var issuer: [String] = []
    @OptionGroup var proxyOptions: ProxyOptions
    @Option(help: ArgumentHelp("Write each double spend's proof into this folder (created 0700; files 0600).", valueName: "dir")) var proofs: String?
    @Flag(help: "Print JSON.") var json = false

    /// Deposit chains for wallet tokens: each HELD one is handed to its issuer (one run), a token
    /// already handed over gives its chain again.
    private func walletChains(_ ids: [String]) throws -> [TokenChain] {
        let wallet = try options.open()
        let tokens = try ids.map { try wallet.store.find(idPrefix: $0).id }
        let holder = try HolderSession(wallet: wallet, card: cardOptions)
        defer { holder.close() }
        let runner = WorkerRunner(executable: WorkerRunner.currentExecutable)
        return try wallet.depositChains(ids: tokens, now: currentUnixTime(), signer: holder.signer, runner: runner.run)
    }

    func run() throws {
        var failed = false
        try Failure.exitOnError {
            // Before any file is read or any token handed over.
            try CommandLinePassword.refuse(ledger, option: "--ledger")
            var chains: [TokenChain] = []
            var ids: [String] = []
            for file in files {
                if file != "-", !SourceFile.exists(file), file.count >= 4, file.allSatisfy(\.isHexDigit) {
                    ids.append(file)
                } else {
                    chains += try TokenChain.chains(in: try readTokenFile(file), source: file)
                }
            }
            if !ids.isEmpty { chains += try walletChains(ids) }
            let rows = try deposit(chains)
            // A proof the ledger returns is checked here, programs re-run, not taken on its word; one warm
            // worker (started only if a proof comes back) serves them all.
            let proofRunner = WorkerRunner(executable: WorkerRunner.currentExecutable, runsPerWorker: 64)
            var out: [Record] = []
            for row in rows {
                var fields: [(String, Record)] = [("token_id", .string(row.tokenID)), ("result", .string(row.result))]
                if let proof = row.proof { fields.append(("proof", .string(proof))) }
                var line = "\(row.tokenID)  \(String(row.result.map { $0 == "_" ? " " : $0 }))"
                if row.result == "double_spend" {
                    failed = true
                    guard let text = row.proof, let proof = try? FraudProof(armored: Array(text.utf8)), let signer = try? proof.verify(bytecodeAllowed: true, runner: proofRunner.run) else {
                        throw Failure.kind("invalid_proof", "token \(row.tokenID): the ledger said double spend but sent no proof that verifies")
                    }
                    fields.append(("signer", .string(Hex.encode(signer.compressed))))
                    line += "  signed twice by \(Hex.encode(signer.compressed))"
                    if let proofs {
                        let path = try ProofFiles.write(proof, into: proofs)
                        fields.append(("proof_file", .string(path)))
                        line += "  proof: \(path)"
                    }
                } else if row.result != "accepted" && row.result != "already_deposited" {
                    failed = true
                }
                if json { out.append(.object(fields)) } else { print(line) }
            }
            if json { print(Record.object([("results", .array(out))]).json()) }
        }
        if failed { throw ExitCode(1) }
    }

    /// Into the ledger: SQLite in this process, PostgreSQL through a keyhost-ledger child, a service over HTTP.
    private func deposit(_ chains: [TokenChain]) throws -> [LedgerResultRow] {
        let issuers = LedgerConnections.isService(ledger) ? [] : try LedgerIssuers.parse(issuer)
        let connection = try LedgerConnections.open(ledger, issuers: issuers, worker: WorkerRunner.currentExecutable,
                                                    proxies: try proxyOptions.settings())
        defer { connection.close() }
        return try connection.depositAll(chains).map { LedgerResultRow($0, chain: TokenChain.self) }
    }
}

/// `keyhost token verify-proof FILE…`.
struct TokenVerifyProof: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify-proof",
        abstract: "Check double-spend proofs ('khproof1:'): prints each token id and the key that signed twice; exit 1 if any is invalid.",
        discussion: """
            Each file is checked on its own (as deposit and run treat theirs): every proof is reported, and the exit \
            status is 0 when all hold, 1 when any does not (or cannot be read). --json prints one file's verdict as \
            {valid, token_id, signer, position, issuer}; with several files {results: [{file, valid, …} or {file, \
            valid: false, error}]}.
            Examples:
              keyhost token verify-proof proofs/*.khproof
              keyhost token verify-proof caught.khproof --json
            """
    )
    @Argument(help: ArgumentHelp("Files holding one proof each, or - for standard input.", valueName: "file")) var files: [String]
    @Flag(help: "Allow the token's program to be bytecode (only for issuers you trust).") var trustBytecode = false
    @Flag(help: "Print JSON.") var json = false

    func validate() throws {
        if files.isEmpty { throw ValidationError("give at least one proof file (or - for standard input)") }
    }

    func run() throws {
        var failed = false
        try Failure.exitOnError {
            // Every link in a proof must come from a run of the token's program: a link signed by hand shows
            // nothing about who spent the token. One warm worker serves every file.
            let runner = WorkerRunner(executable: WorkerRunner.currentExecutable, runsPerWorker: 64)
            var verdicts = FileVerdicts(json: json, count: files.count)
            for file in files {
                try verdicts.judge(file) { (true, try check(file, runner: runner)) }
            }
            verdicts.printJSON()
            failed = verdicts.failed
        }
        if failed { throw ExitCode(1) }
    }

    /// One file's proof, verified; its fields (printed as text unless --json).
    private func check(_ file: String, runner: WorkerRunner) throws -> [(String, Record)] {
        let proof: FraudProof
        let signer: PublicKey
        do {
            proof = try FraudProof(armored: try readTokenFile(file), source: file)
            signer = try proof.verify(bytecodeAllowed: trustBytecode, runner: runner.run)
        } catch let error as TokenError {
            throw Failure.kind("invalid_proof", "\(file): not a valid double-spend proof: \(error.message)")
        }
        let id = Hex.encode(proof.token.token.id)
        let issuer = Hex.encode(proof.token.token.issuer.bytes)
        if !json {
            print("valid proof: token \(id) (issuer \(issuer))")
            print("signed twice by \(Hex.encode(signer.compressed)) at link \(proof.common.count)")
        }
        return [("valid", .bool(true)), ("token_id", .string(id)), ("signer", .string(Hex.encode(signer.compressed))),
                ("position", .integer(Int64(proof.common.count))), ("issuer", .string(issuer))]
    }
}
