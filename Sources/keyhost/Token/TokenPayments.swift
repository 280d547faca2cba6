import KeyhostServices
import ArgumentParser
import KeyhostRecord
import KeyhostCrypto
import KeyhostPlayer
import KeyhostTokens
import KeyhostWallet
import KeyhostWorkerProcess

/// `keyhost token keys --count N`: one-time exchange keys to be paid to.
struct TokenKeys: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "Make one-time exchange keys (m/7419'/1'/i' of the wallet's exchange seed) for payers to pay to.",
        discussion: "Requests make their own keys; these are for issuers and payers who take a bare key."
    )
    @OptionGroup var options: WalletOptions
    @Option(parsing: .unconditional, help: ArgumentHelp("How many keys, 1 to 256.", valueName: "n")) var count = 1
    @Flag(help: "Print JSON.") var json = false

    func validate() throws {
        guard (1...PaymentRequest.maxKeys).contains(count) else { throw ValidationError("--count must be between 1 and \(PaymentRequest.maxKeys), got \(count)") }
    }

    func run() throws {
        try Failure.exitOnError {
            let keys = try options.open().newExchangeKeys(count: count, now: currentUnixTime())
            if json { print(Record.object([("keys", .array(keys.map { .bytes($0.compressed) }))]).json()) } else { keys.forEach { print(Hex.encode($0.compressed)) } }
        }
    }
}

/// `keyhost token request --amount A --unit U --issuer X`: a signed payment request.
struct TokenRequest: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "request",
        abstract: "Ask to be paid: a request signed by this wallet with new one-time exchange keys ('khreq1:…').",
        discussion: "Give the request to the payer ('keyhost token pay FILE'); receive their payment with 'keyhost token receive'."
    )
    @OptionGroup var options: WalletOptions
    @OptionGroup var cardOptions: TokenCardOptions
    @Option(parsing: .unconditional, help: ArgumentHelp("The amount, in the unit's smallest denomination.", valueName: "n")) var amount: UInt64
    @Option(help: ArgumentHelp("The unit, e.g. EUR-cent.", valueName: "unit")) var unit: String
    @Option(help: ArgumentHelp("An issuer whose tokens you accept: x-only key in hex (repeatable).", valueName: "hex")) var issuer: [String] = []
    @Option(parsing: .unconditional, help: ArgumentHelp("Exchange keys to offer: the most tokens the payer may use.", valueName: "n")) var keys = 8
    @Option(help: ArgumentHelp("Valid until: Unix seconds, YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ (default: one day).", valueName: "time")) var expires: String?
    @Option(help: ArgumentHelp("A note for the payer (up to 256 bytes).", valueName: "text")) var memo: String?
    @Option(name: [.short, .long], help: ArgumentHelp("Write the request to this new file (mode 0600).", valueName: "file")) var output: String?
    @Flag(help: "Print JSON {request, amount, unit, keys, expires, payee, file}.") var json = false

    func validate() throws {
        guard amount > 0 else { throw ValidationError("--amount must be more than 0") }
        guard !issuer.isEmpty else { throw ValidationError("give at least one --issuer whose tokens you accept") }
        guard (1...PaymentRequest.maxKeys).contains(keys) else { throw ValidationError("--keys must be between 1 and \(PaymentRequest.maxKeys), got \(keys)") }
        if let expires, UnixTime.parse(expires) == nil { throw ValidationError("--expires must be Unix seconds, YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ") }
        try cardOptions.validate()
    }

    func run() throws {
        try Failure.exitOnError {
            let issuers = try issuer.map { text -> XOnlyPublicKey in
                guard let bytes = try? Hex.decode(text), bytes.count == 32, let key = try? XOnlyPublicKey(bytes: bytes) else {
                    throw Failure.kind("invalid_argument", "--issuer must be an x-only public key, 32 bytes in hex, got \(text.prefix(80).debugDescription)")
                }
                return key
            }
            let wallet = try options.open()
            let holder = try HolderSession(wallet: wallet, card: cardOptions)
            defer { holder.close() }
            let now = currentUnixTime()
            let request = try wallet.makeRequest(amount: amount, unit: unit, issuers: issuers, keys: keys,
                                                 expires: expires.flatMap(UnixTime.parse) ?? now + 86_400, memo: memo, now: now, signer: holder.signer)
            if let output { try OutputFile.create(output, text: request.armored + "\n") }
            if json {
                print(Record.object([
                    ("request", .string(request.armored)), ("amount", .integer(request.amount)), ("unit", .string(request.unit)),
                    ("keys", .integer(request.keys.count)), ("expires", .integer(request.expires)), ("payee", .bytes(request.payee.compressed)),
                    ("file", .string(output)),
                ]).json())
            } else if let output {
                OutputFile.note("request for \(request.amount) \(request.unit) with \(request.keys.count) one-time key\(request.keys.count == 1 ? "" : "s") into \(output)")
            } else {
                print(request.armored)
            }
        }
    }
}

