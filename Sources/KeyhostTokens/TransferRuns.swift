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
        try verify(chain, links: range, limits: limits, bytecodeAllowed: bytecodeAllowed, linkRunner: { $0.runEach(runner) })
    }

    /// The same, asking `linkRunner` for the runs of all the links at once (a worker answers them in
    /// one exchange). It returns their outcomes in order, up to and including the first that failed
    /// or did not hand the token on (`LinkRunsRequest.isLast`); a missing answer refuses its link.
    public static func verify(_ chain: TokenChain, links range: Range<Int>? = nil, limits: RunLimits = .walletDefault,
                              bytecodeAllowed: Bool, linkRunner: (LinkRunsRequest) -> [RunOutcome]) throws {
        let token = chain.token.token
        let count = chain.transfers.count
        let range = range ?? 0..<count
        if !range.isEmpty, token.program.kind == .luaBytecode, !bytecodeAllowed {
            throw refusal("the token's program is bytecode from issuer \(token.issuer), which is not trusted here, so its transfers cannot be re-run and checked ('keyhost token trust ISSUER' if you trust it)")
        }
        func name(_ i: Int) -> String { "transfer \(i + 1) of \(count) (to \(chain.transfers[i].to))" }
        func untimely(_ i: Int) -> TokenError? {
            let time = chain.transfers[i].time
            // Checked here too: a proof's two links are checked by runs, not by `TokenChain.verify`.
            if let error = LinkTime.outOfOrder(chain.transfers, at: i, name: name(i)) { return error }
            if let notBefore = token.notBefore, time < notBefore {
                return refusal("\(name(i)) was made at \(time), before the token's not_before \(notBefore)")
            }
            if let expires = token.expires, time >= expires {
                return refusal("\(name(i)) was made at \(time), not before the token's expiry \(expires)")
            }
            return nil
        }
        // A link made at a time the token does not allow is refused without a run: the runs go up to
        // the first such link, so the first bad link is the one named, as when they ran one by one.
        let untimelyLink = range.first { untimely($0) != nil }
        let request = LinkRunsRequest(chain: chain, links: range.lowerBound..<(untimelyLink ?? range.upperBound),
                                      limits: limits.capping(token.policy), bytecodeAllowed: bytecodeAllowed)
        var outcomes = request.links.isEmpty ? [] : linkRunner(request)
        // A run the verifier's machine failed (a worker crashed or killed, the wall clock) says nothing of
        // the link: the links from it are run once more (the runner retires a worker that failed), and if
        // that fails too the verifier says it could not check, never that the link is forged.
        if let first = outcomes.firstIndex(where: \.isMachineFailure) {
            var retry = request
            retry.links = (request.links.lowerBound + first)..<request.links.upperBound
            outcomes = Array(outcomes[..<first]) + linkRunner(retry)
        }
        for (offset, i) in request.links.enumerated() {
            let link = chain.transfers[i]
            guard offset < outcomes.count else {
                throw unavailable("\(name(i)): re-running the token's program for it gave no answer")
            }
            switch outcomes[offset] {
            case .failed(let kind, let message) where outcomes[offset].isMachineFailure:
                throw unavailable("\(name(i)): re-running the token's program for it failed twice on this machine (\(kind): \(message.split(separator: "\n").first ?? ""))")
            case .failed(let kind, let message):
                throw refusal("\(name(i)): re-running the token's program for it failed (\(kind): \(message.split(separator: "\n").first ?? "")), so no run of the program made it")
            case .completed(_, false):
                throw refusal("\(name(i)): the token's program does not hand the token on when run with that transfer's arguments and time (a token whose program never transfers, such as a voucher, cannot be paid or deposited); the link was signed without the program")
            case .completed(let effects, true):
                let before = TokenChain(token: chain.token, transfers: Array(chain.transfers[..<i]))
                let receipt = Receipt(chain: before, arguments: link.arguments, now: link.time, effects: effects, transferTo: link.to)
                guard receipt.digest == link.receipt else {
                    throw refusal("\(name(i)): its receipt is not the receipt of the program's run (forged, taken from another run, or its effects do not match)")
                }
            }
        }
        if let untimelyLink, let error = untimely(untimelyLink) { throw error }
    }

    static func refusal(_ message: String) -> TokenError {
        TokenError("unauthorised_transfer", message)
    }

    /// The verifier's own failure: the chain was not judged, and asking again may succeed.
    static func unavailable(_ message: String) -> TokenError {
        TokenError("verifier_unavailable", message + "; this is the verifier's own failure, not the chain's: nothing was decided, try again")
    }
}
