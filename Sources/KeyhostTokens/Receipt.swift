import KeyhostCrypto

/// What a token run did, signed by the token's current holder: which token (and the transfers it
/// went through), with which arguments, at which `now`, the effects it produced, and the key it
/// was handed on to, if the run was a transfer. Runs are deterministic in (token, arguments, now),
/// so anyone holding the receipt can re-run the program and compare (`verify-receipt`).
public struct Receipt: Equatable, Sendable {
    public static let formatVersion: UInt64 = 1
    /// Domain separation for the holder's signature.
    public static let signatureTag = "keyhost/receipt/v1"

    /// The token that ran and the transfers before the run, whole, so the receipt stands alone.
    public let chain: TokenChain
    /// The caller's arguments: a map with text keys.
    public let arguments: CBORValue
    /// The run's fixed clock, Unix seconds.
    public let now: Int64
    /// The records the program emitted, in order.
    public let effects: [CBORValue]
    /// The key the run handed the token to (a payment or a deposit), if any.
    public let transferTo: PublicKey?

    /// The signed statement: hashes bind the chain, arguments and effects (made once, with the receipt).
    public let statement: CBORValue
    /// The 32 bytes the holder signs; also the receipt's id.
    public let digest: [UInt8]
    /// The effects as one canonical CBOR array (what the wallet stores; its hash is in the statement).
    public let encodedEffects: [UInt8]

    public init(chain: TokenChain, arguments: CBORValue, now: Int64, effects: [CBORValue], transferTo: PublicKey? = nil) {
        self.chain = chain
        self.arguments = arguments
        self.now = now
        self.effects = effects
        self.transferTo = transferTo
        encodedEffects = CBOREncoder.encode(.array(effects))
        var pairs: [CBORPair] = [
            CBORPair(.text("v"), .unsigned(Self.formatVersion)),
            CBORPair(.text("token_id"), .bytes(chain.token.token.id)),
            CBORPair(.text("chain_sha256"), .bytes(chain.hash)),
            CBORPair(.text("args_sha256"), .bytes(Hash.sha256(CBOREncoder.encode(arguments)))),
            CBORPair(.text("now"), .int(now)),
            CBORPair(.text("effects_sha256"), .bytes(Hash.sha256(encodedEffects))),
            CBORPair(.text("holder"), .bytes(chain.currentHolder.compressed)),
        ]
        if let transferTo { pairs.append(CBORPair(.text("transfer_to"), .bytes(transferTo.compressed))) }
        statement = .map(pairs)
        digest = Hash.tagged(Self.signatureTag, CBOREncoder.encode(statement))
    }

    public init(token: SignedToken, arguments: CBORValue, now: Int64, effects: [CBORValue]) {
        self.init(chain: TokenChain(token: token), arguments: arguments, now: now, effects: effects)
    }

    public var token: SignedToken { chain.token }
    /// Who signs the receipt: the token's holder when it ran.
    public var holder: PublicKey { chain.currentHolder }
    public var argumentsHash: [UInt8] { Hash.sha256(CBOREncoder.encode(arguments)) }
    public var effectsHash: [UInt8] { Hash.sha256(encodedEffects) }
    public var chainHash: [UInt8] { chain.hash }
}

/// A receipt with the holder's ECDSA signature (64 bytes, r ‖ s, low S). ECDSA rather than
/// BIP340 because every Keycard signs ECDSA, and a card-held holder key must sign receipts.
public struct SignedReceipt: Equatable, Sendable {
    public static let armorPrefix = "khrcpt1:"

    public let receipt: Receipt
    public let signature: [UInt8]

    public init(receipt: Receipt, signature: [UInt8]) {
        self.receipt = receipt
        self.signature = signature
    }

    /// Signs with the holder's software key.
    public static func sign(_ receipt: Receipt, holderKey: PrivateKey) throws -> SignedReceipt {
        guard holderKey.publicKey.compressed == receipt.holder.compressed else {
            throw TokenError("receipt", "the signing key is not the token's holder key")
        }
        return SignedReceipt(receipt: receipt, signature: try holderKey.sign(digest: receipt.digest).normalized().compact)
    }

    public var id: [UInt8] { receipt.digest }

