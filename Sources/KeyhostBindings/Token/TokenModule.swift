import KeyhostCard
import KeyhostCrypto
import KeyhostPlayer
import KeyhostTokens
import KeyhostWallet
import KeyhostServices
import LuaRuntime
import KeyhostWorkerProcess

/// `keyhost.token`: issue, parse and inspect one-time tokens, check receipts, and open token wallets
/// (`token.wallet.create/open`) that import and run them. Programs run in a worker process (the
/// running keyhost binary, `keyhost token _worker`), never in the calling state.
enum TokenModule {
    static let issueOptions = ["program", "value", "unit", "to", "issuer_key", "issuer_card", "issuer_path", "expires", "not_before", "meta", "limits", "precompile"]

    static func register(in state: LuaState) {
        state.registerModule("keyhost.token") { module in
            module.value("prefix", .text(TokenArmor.prefix))
            module.value("receipt_prefix", .text(SignedReceipt.armorPrefix))
            module.function("issue") { ctx in
                ctx.push(try issue(ctx))
                return 1
            }
            module.function("parse") { ctx in
                let tokens = try tokenCall { try TokenArmor.tokens(in: try TokenArguments.tokenText(ctx, 1), source: "token text") }
                return try ctx.return(.table(LuaTable(array: tokens.map { .table(TokenTables.token($0)) })))
            }
            module.function("inspect") { ctx in
                let tokens = try tokenCall { try TokenArmor.tokens(in: try TokenArguments.tokenText(ctx, 1), source: "token text") }
                guard tokens.count == 1, let signed = tokens.first else {
                    throw LuaArgumentError(1, "the text holds \(tokens.count) tokens; inspect takes one (token.parse reads several)")
                }
                var table = TokenTables.token(signed)
                table["signature_valid"] = .boolean(signed.signatureIsValid)
                return try ctx.return(.table(table))
            }
            module.function("verify_receipt") { ctx in
                let text = try ctx.bytes(1)
                let opts = try Options(ctx, 2, allowed: ["trust_bytecode"])
                let receipt = try tokenCall { try SignedReceipt(armored: text, source: "receipt") }
                let runner = WorkerRunner(executable: WorkerRunner.currentExecutable)
                let report = ReceiptVerifier(runner: runner.run).verify(receipt, bytecodeAllowed: try opts.boolean("trust_bytecode") ?? false)
                return try ctx.return(.table(TokenTables.report(report, receipt)))
            }
            module.value("request_prefix", .text(PaymentRequest.armorPrefix))
            module.value("payment_prefix", .text(Payment.armorPrefix))
            module.value("chain_prefix", .text(TokenChain.armorPrefix))
            module.value("proof_prefix", .text(FraudProof.armorPrefix))
            module.function("parse_request") { ctx in
                let request = try PaymentArguments.request(ctx, 1)
                return try ctx.return(.table(PaymentTables.request(request)))
            }
            module.function("parse_payment") { ctx in
                let payment = try PaymentArguments.payment(ctx, 1)
                return try ctx.return(.table(PaymentTables.payment(payment)))
            }
            module.function("parse_chain") { ctx in
                let text = try PaymentArguments.text(ctx, 1, what: "chain ('khchain1:…')")
                let chains = try tokenCall { try TokenChain.chains(in: text, source: "chain text") }
                return try ctx.return(.table(LuaTable(array: chains.map { .table(PaymentTables.chain($0)) })))
            }
            module.function("verify_proof") { ctx in
                let text = try PaymentArguments.text(ctx, 1, what: "proof ('khproof1:…')")
                let opts = try Options(ctx, 2, allowed: ["trust_bytecode"])
                let proof = try tokenCall { try FraudProof(armored: text, source: "proof") }
                let runner = WorkerRunner(executable: WorkerRunner.currentExecutable, runsPerWorker: 64)
                let report = PaymentTables.proofReport(proof, bytecodeAllowed: try opts.boolean("trust_bytecode") ?? false, runner: runner.run)
                return try ctx.return(.table(report))
            }
            module.submodule("ledger") { ledger in
                ledger.function("open") { ctx in
                    ctx.push(object: try TokenLedgerObject.open(ctx))
                    return 1
                }
            }
            module.submodule("wallet") { wallet in
                wallet.function("create") { ctx in
                    ctx.push(object: try TokenWalletObject.create(ctx))
                    return 1
                }
                wallet.function("open") { ctx in
                    let path = try ctx.string(1)
                    ctx.push(object: TokenWalletObject(try tokenCall { try TokenWallet(path: path) }, path: path))
                    return 1
                }
            }
        }
    }

