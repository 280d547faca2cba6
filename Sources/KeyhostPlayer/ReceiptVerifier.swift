import KeyhostCrypto
import KeyhostTokens

/// Checks a receipt without trusting the wallet that made it: the issuer's signature on the
/// token, the holder's on the receipt, then a fresh run of the program with the receipt's
/// arguments and `now`, whose effects must be the receipt's byte for byte and which must hand the
/// token on exactly when the receipt names a `transfer_to`.
public struct ReceiptVerifier {
    public var runner: (RunRequest) -> RunOutcome
    public var limits: RunLimits

    public init(limits: RunLimits = .walletDefault, runner: @escaping (RunRequest) -> RunOutcome) {
        self.runner = runner
        self.limits = limits
    }

    /// What was checked; `problems` is empty when the receipt holds.
    public struct Report: Sendable {
        public var issuerSignatureValid: Bool
        public var holderSignatureValid: Bool
        /// nil when the program could not be re-run (see `problems`).
        public var effectsMatch: Bool?
        public var problems: [String]
        public var isValid: Bool { problems.isEmpty }
    }

    /// `bytecodeAllowed`: the verifier trusts the issuer to ship bytecode.
    public func verify(_ signed: SignedReceipt, bytecodeAllowed: Bool) -> Report {
        let receipt = signed.receipt
        var report = Report(
            issuerSignatureValid: receipt.token.signatureIsValid, holderSignatureValid: signed.signatureIsValid,
            effectsMatch: nil, problems: []
        )
        if !report.issuerSignatureValid { report.problems.append("the token's issuer signature does not hold") }
        if !report.holderSignatureValid { report.problems.append("the receipt's signature is not the token holder's") }
        let token = receipt.token.token
        if let notBefore = token.notBefore, receipt.now < notBefore {
            report.problems.append("the receipt's time \(receipt.now) is before the token's not_before \(notBefore)")
        }
        if let expires = token.expires, receipt.now >= expires {
            report.problems.append("the receipt's time \(receipt.now) is not before the token's expiry \(expires)")
        }
        do {
            try receipt.chain.verify()
            try TransferRuns.verify(receipt.chain, limits: limits, bytecodeAllowed: bytecodeAllowed, runner: runner)
        } catch {
            report.problems.append("the token's transfer chain does not hold: \(error)")
        }
        let request = RunRequest(
            token: receipt.token, arguments: receipt.arguments, now: receipt.now,
            limits: limits.capping(receipt.token.token.policy), bytecodeAllowed: bytecodeAllowed,
            transfers: receipt.chain.transfers, transferTo: receipt.transferTo
        )
        switch runner(request) {
        case .completed(let effects, let transferred):
            let match = CBOREncoder.encode(.array(effects)) == receipt.encodedEffects
            report.effectsMatch = match
            if !match { report.problems.append("re-running the program gave other effects than the receipt records") }
            // The transfer claim is checked on its own: a run whose records match but which never
            // called t.transfer must be named as a false claim, not as other effects.
            if let problem = Self.transferProblem(claimed: receipt.transferTo, transferred: transferred) {
                report.problems.append(problem)
            }
        case .failed(let kind, let message):
            report.problems.append("re-running the program failed (\(kind)): \(message.split(separator: "\n").first ?? "")")
        }
        return report
    }

    /// The problem with the receipt's transfer claim, nil when the re-run did what it says.
    static func transferProblem(claimed: PublicKey?, transferred: Bool) -> String? {
        switch (claimed, transferred) {
        case (let key?, false):
            return "the receipt says the run handed the token to \(key), but re-running the program did not hand it on (it never called t.transfer): the transfer claim is false"
        case (nil, true):
            return "re-running the program handed the token on, but the receipt names no transfer_to"
        default:
            return nil
        }
    }
}