    /// Whether the signature is the holder's over this receipt.
    public var signatureIsValid: Bool {
        guard signature.count == 64, let sig = try? ECDSASignature(compact: signature), sig.isLowS else { return false }
        return (try? receipt.holder.verify(sig, digest: receipt.digest)) ?? false
    }

    /// The whole receipt, chain included: a deterministic CBOR map.
    public var encoded: [UInt8] {
        CBOREncoder.encode(.map([
            CBORPair(.text("receipt"), receipt.statement),
            CBORPair(.text("chain"), .bytes(receipt.chain.encoded)),
            CBORPair(.text("args"), receipt.arguments),
            CBORPair(.text("effects"), .array(receipt.effects)),
            CBORPair(.text("sig"), .bytes(signature)),
        ]))
    }

    public var armored: String { Self.armorPrefix + Base64.encodeURL(encoded) }

    /// Parses strictly and checks that the statement's hashes match the token, arguments and
    /// effects carried with it; the signature is read, not checked (`signatureIsValid`).
    public init(encoded bytes: [UInt8]) throws {
        let limit = TokenChain.maxEncodedBytes + TokenLimits.maxEffectsBytes + TokenLimits.maxArgumentsBytes + 4096
        guard bytes.count <= limit else { throw TokenError("limit", "receipt of \(bytes.count) bytes is more than the limit of \(limit)") }
        let value: CBORValue
        do {
            value = try CBORDecoder.decode(bytes, limits: .init(maxBytes: limit, maxDepth: TokenLimits.maxDepth + 4))
        } catch let error as CBORError {
            throw TokenError("encoding", "receipt encoding: \(error)")
        }
        guard case .map(let pairs) = value, pairs.count == 5, let statement = value["receipt"], case .bytes(let chainBytes)? = value["chain"],
              let arguments = value["args"], case .array(let effects)? = value["effects"], case .bytes(let signature)? = value["sig"]
        else { throw TokenError("encoding", "a receipt must be a map of exactly receipt, chain, args, effects and sig") }
        guard signature.count == 64 else { throw TokenError("receipt", "receipt field 'sig': must be 64 bytes") }
        guard case .map = arguments else { throw TokenError("receipt", "receipt field 'args': must be a map") }
        let chain = try TokenChain(encoded: chainBytes)
        guard case .map(let statementPairs) = statement, statementPairs.count == 7 || statementPairs.count == 8, let now = statement["now"]?.int64
        else { throw TokenError("receipt", "receipt field 'receipt': must be the 7- or 8-field statement") }
        var transferTo: PublicKey?
        if let to = statement["transfer_to"] {
            guard case .bytes(let b) = to, b.count == 33, let key = try? PublicKey(bytes: b) else {
                throw TokenError("receipt", "receipt field 'transfer_to': must be a 33-byte compressed key")
            }
            transferTo = key
        }
        let receipt = Receipt(chain: chain, arguments: arguments, now: now, effects: effects, transferTo: transferTo)
        guard CBOREncoder.encode(receipt.statement) == CBOREncoder.encode(statement) else {
            throw TokenError("receipt", "the receipt's statement does not match the token, arguments and effects it carries (it was altered)")
        }
        self.init(receipt: receipt, signature: signature)
    }

    /// Reads one armoured receipt (`khrcpt1:…`); surrounding whitespace and `#` comment lines are ignored.
    public init(armored text: [UInt8], source: String = "input") throws {
        let limit = (TokenChain.maxEncodedBytes + TokenLimits.maxEffectsBytes + TokenLimits.maxArgumentsBytes + 8192) / 3 * 4 + 64
        guard text.count <= limit * 2 else { throw TokenError("limit", "\(source): \(text.count) bytes is more than any receipt") }
        let lines = text.split(separator: UInt8(ascii: "\n")).map { $0.filter { $0 != 0x0D && $0 != 0x20 && $0 != 0x09 } }
            .filter { !$0.isEmpty && $0.first != UInt8(ascii: "#") }
        guard lines.count == 1, let line = lines.first, line.starts(with: Self.armorPrefix.utf8) else {
            throw TokenError("armor", "\(source): expected one receipt line starting with '\(Self.armorPrefix)'")
        }
        guard let bytes = Base64.decodeURL(line.dropFirst(Self.armorPrefix.utf8.count)) else {
            throw TokenError("armor", "\(source): the text after '\(Self.armorPrefix)' is not base64url")
        }
        try self.init(encoded: bytes)
    }
}
