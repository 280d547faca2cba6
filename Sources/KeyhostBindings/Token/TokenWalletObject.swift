import KeyhostCard
import KeyhostCrypto
import KeyhostPlayer
import KeyhostTokens
import KeyhostWallet
import KeyhostServices
import LuaRuntime
import KeyhostWorkerProcess
#if canImport(Glibc)
import Glibc
#endif

/// `keyhost.token.wallet`: an open token wallet file. Closing it (`w:close()`, `<close>`, or garbage
/// collection) closes the store; the holder's private key is read from the file only for a run.
final class TokenWalletObject: LuaObject {
    private var wallet: TokenWallet?
    let path: String
    /// The fork server this wallet's runs are forked from, started at the first run and ended with the object.
    private var forkServer: WorkerRunner?

    /// The warm workers of this object's batches (`run_many`), one lane per CPU: started by the first
    /// batch, ended with the object (a warm worker per wallet session; each is still replaced after
    /// 1000 runs and after any run that failed or ran bytecode).
    private var lanes: [WorkerRunner] = []

    func batchLanes(for count: Int) -> [WorkerRunner] {
        let wanted = BatchLanes.count(for: count)
        while lanes.count < wanted { lanes.append(WorkerRunner.batchLane()) }
        return Array(lanes.prefix(wanted))
    }

    /// Runs forked, one child each, from this object's fork server.
    var runner: WorkerRunner {
        if let forkServer { return forkServer }
        let made = WorkerRunner.forkingCurrent()
        forkServer = made
        return made
    }

    init(_ wallet: TokenWallet, path: String) {
        self.wallet = wallet
        self.path = path
    }

    static let luaTypeName = "keyhost.token.wallet"

    func live() throws -> TokenWallet {
        guard let wallet else { throw BindingError("\(Self.luaTypeName) is closed") }
        return wallet
    }

    var luaDescription: String {
        guard let wallet, let holder = try? wallet.holder() else { return "\(Self.luaTypeName) (closed)" }
        return "\(Self.luaTypeName)(\(path), \(holder.kind) holder \(Hex.encode(holder.publicKey.compressed.prefix(6)))…)"
    }

    func luaClose() {
        wallet = nil
        forkServer?.stop()
        forkServer = nil
        WorkerRunner.stop(lanes)
        lanes = []
    }

    /// `token.wallet.create(path, {card = session, path = "m/…"})`: a software holder key, or one on the card.
    static func create(_ ctx: LuaContext) throws -> TokenWalletObject {
        let path = try ctx.string(1)
        let opts = try Options(ctx, 2, allowed: ["card", "path"])
        var binding: (publicKey: PublicKey, keyUID: [UInt8], path: String)?
        if case .reference(let ref) = opts["card"] {
            let signer = try cardSigner(ctx, ref)
            guard let keyPath = try opts.string("path") else {
                throw LuaArgumentError(2, "option 'path' is required with 'card': the holder key's derivation path, e.g. \"m/44'/60'/0'/0/0\"")
            }
            binding = try cardCall("EXPORT KEY") { try CardHolder.binding(signer, path: keyPath) }
        } else if !opts["card"].isNil {
            throw LuaArgumentError(2, "option 'card' must be a \(CardSessionObject.luaTypeName) or \(CardSignerObject.luaTypeName), got \(opts["card"].typeName)")
        } else if opts.has("path") {
            throw LuaArgumentError(2, "option 'path' goes with 'card' (a software holder key has no path)")
        }
        return TokenWalletObject(try tokenCall { try TokenWallet.create(path: path, card: binding) }, path: path)
    }

    /// The signer of a card given as `{card = …}` (`what` names the option): a Keycard session with the PIN verified,
    /// or a signer of any family.
    static func cardSigner(_ ctx: LuaContext, _ reference: LuaReference, what: String = "option 'card'") throws -> CardSigner {
        switch try CardArgument.card(ctx, reference, what: what) {
        case .session(let session):
            let card = try session.live()
            try requireVerified(session)
            return KeycardSigner(card: card)
        case .signer(let object):
            return try object.live().signer
        }
    }

    static func requireVerified(_ session: CardSessionObject) throws {
        guard session.pinVerified else {
            throw TokenBindingError(kind: "card_not_ready", "the card session has no verified PIN: call s:auto{} (or s:verify_pin()) first")
        }
    }

