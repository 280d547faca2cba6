/// One verified deposit as the stores keep it. Built by `Ledger` only after the chain verified.
public struct DepositRecord: Sendable, Equatable {
    public let tokenID: [UInt8]
    /// SHA-256 of the whole chain's encoding: equal hashes are the same deposit.
    public let chainHash: [UInt8]
    /// The chain's encoding, kept so that a later conflicting deposit can be proven a double spend.
    public let chain: [UInt8]
    /// The issuer's x-only key.
    public let issuer: [UInt8]
    public let value: UInt64
    public let unit: String
    /// The deposit link's time (Unix seconds), as the depositor signed it.
    public let depositTime: Int64

    public init(tokenID: [UInt8], chainHash: [UInt8], chain: [UInt8], issuer: [UInt8], value: UInt64, unit: String, depositTime: Int64) {
        self.tokenID = tokenID
        self.chainHash = chainHash
        self.chain = chain
        self.issuer = issuer
        self.value = value
        self.unit = unit
        self.depositTime = depositTime
    }
}

/// A double spend to record: the proof's encoding and the key that signed twice.
public struct ConflictRecord<Proof: Sendable>: Sendable {
    public let proof: Proof
    public let encodedProof: [UInt8]
    /// The compressed key that signed two different links at the same position.
    public let signer: [UInt8]

    public init(proof: Proof, encodedProof: [UInt8], signer: [UInt8]) {
        self.proof = proof
        self.encodedProof = encodedProof
        self.signer = signer
    }
}

/// What a store did with one deposit of a batch.
public enum StoreOutcome<Proof: Sendable>: Sendable {
    /// First time this token id was seen: recorded.
    case accepted
    /// The token id was recorded before with the same chain hash.
    case alreadyDeposited
    /// The token id was recorded before with another chain; the attempt and its proof are recorded.
    case doubleSpend(Proof)
}
