import KeyhostCrypto
import KeyhostHTTP
import KeyhostLedger
import KeyhostRecord
import KeyhostServices
import KeyhostTokens
import LuaRuntime
import KeyhostWorkerProcess

/// `keyhost.token.ledger`: an issuer's ledger, opened as `keyhost token deposit --ledger …` opens it
/// (`LedgerConnections.open`): a SQLite file is verified and recorded in this process, a PostgreSQL
/// database in a `keyhost-ledger` child process, a ledger service over HTTP.
final class TokenLedgerObject: LuaObject {
    private var ledger: (any TokenLedgerConnection)?
    let location: String

    init(_ ledger: any TokenLedgerConnection) {
        self.ledger = ledger
        location = ledger.displayName
    }

    static let luaTypeName = "keyhost.token.ledger"

    func live() throws -> any TokenLedgerConnection {
        guard let ledger else { throw BindingError("\(Self.luaTypeName) is closed") }
        return ledger
    }

    var luaDescription: String {
        guard let ledger else { return "\(Self.luaTypeName) (closed)" }
        if ledger.issuerCount == 0 { return "\(Self.luaTypeName)(\(ledger.displayName))" }
        return "\(Self.luaTypeName)(\(ledger.displayName), \(ledger.issuerCount) issuer\(ledger.issuerCount == 1 ? "" : "s"))"
    }

    func luaClose() {
        guard let ledger else { return }
        self.ledger = nil
        ledger.close()
    }

    /// `token.ledger.open(location, {issuers = {…}})`.
    static func open(_ ctx: LuaContext) throws -> TokenLedgerObject {
        let text = try ctx.string(1)
        let opts = try Options(ctx, 2, allowed: ["issuers", "proxy"])
        var issuers: [XOnlyPublicKey] = []
        // A service knows its issuers; a database must be told which it serves.
        if !LedgerConnections.isService(text) || !opts["issuers"].isNil {
            guard case .table(let list) = opts["issuers"], !list.array.isEmpty, list.fields.isEmpty else {
                throw LuaArgumentError(2, "option 'issuers' is required: a list of the issuers this ledger serves (x-only keys)")
            }
            issuers = try list.array.enumerated().map { n, value in
                try PaymentArguments.issuer(value, ctx, position: 2, what: "issuers[\(n + 1)]")
            }
        }
        let proxies = try opts.proxies(isolate: nil)
        return try tokenCall {
            TokenLedgerObject(try LedgerConnections.open(text, issuers: issuers, worker: WorkerRunner.currentExecutable, proxies: proxies))
        }
    }

    static let luaMethods: [String: LuaMethod<TokenLedgerObject>] = [
        "deposit": { object, ctx in
            let ledger = try object.live()
            let texts = try PaymentArguments.strings(ctx, 2, what: "armoured chains ('khchain1:…')")
            let proofs = try Options(ctx, 3, allowed: ["proofs"]).string("proofs")
            let results = try tokenCall { () -> [DepositResult<FraudProof>] in
                // A text may hold several chains, one a line, as the wallet and `keyhost token deposit` files do.
                let chains = try texts.flatMap { try TokenChain.chains(in: $0, source: "chain") }
                guard !chains.isEmpty else { throw LedgerError(kind: "invalid_chain", message: "no chain to deposit (expected 'khchain1:' text)") }
                return try ledger.depositAll(chains)
            }
            return try ctx.return(.table(LuaTable(array: results.map { result in
                var row = LuaTable(["token_id": .string(result.tokenID), "result": .text(result.name)])
                if let proof = result.proof {
                    row["proof"] = .text(proof.armored)
                    // Kept as a file (`proofs = DIR`, as `keyhost token deposit --proofs DIR`) only when it verifies here.
                    if let signer = try? proof.verify() {
                        row["key"] = .string(signer.compressed)
                        if let proofs { row["proof_file"] = .text(try tokenCall { try ProofFiles.write(proof, into: proofs) }) }
                    }
                }
                return .table(row)
            })))
        },
        "stats": { object, ctx in
            let ledger = try object.live()
            let stats = try tokenCall { try ledger.stats() }
            return try ctx.return(LuaValue(record: Record(ledgerStats: stats)))
        },
        "location": { object, ctx in
            ctx.push(object.location)
            return 1
        },
    ]
}