    static func holderTable(_ holder: WalletHolder) -> LuaTable {
        var table = LuaTable(["public_key": .string(holder.publicKey.compressed), "kind": .text(holder.kind)])
        if case .card(_, let uid, let path) = holder {
            table["card_key_uid"] = .string(uid)
            table["card_path"] = .text(path)
        }
        return table
    }

    static let luaMethods: [String: LuaMethod<TokenWalletObject>] = baseMethods.merging(paymentMethods) { a, _ in a }

    static let baseMethods: [String: LuaMethod<TokenWalletObject>] = [
        "holder": { object, ctx in
            try ctx.return(.table(holderTable(try tokenCall { try object.live().holder() })))
        },
        "path": { object, ctx in
            ctx.push(object.path)
            return 1
        },
        "import": { object, ctx in
            let wallet = try object.live()
            let results = try tokenCall { () -> [LuaValue] in
                let tokens = try TokenArmor.tokens(in: try TokenArguments.tokenText(ctx, 2), source: "token text")
                let imported = try wallet.importTokens(tokens, now: Int64(time(nil)))
                return zip(tokens, imported).map { signed, result in
                    var row = LuaTable(["id": .string(signed.token.id)])
                    switch result {
                    case .added: row["result"] = .text("added")
                    case .alreadyPresent(let state):
                        row["result"] = .text("already_present")
                        row["state"] = .text(state.rawValue.lowercased())
                    }
                    return .table(row)
                }
            }
            return try ctx.return(.table(LuaTable(array: results)))
        },
        "list": { object, ctx in
            let tokens = try tokenCall { try object.live().store.tokens() }
            return try ctx.return(.table(LuaTable(array: tokens.map { stored in
                var row = TokenTables.stored(stored)
                row["program"] = .nil
                row["armored"] = .nil
                row["signature"] = .nil
                return .table(row)
            })))
        },
        "inspect": { object, ctx in
            let wallet = try object.live()
            return try ctx.return(.table(TokenTables.stored(try TokenArguments.storedToken(ctx, 2, in: wallet.store))))
        },
        "run": { object, ctx in try object.run(ctx) },
        "run_many": { object, ctx in try object.runMany(ctx) },
        "receipt": { object, ctx in
            let wallet = try object.live()
            let stored = try TokenArguments.storedToken(ctx, 2, in: wallet.store)
            guard let receipt = try tokenCall({ try wallet.receipt(id: stored.id) }) else {
                ctx.pushNil()
                ctx.push("token \(Hex.encode(stored.id)) has not run (it is \(stored.state.rawValue)): it has no receipt")
                return 2
            }
            ctx.push(receipt.armored)
            return 1
        },
        "trust": { object, ctx in
            let issuer = try TokenArguments.issuer(ctx, 2)
            try tokenCall { try object.live().store.trust(issuer: issuer, now: Int64(time(nil))) }
            return 0
        },
        "distrust": { object, ctx in
            let issuer = try TokenArguments.issuer(ctx, 2)
            try tokenCall { try object.live().store.distrust(issuer: issuer) }
            return 0
        },
        "trusted": { object, ctx in
            let issuers = try tokenCall { try object.live().store.trustedIssuers() }
            return try ctx.return(.table(LuaTable(array: issuers.map { .string($0) })))
        },
    ]

    /// `w:run(id, args, {card = session})`: one run in a worker process, committed with its receipt.
    /// The run's `now` is the current time: it is signed into the receipt and checked against the
    /// token's window, so a caller cannot choose it.
    func run(_ ctx: LuaContext) throws -> Int32 {
        let wallet = try live()
        let stored = try TokenArguments.storedToken(ctx, 2, in: wallet.store)
        let arguments = try TokenArguments.runArguments(ctx, 3)
        let signer = try holderSigner(ctx, try Options(ctx, 4, allowed: ["card"]))
        let runner = self.runner
        let result = try tokenCall {
            try wallet.run(id: stored.id, arguments: arguments, now: Int64(time(nil)), signer: signer, runner: runner.run)
        }
        return try ctx.return(.table(Self.runTable(result)))
    }

