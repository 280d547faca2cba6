import KeyhostCrypto
import KeyhostPlayer
import KeyhostRecord
import KeyhostServices
import KeyhostTokens
import KeyhostWallet
import LuaRuntime
import KeyhostWorkerProcess
#if canImport(Glibc)
import Glibc
#endif

/// The wallet's payment methods (docs/payments.md): exchange keys, requests, paying, receiving and
/// handing tokens over for deposit. Every run goes through `TokenWallet`, as `w:run` does, so a
/// payment is exactly-once per token and resumable in the same way.
extension TokenWalletObject {
    static let requestOptions = ["amount", "unit", "issuers", "keys", "expires", "memo", "card"]

    static let paymentMethods: [String: LuaMethod<TokenWalletObject>] = [
        "exchange_keys": { object, ctx in
            let count = try integerArgument(ctx, 2, "count", in: 1...Int64(PaymentRequest.maxKeys), default: 1)
            let keys = try tokenCall { try object.live().newExchangeKeys(count: Int(count), now: Int64(time(nil))) }
            return try ctx.return(.table(LuaTable(array: keys.map { .string($0.compressed) })))
        },
        "request": { object, ctx in try object.request(ctx) },
        "pay": { object, ctx in try object.pay(ctx) },
        "receive": { object, ctx in
            let wallet = try object.live()
            let payment = try PaymentArguments.payment(ctx, 2)
            let runner = object.runner
            let received = try tokenCall { try wallet.receive(payment, now: Int64(time(nil)), runner: runner.run) }
            return try ctx.return(LuaValue(record: Record(received: received)))
        },
        "deposit_chains": { object, ctx in
            let wallet = try object.live()
            let given = try PaymentArguments.strings(ctx, 2, what: "token ids")
            guard !given.isEmpty else { throw LuaArgumentError(2, "name at least one token to deposit") }
            let ids = try given.map { try TokenArguments.storedToken($0, 2, in: wallet.store).id }
            let signer = try object.holderSigner(ctx, try Options(ctx, 3, allowed: ["card"]))
            let runner = object.runner
            let chains = try tokenCall { try wallet.depositChains(ids: ids, now: Int64(time(nil)), signer: signer, runner: runner.run) }
            return try ctx.return(.table(LuaTable(array: chains.map { .text($0.armored) })))
        },
    ]

    /// `w:request{amount, unit, issuers, keys = 8, expires, memo, card}` → the armoured request. One result only,
    /// so that `payer:pay(payee:request{…})` passes no stray options table.
    func request(_ ctx: LuaContext) throws -> Int32 {
        let wallet = try live()
        let opts = try Options(ctx, 2, allowed: Self.requestOptions)
        guard let amount = try opts.integer("amount"), amount > 0 else {
            throw LuaArgumentError(2, "option 'amount' is required: a positive integer in the unit's smallest denomination")
        }
        guard let unit = try opts.string("unit") else { throw LuaArgumentError(2, "option 'unit' is required, e.g. \"EUR-cent\"") }
        guard case .table(let list) = opts["issuers"], !list.array.isEmpty, list.fields.isEmpty else {
            throw LuaArgumentError(2, "option 'issuers' is required: a list of the issuers whose tokens you accept (x-only keys)")
        }
        let issuers = try list.array.enumerated().map { n, value in
            try PaymentArguments.issuer(value, ctx, position: 2, what: "issuers[\(n + 1)]")
        }
        let keys = try opts.integer("keys") ?? 8
        guard (1...Int64(PaymentRequest.maxKeys)).contains(keys) else {
            throw LuaArgumentError(2, "option 'keys' must be 1 to \(PaymentRequest.maxKeys) (the most tokens the payer may use), got \(keys)")
        }
        let now = Int64(time(nil))
        let expires = try opts.integer("expires") ?? now + 86_400
        let memo = try opts.string("memo")
        let signer = try holderSigner(ctx, opts)
        let request = try tokenCall {
            try wallet.makeRequest(amount: UInt64(amount), unit: unit, issuers: issuers, keys: Int(keys), expires: expires, memo: memo,
                                   now: now, signer: signer)
        }
        return try ctx.return(.text(request.armored))
    }

    /// `w:pay(request [, {card = session}])` → the armoured payment and `{request_id, amount, unit, tokens, chains}`.
    func pay(_ ctx: LuaContext) throws -> Int32 {
        let wallet = try live()
        let request = try PaymentArguments.request(ctx, 2)
        let signer = try holderSigner(ctx, try Options(ctx, 3, allowed: ["card"]))
        let runner = self.runner
        let payment = try tokenCall { try wallet.pay(request, now: Int64(time(nil)), signer: signer, runner: runner.run) }
        let summary = LuaValue(record: Record(payment: payment, unit: request.unit)
            .setting("chains", .strings(payment.chains.map(\.armored))))
        return try ctx.return(.text(payment.armored), summary)
    }
}
