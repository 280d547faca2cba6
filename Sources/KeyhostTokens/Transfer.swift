import KeyhostCrypto

/// One link of a token's chain: the holder at position `index` hands the token to `to`
/// (docs/payments.md). Signed by that holder.
public struct Transfer: Equatable, Sendable {
    public static let tag = "keyhost/transfer/v1"

    public let tokenID: [UInt8]
    public let index: UInt64
    /// SHA-256 of the signed token's encoding (index 0) or of the previous link's envelope.
    public let previous: [UInt8]
    public let to: PublicKey
    /// The `now` of the run that made the transfer.
    public let time: Int64
    /// The id of that run's receipt.
    public let receipt: [UInt8]
    public let signature: [UInt8]

    public init(tokenID: [UInt8], index: UInt64, previous: [UInt8], to: PublicKey, time: Int64, receipt: [UInt8], signature: [UInt8]) {
        self.tokenID = tokenID
        self.index = index
        self.previous = previous
        self.to = to
        self.time = time
        self.receipt = receipt
        self.signature = signature
    }

    /// The signed map.
    public var body: CBORValue {
        .map([
            CBORPair(.text("v"), .unsigned(1)),
            CBORPair(.text("token_id"), .bytes(tokenID)),
            CBORPair(.text("index"), .unsigned(index)),
            CBORPair(.text("previous"), .bytes(previous)),
            CBORPair(.text("to"), .bytes(to.compressed)),
            CBORPair(.text("time"), .int(time)),
            CBORPair(.text("receipt"), .bytes(receipt)),
        ])
    }

    /// What the holder signs.
    public var digest: [UInt8] { ProtocolSignature.digest(Self.tag, body) }

    public var envelope: CBORValue { .map([CBORPair(.text("transfer"), body), CBORPair(.text("sig"), .bytes(signature))]) }
    public var encoded: [UInt8] { CBOREncoder.encode(envelope) }
    /// What the next link's `previous` holds.
    public var hash: [UInt8] { Hash.sha256(encoded) }

    /// Whether `holder` signed this link.
    public func isSigned(by holder: PublicKey) -> Bool { ProtocolSignature.isValid(signature, by: holder, digest: digest) }

    /// Reads a link strictly (fields, lengths, a valid key); the signature is read, not checked.
    public init(envelope value: CBORValue) throws {
        let (body, signature) = try ProtocolSignature.envelope(value, body: "transfer", what: "a transfer")
        guard case .map(let pairs) = body, pairs.count == 7 else { throw TokenError("encoding", "a transfer has exactly 7 fields") }
        guard case .unsigned(1)? = body["v"] else { throw TokenError.field("transfer.v", "only version 1 is read") }
        guard case .bytes(let id)? = body["token_id"], id.count == 32 else { throw TokenError.field("transfer.token_id", "must be 32 bytes") }
        guard case .unsigned(let index)? = body["index"] else { throw TokenError.field("transfer.index", "must be a non-negative integer") }
        guard case .bytes(let previous)? = body["previous"], previous.count == 32 else { throw TokenError.field("transfer.previous", "must be 32 bytes") }
        guard case .bytes(let to)? = body["to"], to.count == 33, let key = try? PublicKey(bytes: to) else {
            throw TokenError.field("transfer.to", "must be a 33-byte compressed public key")
        }
        guard let time = body["time"]?.int64 else { throw TokenError.field("transfer.time", "must be an integer") }
        guard case .bytes(let receipt)? = body["receipt"], receipt.count == 32 else { throw TokenError.field("transfer.receipt", "must be 32 bytes") }
        self.init(tokenID: id, index: index, previous: previous, to: key, time: time, receipt: receipt, signature: signature)
    }
}