    /// `w:run_many(ids [, args [, {card = session}]])`: runs each token once, each in a fresh Lua state
    /// in the object's batch lanes (warm workers), and commits all that completed in one durable transaction. `ids` is a list of token
    /// ids or `{id = …, args = {…}}` tables (`args` is the default). Returns one table per token, in
    /// order: a run's table with `ok = true`, or `{ok = false, token_id, error = {kind, message}}`
    /// for a token that stays HELD (or was not found, or already spent). Raises only for an
    /// argument error or when the wallet cannot record the batch at all.
    func runMany(_ ctx: LuaContext) throws -> Int32 {
        let wallet = try live()
        guard ctx.typeName(2) == "table" else { throw LuaArgumentError(2, "a list of token ids expected, got \(ctx.typeName(2))") }
        let list = try ctx.table(2)
        let defaults = try TokenArguments.runArguments(ctx, 3)
        guard list.fields.isEmpty else { throw LuaArgumentError(2, "the ids must be a list (keys 1…n only)") }
        var items: [TokenWallet.RunItem] = []
        for (n, entry) in list.array.enumerated() {
            let path = "ids[\(n + 1)]"
            let idValue: LuaValue, arguments: CBORValue
            if case .table(let table) = entry {
                idValue = table["id"]
                arguments = table["args"].isNil ? defaults : try TokenArguments.runArguments(table["args"], position: 2, path: path + ".args")
            } else {
                (idValue, arguments) = (entry, defaults)
            }
            guard case .string(let bytes) = idValue else {
                throw LuaArgumentError(2, "\(path) must be a token id (32 bytes or hex) or {id = …, args = {…}}, got \(idValue.typeName)")
            }
            items.append(TokenWallet.RunItem(try TokenArguments.storedToken(bytes, 2, in: wallet.store), arguments: arguments))
        }
        let signer = try holderSigner(ctx, try Options(ctx, 4, allowed: ["card"]))
        let lanes = batchLanes(for: items.count)
        let results = try tokenCall { try wallet.runMany(items, now: Int64(time(nil)), signer: signer, runners: lanes.map { $0.run }) }
        return try ctx.return(.table(LuaTable(array: zip(items, results).map { item, result in
            switch result {
            case .success(let run):
                var table = Self.runTable(run)
                table["ok"] = .boolean(true)
                return .table(table)
            case .failure(let error):
                var fields = error.luaErrorFields
                fields["message"] = .text(error.description)
                return .table(LuaTable(["ok": .boolean(false), "token_id": .string(item.id), "error": .table(fields)]))
            }
        })))
    }

    /// What `w:run` returns for a committed run.
    static func runTable(_ run: TokenWallet.Run) -> LuaTable {
        let receipt = run.receipt
        return LuaTable([
            "token_id": .string(receipt.receipt.token.token.id),
            "receipt": .text(receipt.armored),
            "receipt_id": .string(receipt.id),
            "now": .integer(receipt.receipt.now),
            "effects": .table(LuaTable(array: run.effects.map(RecordConversion.lua))),
        ])
    }

    /// The key that signs for this wallet's holder: the software key in the file, or the card session
    /// given as option `card` (checked to hold the wallet's key before anything runs).
    func holderSigner(_ ctx: LuaContext, _ opts: Options) throws -> ReceiptSigner {
        let wallet = try live()
        let holder = try tokenCall { try wallet.holder() }
        switch holder {
        case .software:
            guard let software = try tokenCall({ try wallet.softwareSigner() }) else {
                throw TokenBindingError(kind: "store", "wallet \(path): the holder key is missing")
            }
            return software
        case .card:
            guard case .reference(let ref) = opts["card"] else {
                if !opts["card"].isNil {
                    throw LuaArgumentError(opts.position, "option 'card' must be a \(CardSessionObject.luaTypeName) or \(CardSignerObject.luaTypeName), "
                                           + "got \(opts["card"].typeName)")
                }
                throw TokenBindingError(kind: "card_required",
                    "this wallet's holder key is on a Keycard: pass {card = session} (an open keyhost.card session with the PIN verified)")
            }
            let signer = try Self.cardSigner(ctx, ref)
            return try cardCall("EXPORT KEY") { try CardHolder.signer(signer, holder: holder) }
        }
    }
}
