import KeyhostCrypto

/// A token and the transfers it went through: what a payment carries and a deposit hands in.
public struct TokenChain: Equatable, Sendable {
    public static let armorPrefix = "khchain1:"
    /// Links a chain may have.
    public static let maxLinks = 64

    public let token: SignedToken
    public let transfers: [Transfer]
    /// The canonical encoding, assembled once from the token's and the links' own encodings.
    public let encoded: [UInt8]
    /// SHA-256 of the encoding: one chain, one hash (what a ledger records, what a receipt names).
    public let hash: [UInt8]

    public init(token: SignedToken, transfers: [Transfer] = []) {
        self.token = token
        self.transfers = transfers
        // {"token": bytes, "transfers": [envelope…]}: the keys in their canonical order ("token" encodes first).
        var bytes: [UInt8] = [0xA2, 0x65] + Array("token".utf8)
        bytes.reserveCapacity(token.encoded.count + transfers.reduce(0) { $0 + $1.encoded.count } + 32)
        CBOREncoder.appendHead(major: 2, argument: UInt64(token.encoded.count), to: &bytes)
        bytes.append(contentsOf: token.encoded)
        bytes.append(contentsOf: [0x69] + Array("transfers".utf8))
        CBOREncoder.appendHead(major: 4, argument: UInt64(transfers.count), to: &bytes)
        for link in transfers { bytes.append(contentsOf: link.encoded) }
        encoded = bytes
        hash = Hash.sha256(bytes)
    }

    /// Who holds the token now: the last link's `to`, or the token's holder.
    public var currentHolder: PublicKey { transfers.last?.to ?? token.token.holder }

    /// The holder at position `index` (who signs link `index`).
    public func holder(at index: Int) -> PublicKey { index == 0 ? token.token.holder : transfers[index - 1].to }

    /// What link `index` must name as its predecessor.
    public func previousHash(at index: Int) -> [UInt8] { index == 0 ? Hash.sha256(token.encoded) : transfers[index - 1].hash }

    /// The issuer's deposit key: its x-only key with even Y.
    public static func depositKey(issuer: XOnlyPublicKey) -> PublicKey { issuer.evenYPublicKey }

    /// Whether the chain ends with a transfer to its issuer's deposit key, and only there.
    public var isDeposit: Bool {
        let deposit = Self.depositKey(issuer: token.token.issuer)
        guard let last = transfers.last, last.to == deposit else { return false }
        return !transfers.dropLast().contains { $0.to == deposit }
    }

    /// Checks the issuer's signature and every link (token, index, predecessor, signer, and a time
    /// not before its predecessor's).
    public func verify() throws {
        try token.verify()
        try verifyLinks()
    }

    /// `verify()` without the issuer's signature, for a caller that has just checked it.
    public func verifyLinks() throws {
        guard transfers.count <= Self.maxLinks else {
            throw TokenError("limit", "a chain of \(transfers.count) transfers is longer than the limit of \(Self.maxLinks)")
        }
        for (i, link) in transfers.enumerated() {
            let name = "transfer \(i + 1) of \(transfers.count)"
            guard link.version == Transfer.formatVersion else { throw Transfer.oldFormatError }
            guard link.tokenID == token.token.id else { throw TokenError("chain", "\(name) is for another token") }
            guard link.index == UInt64(i) else { throw TokenError("chain", "\(name) says it is at position \(link.index)") }
            guard link.previous == previousHash(at: i) else {
                throw TokenError("chain", "\(name) does not follow the one before it (replayed or reordered)")
            }
            guard link.isSigned(by: holder(at: i)) else {
                throw TokenError("chain", "\(name) is not signed by the holder at that point, \(holder(at: i))")
            }
            if let error = LinkTime.outOfOrder(transfers, at: i, name: name) { throw error }
        }
    }

    /// The chain's canonical CBOR value (what `encoded` encodes).
    public var cbor: CBORValue {
        .map([CBORPair(.text("token"), .bytes(token.encoded)), CBORPair(.text("transfers"), .array(transfers.map(\.envelope)))])
    }

    public var armored: String { ProtocolSignature.armor(Self.armorPrefix, encoded) }

    /// A token and 64 links, each with its run's arguments.
    static let maxEncodedBytes = TokenLimits.maxEncodedBytes + maxLinks * (512 + TokenLimits.maxArgumentsBytes)

    /// Parses strictly; call `verify()` to check signatures.
    public init(encoded bytes: [UInt8]) throws {
        let value = try ProtocolSignature.decode(bytes, limit: Self.maxEncodedBytes, what: "a chain")
        try self.init(cbor: value)
    }

    init(cbor value: CBORValue) throws {
        guard case .map(let pairs) = value, pairs.count == 2, case .bytes(let token)? = value["token"], case .array(let links)? = value["transfers"] else {
            throw TokenError("encoding", "a chain must be a map of exactly 'token' (bytes) and 'transfers' (an array)")
        }
        guard links.count <= Self.maxLinks else {
            throw TokenError("limit", "a chain of \(links.count) transfers is longer than the limit of \(Self.maxLinks)")
        }
        self.init(token: try SignedToken(encoded: token), transfers: try links.map(Transfer.init(envelope:)))
    }

    /// Every chain in armoured text (`khchain1:` lines).
    public static func chains(in text: [UInt8], source: String = "input") throws -> [TokenChain] {
        try ProtocolSignature.unarmor(text, prefix: armorPrefix, source: source, limit: maxEncodedBytes * 64).map(TokenChain.init(encoded:))
    }

    /// The chain with one more link, signed by the current holder's key. `receipt` must be the id
    /// of the run that made the transfer (`Receipt.digest`), or verifiers refuse the link.
    public func appending(to next: PublicKey, time: Int64, arguments: CBORValue = .map([]), receipt: [UInt8],
                          sign: ([UInt8]) throws -> [UInt8]) throws -> TokenChain {
        guard transfers.count < Self.maxLinks else {
            throw TokenError("limit", "the token has been transferred \(transfers.count) times, the most a chain may hold")
        }
        let unsigned = Transfer(tokenID: token.token.id, index: UInt64(transfers.count), previous: previousHash(at: transfers.count),
                                to: next, time: time, arguments: arguments, receipt: receipt, signature: [])
        let link = Transfer(tokenID: unsigned.tokenID, index: unsigned.index, previous: unsigned.previous, to: next, time: time,
                            arguments: arguments, receipt: receipt, signature: try sign(unsigned.digest))
        guard link.isSigned(by: currentHolder) else {
            throw TokenError("chain", "the transfer was not signed by the current holder \(currentHolder)")
        }
        return TokenChain(token: token, transfers: transfers + [link])
    }

    /// The chain handed on by a run with `arguments` at `time` that emitted `effects` and called
    /// `t.transfer(next)`: the link names that run's receipt.
    public func appending(to next: PublicKey, time: Int64, arguments: CBORValue = .map([]), effects: [CBORValue],
                          sign: ([UInt8]) throws -> [UInt8]) throws -> TokenChain {
        let receipt = Receipt(chain: self, arguments: arguments, now: time, effects: effects, transferTo: next)
        return try appending(to: next, time: time, arguments: arguments, receipt: receipt.digest, sign: sign)
    }
}
