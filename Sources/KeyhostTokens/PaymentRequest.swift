import KeyhostCrypto

/// What a payee asks for: an amount in one unit, from issuers it accepts, to one-time exchange
/// keys it issued, from when it asked until a time; signed by the payee's wallet key (docs/payments.md).
public struct PaymentRequest: Equatable, Sendable {
    public static let tag = "keyhost/request/v1"
    public static let armorPrefix = "khreq1:"
    /// Exchange keys one request may carry.
    public static let maxKeys = 256

    public let amount: UInt64
    public let unit: String
    public let issuers: [XOnlyPublicKey]
    public let keys: [PublicKey]
    public let expires: Int64
    /// When the payee made the request (its clock): a payment's links are not dated before it.
    /// Nil only in requests made before keyhost wrote it; their payee uses the time it stored them at.
    public let created: Int64?
    public let payee: PublicKey
    public let memo: String?
    public let signature: [UInt8]

    public init(amount: UInt64, unit: String, issuers: [XOnlyPublicKey], keys: [PublicKey], expires: Int64, created: Int64? = nil,
                payee: PublicKey, memo: String? = nil, signature: [UInt8] = []) {
        self.amount = amount
        self.unit = unit
        self.issuers = issuers
        self.keys = keys
        self.expires = expires
        self.created = created
        self.payee = payee
        self.memo = memo
        self.signature = signature
    }

    public var body: CBORValue {
        var pairs: [CBORPair] = [
            CBORPair(.text("v"), .unsigned(1)),
            CBORPair(.text("amount"), .unsigned(amount)),
            CBORPair(.text("unit"), .text(unit)),
            CBORPair(.text("issuers"), .array(issuers.map { .bytes($0.bytes) })),
            CBORPair(.text("keys"), .array(keys.map { .bytes($0.compressed) })),
            CBORPair(.text("expires"), .int(expires)),
            CBORPair(.text("payee"), .bytes(payee.compressed)),
        ]
        if let created { pairs.append(CBORPair(.text("created"), .int(created))) }
        if let memo { pairs.append(CBORPair(.text("memo"), .text(memo))) }
        return .map(pairs)
    }

    /// What the payee signs; also the request's id, which a payment names.
    public var digest: [UInt8] { ProtocolSignature.digest(Self.tag, body) }
    public var id: [UInt8] { digest }

    /// The same request signed by the payee.
    public func signed(_ sign: ([UInt8]) throws -> [UInt8]) throws -> PaymentRequest {
        let sig = try sign(digest)
        let result = PaymentRequest(amount: amount, unit: unit, issuers: issuers, keys: keys, expires: expires, created: created, payee: payee,
                                    memo: memo, signature: sig)
        guard result.signatureIsValid else { throw TokenError("request", "the request signature does not verify with the payee key") }
        return result
    }

    public var signatureIsValid: Bool { ProtocolSignature.isValid(signature, by: payee, digest: digest) }

    /// Checks the request's own rules and signature.
    public func validate() throws {
        guard amount > 0 else { throw TokenError.field("request.amount", "must be more than 0") }
        guard !unit.isEmpty, unit.utf8.count <= TokenLimits.maxUnitLength else { throw TokenError.field("request.unit", "must be 1 to \(TokenLimits.maxUnitLength) characters") }
        guard !issuers.isEmpty else { throw TokenError.field("request.issuers", "must name at least one issuer") }
        guard !keys.isEmpty, keys.count <= Self.maxKeys, Set(keys.map(\.compressed)).count == keys.count else {
            throw TokenError.field("request.keys", "must be 1 to \(Self.maxKeys) distinct exchange keys")
        }
        if let memo, memo.utf8.count > 256 { throw TokenError.field("request.memo", "is longer than 256 bytes") }
        if let created, created >= expires {
            throw TokenError.field("request.created", "must be before the request's expiry (\(created) >= \(expires))")
        }
        guard signatureIsValid else { throw TokenError("signature", "the request is not signed by its payee (altered, or forged)") }
    }

    public var encoded: [UInt8] {
        CBOREncoder.encode(.map([CBORPair(.text("request"), body), CBORPair(.text("sig"), .bytes(signature))]))
    }

    public var armored: String { ProtocolSignature.armor(Self.armorPrefix, encoded) }

