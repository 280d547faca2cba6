/// The rule that only a token's program moves it (docs/payments.md, "Who may move a token").
///
/// A holder's signature on a link says who handed the token on, not that the program allowed
/// it: the holder key of a software wallet is in the wallet file and can sign anything. So every
/// verifier (a payee receiving, a ledger taking a deposit, anyone checking a proof) re-runs the
/// program for each link, as the holder's wallet ran it: the chain before the link, the link's
/// arguments, its time as `now`, and the link's key as the one transfer asked for. The link holds
/// only if that run completes, calls `t.transfer` with the link's key, and its receipt (over the
/// effects the verifier saw) has the id the link names. Runs are deterministic in (token, chain,
/// arguments, now), so an honest link always passes and nothing else can.
public enum TransferRuns {
    /// Checks links `range` of `chain` (all of them by default); throws `TokenError` of kind
    /// `unauthorised_transfer` naming the first link that no run of the program made.
    /// `limits`: the verifier's own maximum, capped by the token's policy as the wallet's is.
    /// `bytecodeAllowed`: the verifier trusts the issuer to ship bytecode.
    public static func verify(_ chain: TokenChain, links range: Range<Int>? = nil, limits: RunLimits = .walletDefault,
                              bytecodeAllowed: Bool, runner: (RunRequest) -> RunOutcome) throws {
        let token = chain.token.token
        let count = chain.transfers.count
        let range = range ?? 0..<count
        if !range.isEmpty, token.program.kind == .luaBytecode, !bytecodeAllowed {
            throw refusal("the token's program is bytecode from issuer \(token.issuer), which is not trusted here, so its transfers cannot be re-run and checked ('keyhost token trust ISSUER' if you trust it)")
        }
        for i in range {
            let link = chain.transfers[i]
            let name = "transfer \(i + 1) of \(count) (to \(link.to))"
            if let notBefore = token.notBefore, link.time < notBefore {
                throw refusal("\(name) was made at \(link.time), before the token's not_before \(notBefore)")
            }
            if let expires = token.expires, link.time >= expires {
                throw refusal("\(name) was made at \(link.time), not before the token's expiry \(expires)")
            }
            let before = TokenChain(token: chain.token, transfers: Array(chain.transfers[..<i]))
            let request = RunRequest(
                token: chain.token, arguments: link.arguments, now: link.time, limits: limits.capping(token.policy),
                bytecodeAllowed: bytecodeAllowed, transfers: before.transfers, transferTo: link.to
            )
            switch runner(request) {
            case .failed(let kind, let message):
                throw refusal("\(name): re-running the token's program for it failed (\(kind): \(message.split(separator: "\n").first ?? "")), so no run of the program made it")
            case .completed(_, false):
                throw refusal("\(name): the token's program does not hand the token on when run with that transfer's arguments and time (a token whose program never transfers, such as a voucher, cannot be paid or deposited); the link was signed without the program")
            case .completed(let effects, true):
                let receipt = Receipt(chain: before, arguments: link.arguments, now: link.time, effects: effects, transferTo: link.to)
                guard receipt.digest == link.receipt else {
                    throw refusal("\(name): its receipt is not the receipt of the program's run (forged, taken from another run, or its effects do not match)")
                }
            }
        }
    }

    static func refusal(_ message: String) -> TokenError {
        TokenError("unauthorised_transfer", message)
    }
}
