import KeyhostCrypto

/// Two different transfers of one token from the same position, both signed by the holder there:
/// proof, checkable with the issuer's key alone, that this holder spent the token twice.
public struct FraudProof: Equatable, Sendable {
    public static let armorPrefix = "khproof1:"

    public let token: SignedToken
    /// The links both chains share, before they part.
    public let common: [Transfer]
    public let a: Transfer
    public let b: Transfer

    public init(token: SignedToken, common: [Transfer], a: Transfer, b: Transfer) {
        self.token = token
        self.common = common
        self.a = a
        self.b = b
    }

    /// The proof two chains of one token give, if they part at a link both signed by the same
    /// holder; nil when they are the same chain or one merely extends the other.
    public static func between(_ x: TokenChain, _ y: TokenChain) -> FraudProof? {
        guard x.token == y.token else { return nil }
        var i = 0
        while i < x.transfers.count, i < y.transfers.count, x.transfers[i] == y.transfers[i] { i += 1 }
        guard i < x.transfers.count, i < y.transfers.count else { return nil }
        let proof = FraudProof(token: x.token, common: Array(x.transfers[..<i]), a: x.transfers[i], b: y.transfers[i])
        return (try? proof.verify()) != nil ? proof : nil
    }

    /// Checks the proof and returns the key that signed both transfers.
    @discardableResult
    public func verify() throws -> PublicKey {
        let prefix = TokenChain(token: token, transfers: common)
        try prefix.verify()
        let position = common.count
        let holder = prefix.currentHolder
        let previous = prefix.previousHash(at: position)
        for (name, link) in [("a", a), ("b", b)] {
            guard link.version == Transfer.formatVersion else { throw Transfer.oldFormatError }
            guard link.tokenID == token.token.id, link.index == UInt64(position), link.previous == previous else {
                throw TokenError("proof", "transfer \(name) does not continue the common links")
            }
            guard link.isSigned(by: holder) else { throw TokenError("proof", "transfer \(name) is not signed by the holder \(holder)") }
        }
        guard a.encoded != b.encoded else { throw TokenError("proof", "the two transfers are the same: nothing was spent twice") }
        return holder
    }

    /// Checks the proof as `verify()` does, and that a run of the token's program made every link
    /// in it (`TransferRuns`): a link signed by hand proves nothing about the program's holder.
    @discardableResult
    public func verify(limits: RunLimits = .walletDefault, bytecodeAllowed: Bool, runner: (RunRequest) -> RunOutcome) throws -> PublicKey {
        let holder = try verify()
        try TransferRuns.verify(TokenChain(token: token, transfers: common + [a]), limits: limits, bytecodeAllowed: bytecodeAllowed, runner: runner)
        try TransferRuns.verify(TokenChain(token: token, transfers: common + [b]), links: common.count..<(common.count + 1), limits: limits,
                                bytecodeAllowed: bytecodeAllowed, runner: runner)
        return holder
    }

    public var encoded: [UInt8] {
        CBOREncoder.encode(.map([
            CBORPair(.text("v"), .unsigned(1)),
            CBORPair(.text("token"), .bytes(token.encoded)),
            CBORPair(.text("common"), .array(common.map(\.envelope))),
            CBORPair(.text("a"), a.envelope),
            CBORPair(.text("b"), b.envelope),
        ]))
    }

    public var armored: String { ProtocolSignature.armor(Self.armorPrefix, encoded) }

    public init(encoded bytes: [UInt8]) throws {
        let value = try ProtocolSignature.decode(bytes, limit: TokenChain.maxEncodedBytes + 1024, what: "a proof")
        guard case .map(let pairs) = value, pairs.count == 5, case .unsigned(1)? = value["v"], case .bytes(let token)? = value["token"],
              case .array(let common)? = value["common"], let a = value["a"], let b = value["b"], common.count < TokenChain.maxLinks
        else { throw TokenError("encoding", "a proof must be a map of exactly v (1), token, common, a and b") }
        self.init(token: try SignedToken(encoded: token), common: try common.map(Transfer.init(envelope:)),
                  a: try Transfer(envelope: a), b: try Transfer(envelope: b))
    }

    /// The one proof in armoured text.
    public init(armored text: [UInt8], source: String = "input") throws {
        let items = try ProtocolSignature.unarmor(text, prefix: Self.armorPrefix, source: source, limit: TokenChain.maxEncodedBytes + 1024)
        guard items.count == 1 else { throw TokenError("armor", "\(source) holds \(items.count) proofs; give one") }
        try self.init(encoded: items[0])
    }
}