    public init(encoded bytes: [UInt8]) throws {
        let value = try ProtocolSignature.decode(bytes, limit: 64 << 10, what: "a request")
        let (body, sig) = try ProtocolSignature.envelope(value, body: "request", what: "a request")
        guard case .map(let pairs) = body else { throw TokenError("encoding", "a request body must be a map") }
        let known: Set<String> = ["v", "amount", "unit", "issuers", "keys", "expires", "created", "payee", "memo"]
        for pair in pairs {
            guard case .text(let name) = pair.key, known.contains(name) else { throw TokenError("encoding", "unknown request field") }
        }
        guard case .unsigned(1)? = body["v"] else { throw TokenError.field("request.v", "only version 1 is read") }
        guard case .unsigned(let amount)? = body["amount"] else { throw TokenError.field("request.amount", "must be a non-negative integer") }
        guard case .text(let unit)? = body["unit"] else { throw TokenError.field("request.unit", "must be text") }
        guard case .array(let issuerItems)? = body["issuers"], issuerItems.count <= 64 else { throw TokenError.field("request.issuers", "must be an array of at most 64 keys") }
        let issuers: [XOnlyPublicKey] = try issuerItems.map {
            guard case .bytes(let b) = $0, b.count == 32, let k = try? XOnlyPublicKey(bytes: b) else {
                throw TokenError.field("request.issuers", "must hold 32-byte x-only keys")
            }
            return k
        }
        guard case .array(let keyItems)? = body["keys"], keyItems.count <= Self.maxKeys else {
            throw TokenError.field("request.keys", "must be an array of at most \(Self.maxKeys) keys")
        }
        let keys: [PublicKey] = try keyItems.map {
            guard case .bytes(let b) = $0, b.count == 33, let k = try? PublicKey(bytes: b) else {
                throw TokenError.field("request.keys", "must hold 33-byte compressed keys")
            }
            return k
        }
        guard let expires = body["expires"]?.int64 else { throw TokenError.field("request.expires", "must be an integer") }
        var created: Int64?
        if let c = body["created"] {
            guard let time = c.int64 else { throw TokenError.field("request.created", "must be an integer") }
            created = time
        }
        guard case .bytes(let payeeBytes)? = body["payee"], payeeBytes.count == 33, let payee = try? PublicKey(bytes: payeeBytes) else {
            throw TokenError.field("request.payee", "must be a 33-byte compressed key")
        }
        var memo: String?
        if let m = body["memo"] {
            guard case .text(let text) = m else { throw TokenError.field("request.memo", "must be text") }
            memo = text
        }
        self.init(amount: amount, unit: unit, issuers: issuers, keys: keys, expires: expires, created: created, payee: payee, memo: memo,
                  signature: sig)
    }

    public init(armored text: [UInt8], source: String = "input") throws {
        let items = try ProtocolSignature.unarmor(text, prefix: Self.armorPrefix, source: source, limit: 64 << 10)
        guard items.count == 1 else { throw TokenError("armor", "\(source) holds \(items.count) requests; give one") }
        try self.init(encoded: items[0])
    }
}

/// The tokens a payer hands over for one request: each a chain ending at one of its keys.
public struct Payment: Equatable, Sendable {
    public static let armorPrefix = "khpay1:"

    public let requestID: [UInt8]
    public let chains: [TokenChain]

    public init(requestID: [UInt8], chains: [TokenChain]) {
        self.requestID = requestID
        self.chains = chains
    }

    public var encoded: [UInt8] {
        CBOREncoder.encode(.map([
            CBORPair(.text("v"), .unsigned(1)),
            CBORPair(.text("request"), .bytes(requestID)),
            CBORPair(.text("chains"), .array(chains.map { .bytes($0.encoded) })),
        ]))
    }

    public var armored: String { ProtocolSignature.armor(Self.armorPrefix, encoded) }

    public init(encoded bytes: [UInt8]) throws {
        let value = try ProtocolSignature.decode(bytes, limit: TokenChain.maxEncodedBytes * PaymentRequest.maxKeys, what: "a payment")
        guard case .map(let pairs) = value, pairs.count == 3, case .unsigned(1)? = value["v"], case .bytes(let request)? = value["request"],
              request.count == 32, case .array(let items)? = value["chains"], !items.isEmpty, items.count <= PaymentRequest.maxKeys
        else { throw TokenError("encoding", "a payment must be a map of exactly v (1), request (32 bytes) and chains (1 to \(PaymentRequest.maxKeys))") }
        self.init(requestID: request, chains: try items.map {
            guard case .bytes(let b) = $0 else { throw TokenError("encoding", "a payment's chains must be byte strings") }
            return try TokenChain(encoded: b)
        })
    }

    public init(armored text: [UInt8], source: String = "input") throws {
        let items = try ProtocolSignature.unarmor(text, prefix: Self.armorPrefix, source: source, limit: TokenChain.maxEncodedBytes * 16)
        guard items.count == 1 else { throw TokenError("armor", "\(source) holds \(items.count) payments; give one") }
        try self.init(encoded: items[0])
    }
}
