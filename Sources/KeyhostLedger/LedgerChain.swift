import KeyhostCrypto
import KeyhostTokens

/// What the ledger needs of a deposited transfer chain and of a fraud proof between two chains.
/// Kept this small so the ledger's rules read in one place (`Ledger.check`).
public protocol LedgerChain: Sendable {
    associatedtype Proof: Sendable

    /// The issuer-signed token the chain carries.
    var ledgerToken: SignedToken { get }
    /// SHA-256 of `encoded`.
    var hash: [UInt8] { get }
    var encoded: [UInt8] { get }
    /// Number of transfer links.
    var linkCount: Int { get }
    /// The time (Unix seconds) the last link says it was made at; nil with no links.
    var lastLinkTime: Int64? { get }
    /// Throws when a signature, a link's index, predecessor or token id does not hold.
    func verify() throws
    /// Throws unless a run of the token's program made every link (`runner` re-runs it).
    func verifyTransferRuns(runner: (LinkRunsRequest) -> [RunOutcome]) throws
    /// The last link, and only the last, goes to `issuer`'s deposit key.
    func isDeposit(for issuer: XOnlyPublicKey) -> Bool

    init(armored text: String) throws
    init(encoded bytes: [UInt8]) throws

    /// The proof that `a` and `b` fork, or nil when they do not (same chain, or different tokens).
    static func fraudProof(_ a: Self, _ b: Self) -> Proof?
    /// The key that signed twice, after checking the proof.
    static func verifyProof(_ proof: Proof) throws -> PublicKey
    static func encodeProof(_ proof: Proof) -> [UInt8]
    static func armorProof(_ proof: Proof) -> String
}
