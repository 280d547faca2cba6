import KeyhostCrypto
import KeyhostTokens

/// The payment protocol's chains and proofs (docs/payments.md) as the ledger sees them.
extension TokenChain: LedgerChain {
    public typealias Proof = FraudProof

    public var ledgerToken: SignedToken { token }
    public var linkCount: Int { transfers.count }
    public var lastLinkTime: Int64? { transfers.last?.time }

    public func isDeposit(for issuer: XOnlyPublicKey) -> Bool { token.token.issuer == issuer && isDeposit }

    /// The ledger is its issuers' own: it runs the bytecode they signed.
    public func verifyTransferRuns(runner: (LinkRunsRequest) -> [RunOutcome]) throws {
        try TransferRuns.verify(self, bytecodeAllowed: true, linkRunner: runner)
    }

    /// Exactly one `khchain1:` item.
    public init(armored text: String) throws {
        let chains = try TokenChain.chains(in: Array(text.utf8))
        guard chains.count == 1 else { throw TokenError("armor", "expected one chain, found \(chains.count)") }
        self = chains[0]
    }

    public static func fraudProof(_ a: TokenChain, _ b: TokenChain) -> FraudProof? { FraudProof.between(a, b) }
    public static func verifyProof(_ proof: FraudProof) throws -> PublicKey { try proof.verify() }
    public static func encodeProof(_ proof: FraudProof) -> [UInt8] { proof.encoded }
    public static func armorProof(_ proof: FraudProof) -> String { proof.armored }
}

/// The ledger of the payment protocol's chains.
public typealias TokenLedger = Ledger<TokenChain>