    static func issue(_ ctx: LuaContext) throws -> String {
        let opts = try Options(ctx, 1, allowed: issueOptions)
        func required<T>(_ key: String, _ value: T?) throws -> T {
            guard let value else { throw LuaArgumentError(1, "option '\(key)' is required") }
            return value
        }
        // A stdlib module by name (`program = "keyhost.cash"`), as `keyhost token issue --program` takes it.
        var code: [UInt8]
        do { code = try TokenProgramSource.program(text: try required("program", try opts.bytes("program"))) } catch let error as TokenProgramSourceError {
            throw LuaArgumentError(1, "option 'program': \(error)")
        }
        let value = try required("value", try opts.integer("value"))
        guard value >= 0 else { throw LuaArgumentError(1, "option 'value' must be ≥ 0 (an amount in the unit's smallest denomination), got \(value)") }
        let unit = try required("unit", try opts.string("unit"))
        guard !opts["to"].isNil else { throw LuaArgumentError(1, "option 'to' is required (the holder's public key, as w:holder().public_key gives it)") }
        let holder = try TokenArguments.holder(opts["to"], ctx, position: 1)
        // The issuer's key in software, or on a 4.x Keycard (BIP340 Schnorr at a path).
        var key: PrivateKey?
        var cardIssuer: CardIssuer?
        if case .reference(let ref) = opts["issuer_card"] {
            guard opts["issuer_key"].isNil else { throw LuaArgumentError(1, "give 'issuer_key' or 'issuer_card', not both") }
            let signer = try TokenWalletObject.cardSigner(ctx, ref, what: "option 'issuer_card'")
            guard let pathText = try opts.string("issuer_path") else {
                throw LuaArgumentError(1, "option 'issuer_path' is required with 'issuer_card': the issuer key's path on the card, e.g. \"m/7419'/0'/0'\"")
            }
            cardIssuer = try cardCall("EXPORT KEY") { try CardIssuer(signer: signer, path: pathText) }
        } else if !opts["issuer_card"].isNil {
            throw LuaArgumentError(1, "option 'issuer_card' must be a \(CardSessionObject.luaTypeName) or \(CardSignerObject.luaTypeName), "
                                   + "got \(opts["issuer_card"].typeName)")
        } else if opts.has("issuer_path") {
            throw LuaArgumentError(1, "option 'issuer_path' goes with 'issuer_card'")
        } else {
        switch opts["issuer_key"] {
        case .reference(let ref):
            if let object = try? ctx.object(ref, as: PrivateKeyObject.self, what: "option 'issuer_key'") {
                key = try object.live()
            } else if let node = try? ctx.object(ref, as: NodeObject.self, what: "option 'issuer_key'") {
                key = try node.privateKey()
            } else {
                throw LuaArgumentError(1, "option 'issuer_key' must be an open \(PrivateKeyObject.luaTypeName) or private \(NodeObject.luaTypeName)")
            }
        case .string(let bytes) where bytes.count == 32:
            key = try PrivateKey(bytes: bytes)
        case .nil:
            throw LuaArgumentError(1, "option 'issuer_key' is required (a keyhost.ec private key or a private keyhost.hd node), or 'issuer_card' with 'issuer_path'")
        case let other:
            throw LuaArgumentError(1, "option 'issuer_key' must be a \(KeyArguments.privateForms), got \(other.typeName)")
        }
        }
        var metadata: CBORValue?
        if !opts["meta"].isNil {
            do { metadata = try RecordConversion.cbor(opts["meta"], path: "meta") } catch let error as RecordConversion.Failure {
                throw LuaArgumentError(1, "option 'meta': \(error.description)")
            }
        }
        var policy = TokenPolicy()
        switch opts["limits"] {
        case .nil: break
        case .table(let table):
            let limits = Options(fields: table, position: 1)
            if !table.array.isEmpty { throw LuaArgumentError(1, "option 'limits' takes named entries: instructions, memory, time_ms, max_deposit_age") }
            for key in table.fields.keys where !["instructions", "memory", "time_ms", "max_deposit_age"].contains(key.stringValue ?? "") {
                throw LuaArgumentError(1, "option 'limits': unknown entry \(key.stringValue.map { "'\($0)'" } ?? "of type \(key.typeName)"); known: instructions, memory, time_ms, max_deposit_age")
            }
            func positive(_ name: String) throws -> UInt64? {
                guard let n = try limits.integer(name) else { return nil }
                guard n > 0 else { throw LuaArgumentError(1, "option 'limits': '\(name)' must be a positive integer, got \(n)") }
                return UInt64(n)
            }
            let age = try positive("max_deposit_age")
            if let age, age > TokenPolicy.maxDepositAgeLimit {
                throw LuaArgumentError(1, "option 'limits': 'max_deposit_age' is in seconds, at most \(TokenPolicy.maxDepositAgeLimit), got \(age)")
            }
            let memory = try positive("memory")
            if let memory, memory < TokenPolicy.minimumMemoryBytes {
                let minimum = TokenPolicy.minimumMemoryBytes
                // A small number was most likely meant as MiB: the hint shows that number in bytes.
                let mib = memory <= 1 << 16 ? memory : 64
                throw LuaArgumentError(1, "option 'limits': 'memory' is in bytes, and \(memory) bytes is below the \(minimum) bytes "
                    + "(\(minimum >> 20) MiB) a run needs at least; for \(mib) MiB write memory = \(mib) << 20")
            }
            policy = TokenPolicy(instructions: try positive("instructions"), memoryBytes: memory, timeMillis: try positive("time_ms"),
                                 maxDepositAge: age)
        default:
            throw LuaArgumentError(1, "option 'limits' must be a table {instructions = n, memory = bytes, time_ms = ms, max_deposit_age = s}, got \(opts["limits"].typeName)")
        }
        let precompile = try opts.boolean("precompile") ?? false
        return try tokenCall {
            // The program must at least compile: a token that can never run is a mistake best caught now.
            let compiled = try ProgramCompiler.compile(code, chunkName: "=token program", dump: precompile)
            if precompile { code = compiled }
            let token = Token(
                id: secureRandomBytes(32), issuer: cardIssuer?.key ?? key!.publicKey.xOnly, value: UInt64(value), unit: unit,
                notBefore: try opts.integer("not_before"), expires: try opts.integer("expires"),
                program: TokenProgram(kind: precompile ? .luaBytecode : .luaSource, code: code), holder: holder,
                metadata: metadata, policy: policy
            )
            if let key { return TokenArmor.armor(try SignedToken.issue(token, issuerKey: key)) }
            let issuer = cardIssuer!
            return TokenArmor.armor(try cardCall("SIGN") { try issuer.issue(token) })
        }
    }
}