/// `keyhost token pay REQUEST`.
struct TokenPay: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pay",
        abstract: "Pay a request: hand tokens making the amount exactly to its keys ('khpay1:…' out).",
        discussion: """
            Each token is run once with a transfer to one of the request's keys; its program decides whether it may move \
            (stdlib/keyhost/cash.lua does). No change is made: without tokens that make the amount exactly, nothing is \
            spent. Paying the same request again prints the same payment (and finishes one that was interrupted).
            """
            + "\n" + HelpExamples.text(
                "keyhost token pay invoice.khreq -o payment.khpay",
                "keyhost token pay - --json < invoice.khreq")
    )
    @OptionGroup var options: WalletOptions
    @OptionGroup var cardOptions: TokenCardOptions
    @Argument(help: ArgumentHelp("The request file ('khreq1:…'), or - for standard input.", valueName: "request")) var request: String
    @Option(name: [.short, .long], help: ArgumentHelp("Write the payment to this new file (mode 0600).", valueName: "file")) var output: String?
    @Flag(help: "Print JSON (payment, tokens, amount).") var json = false

    func validate() throws { try cardOptions.validate() }

    func run() throws {
        try Failure.exitOnError {
            // Started first, so the fork server gets ready while the wallet is opened and checked.
            let runner = WorkerRunner.forkingCurrent()
            runner.start()
            defer { runner.stop() }
            let parsed = try PaymentRequest(armored: try readTokenFile(request), source: request)
            let wallet = try options.open()
            let holder = try HolderSession(wallet: wallet, card: cardOptions)
            defer { holder.close() }
            let payment = try wallet.pay(parsed, now: currentUnixTime(), signer: holder.signer, runner: runner.run)
            if let output { try OutputFile.create(output, text: payment.armored + "\n") }
            let amount = payment.chains.reduce(UInt64(0)) { $0 + $1.token.token.value }
            if json {
                print(Record(payment: payment, unit: parsed.unit).setting("payment", .string(payment.armored))
                    .setting("file", .string(output)).json())
            } else if output == nil {
                print(payment.armored)
            } else {
                OutputFile.note("paid \(amount) \(parsed.unit) with \(payment.chains.count) token\(payment.chains.count == 1 ? "" : "s") into \(output!)")
            }
        }
    }
}

/// `keyhost token receive PAYMENT`.
struct TokenReceive: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "receive",
        abstract: "Receive a payment for one of this wallet's requests: check every token's chain and keep them HELD.",
        discussion: "Receiving the same payment again changes nothing. Exit status 1 when the payment does not hold."
    )
    @OptionGroup var options: WalletOptions
    @Argument(help: ArgumentHelp("The payment file ('khpay1:…'), or - for standard input.", valueName: "payment")) var payment: String
    @Flag(help: "Print JSON.") var json = false

    func run() throws {
        try Failure.exitOnError {
            // Started first, so the fork server gets ready while the wallet is opened and checked.
            let runner = WorkerRunner.forkingCurrent()
            runner.start()
            defer { runner.stop() }
            let parsed = try Payment(armored: try readTokenFile(payment), source: payment)
            let received = try options.open().receive(parsed, now: currentUnixTime(), runner: runner.run)
            if json {
                print(Record(received: received).json())
                return
            }
            for r in received.results {
                print("\(Hex.encode(r.tokenID))  \(r.outcome == .added ? "received" : "already received")")
            }
            print("\(received.complete ? "complete" : "PARTIAL"): \(received.amount) of \(received.request.amount) \(received.request.unit)")
        }
    }
}
