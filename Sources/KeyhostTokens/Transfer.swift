import KeyhostCrypto

/// One link of a token's chain: the holder at position `index` hands the token to `to`
/// (docs/payments.md). Signed by that holder, and valid only as the result of a run of the
/// token's program: the link names the run's arguments and time, and the id of its receipt, so
/// that a verifier can re-run the program and see it hand the token to `to` (`TransferRuns`).
public struct Transfer: Equatable, Sendable {
    public static let formatVersion: UInt64 = 2
    public static let tag = "keyhost/transfer/v2"
    /// Format 1 named no run (no `args`); such links are read, so that wallets holding them still
    /// open, and refused by every check (`TokenChain.verify`, `oldFormatError`).
    static let formatOneTag = "keyhost/transfer/v1"

    /// The format this link was read in: 2, or 1 for an old link that is only ever refused.
    public let version: UInt64
    public let tokenID: [UInt8]
    public let index: UInt64
    /// SHA-256 of the signed token's encoding (index 0) or of the previous link's envelope.
    public let previous: [UInt8]
    public let to: PublicKey
    /// The `now` of the run that made the transfer.
    public let time: Int64
    /// The arguments of that run: a map with text keys.
    public let arguments: CBORValue
    /// The id of that run's receipt (`Receipt.digest`), which commits to the run's effects.
    public let receipt: [UInt8]
    public let signature: [UInt8]
    /// The canonical encoding of `body`, made once: the digest, the envelope's encoding and every
    /// chain holding the link are built from it (a ledger's checks would otherwise re-encode each link
    /// several times per deposit).
    private let encodedBody: [UInt8]
    /// The canonical encoding of `envelope`.
    public let encoded: [UInt8]
    /// SHA-256 of `encoded`: what the next link's `previous` holds.
    public let hash: [UInt8]

    public init(tokenID: [UInt8], index: UInt64, previous: [UInt8], to: PublicKey, time: Int64, arguments: CBORValue = .map([]),
                receipt: [UInt8], signature: [UInt8], version: UInt64 = Transfer.formatVersion) {
        self.version = version
        self.tokenID = tokenID
        self.index = index
        self.previous = previous
        self.to = to
        self.time = time
        self.arguments = arguments
        self.receipt = receipt
        self.signature = signature
        let body = CBOREncoder.encode(Self.body(version: version, tokenID: tokenID, index: index, previous: previous, to: to, time: time,
                                                arguments: arguments, receipt: receipt))
        encodedBody = body
        // {"sig": signature, "transfer": body}: the keys in their canonical order ("sig" encodes first).
        var envelope: [UInt8] = [0xA2, 0x63, 0x73, 0x69, 0x67]
        envelope.reserveCapacity(body.count + signature.count + 24)
        CBOREncoder.appendHead(major: 2, argument: UInt64(signature.count), to: &envelope)
        envelope.append(contentsOf: signature)
        envelope.append(contentsOf: [0x68] + Array("transfer".utf8))
        envelope.append(contentsOf: body)
        encoded = envelope
        hash = Hash.sha256(envelope)
    }

    /// The signed map.
    public var body: CBORValue {
        Self.body(version: version, tokenID: tokenID, index: index, previous: previous, to: to, time: time, arguments: arguments, receipt: receipt)
    }

    private static func body(version: UInt64, tokenID: [UInt8], index: UInt64, previous: [UInt8], to: PublicKey, time: Int64,
                             arguments: CBORValue, receipt: [UInt8]) -> CBORValue {
        var pairs = [
            CBORPair(.text("v"), .unsigned(version)),
            CBORPair(.text("token_id"), .bytes(tokenID)),
            CBORPair(.text("index"), .unsigned(index)),
            CBORPair(.text("previous"), .bytes(previous)),
            CBORPair(.text("to"), .bytes(to.compressed)),
            CBORPair(.text("time"), .int(time)),
        ]
        if version != 1 { pairs.append(CBORPair(.text("args"), arguments)) }
        pairs.append(CBORPair(.text("receipt"), .bytes(receipt)))
        return .map(pairs)
    }

    /// What the holder signs.
    public var digest: [UInt8] { Hash.tagged(version == 1 ? Self.formatOneTag : Self.tag, encodedBody) }

    /// Why a format 1 link is refused wherever a chain is checked.
    public static let oldFormatError = TokenError("old_format", """
        the chain holds a format 1 transfer, which does not show the run of the token's program that made it \
        (such a link can be signed by hand, without the program); keyhost accepts only format \(formatVersion) \
        transfers: ask the payer to pay again with a current keyhost
        """)

    public var envelope: CBORValue { .map([CBORPair(.text("transfer"), body), CBORPair(.text("sig"), .bytes(signature))]) }

    /// Whether `holder` signed this link.
    public func isSigned(by holder: PublicKey) -> Bool { ProtocolSignature.isValid(signature, by: holder, digest: digest) }

    /// Reads a link strictly (fields, lengths, a valid key); the signature is read, not checked.
    /// A format 1 link is read as it was written, so that a wallet holding one still opens, and is
    /// refused by every check: it names no run, so it could be signed without the token's program.
    public init(envelope value: CBORValue) throws {
        let (body, signature) = try ProtocolSignature.envelope(value, body: "transfer", what: "a transfer")
        let version: UInt64
        switch body["v"] {
        case .unsigned(1)?: version = 1
        case .unsigned(Self.formatVersion)?: version = Self.formatVersion
        default: throw TokenError.field("transfer.v", "only version \(Self.formatVersion) is read")
        }
        guard case .map(let pairs) = body, pairs.count == (version == 1 ? 7 : 8) else {
            throw TokenError("encoding", "a format \(version) transfer has exactly \(version == 1 ? 7 : 8) fields")
        }
        guard case .bytes(let id)? = body["token_id"], id.count == 32 else { throw TokenError.field("transfer.token_id", "must be 32 bytes") }
        guard case .unsigned(let index)? = body["index"] else { throw TokenError.field("transfer.index", "must be a non-negative integer") }
        guard case .bytes(let previous)? = body["previous"], previous.count == 32 else { throw TokenError.field("transfer.previous", "must be 32 bytes") }
        guard case .bytes(let to)? = body["to"], to.count == 33, let key = try? PublicKey(bytes: to) else {
            throw TokenError.field("transfer.to", "must be a 33-byte compressed public key")
        }
        guard let time = body["time"]?.int64 else { throw TokenError.field("transfer.time", "must be an integer") }
        let arguments = version == 1 ? CBORValue.map([]) : body["args"] ?? .null
        guard case .map = arguments, CBOREncoder.encode(arguments).count <= TokenLimits.maxArgumentsBytes else {
            throw TokenError.field("transfer.args", "must be a map of at most \(TokenLimits.maxArgumentsBytes) bytes encoded")
        }
        guard case .bytes(let receipt)? = body["receipt"], receipt.count == 32 else { throw TokenError.field("transfer.receipt", "must be 32 bytes") }
        self.init(tokenID: id, index: index, previous: previous, to: key, time: time, arguments: arguments, receipt: receipt, signature: signature,
                  version: version)
    }
}
