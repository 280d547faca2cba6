import KeyhostCrypto

/// What a token run did, signed by the token's holder: which token, with which arguments, at
/// which `now`, and the effects it produced. Runs are deterministic in (token, arguments, now),
/// so anyone holding the receipt can re-run the program and compare (`verify-receipt`).
public struct Receipt: Equatable, Sendable {
    public static let formatVersion: UInt64 = 1
    /// Domain separation for the holder's signature.
    public static let signatureTag = "keyhost/receipt/v1"

    /// The token that ran, whole, so that the receipt can be checked on its own.
    public let token: SignedToken
    /// The caller's arguments: a map with text keys.
    public let arguments: CBORValue
    /// The run's fixed clock, Unix seconds.
    public let now: Int64
    /// The records the program emitted, in order.
    public let effects: [CBORValue]

    public init(token: SignedToken, arguments: CBORValue, now: Int64, effects: [CBORValue]) {
        self.token = token
        self.arguments = arguments
        self.now = now
        self.effects = effects
    }

    public var argumentsHash: [UInt8] { Hash.sha256(CBOREncoder.encode(arguments)) }
    /// The effects as one canonical CBOR array (what the wallet stores).
    public var encodedEffects: [UInt8] { CBOREncoder.encode(.array(effects)) }
    public var effectsHash: [UInt8] { Hash.sha256(encodedEffects) }
    public var tokenHash: [UInt8] { Hash.sha256(token.encoded) }

    /// The signed statement: hashes bind the token, arguments and effects.
    public var statement: CBORValue {
        .map([
            CBORPair(.text("v"), .unsigned(Self.formatVersion)),
            CBORPair(.text("token_id"), .bytes(token.token.id)),
            CBORPair(.text("token_sha256"), .bytes(tokenHash)),
            CBORPair(.text("args_sha256"), .bytes(argumentsHash)),
            CBORPair(.text("now"), .int(now)),
            CBORPair(.text("effects_sha256"), .bytes(effectsHash)),
            CBORPair(.text("holder"), .bytes(token.token.holder.compressed)),
        ])
    }

    /// The 32 bytes the holder signs; also the receipt's id.
    public var digest: [UInt8] { Hash.tagged(Self.signatureTag, CBOREncoder.encode(statement)) }
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
        guard holderKey.publicKey.compressed == receipt.token.token.holder.compressed else {
            throw TokenError("receipt", "the signing key is not the token's holder key")
        }
        return SignedReceipt(receipt: receipt, signature: try holderKey.sign(digest: receipt.digest).normalized().compact)
    }

    public var id: [UInt8] { receipt.digest }

    /// Whether the signature is the holder's over this receipt.
    public var signatureIsValid: Bool {
        guard signature.count == 64, let sig = try? ECDSASignature(compact: signature), sig.isLowS else { return false }
        return (try? receipt.token.token.holder.verify(sig, digest: receipt.digest)) ?? false
    }

    /// The whole receipt, token included: a deterministic CBOR map.
    public var encoded: [UInt8] {
        CBOREncoder.encode(.map([
            CBORPair(.text("receipt"), receipt.statement),
            CBORPair(.text("token"), .bytes(receipt.token.encoded)),
            CBORPair(.text("args"), receipt.arguments),
            CBORPair(.text("effects"), .array(receipt.effects)),
            CBORPair(.text("sig"), .bytes(signature)),
        ]))
    }

    public var armored: String { Self.armorPrefix + Base64URL.encode(encoded) }

    /// Parses strictly and checks that the statement's hashes match the token, arguments and
    /// effects carried with it; the signature is read, not checked (`signatureIsValid`).
    public init(encoded bytes: [UInt8]) throws {
        let limit = TokenLimits.maxEncodedBytes + TokenLimits.maxEffectsBytes + TokenLimits.maxArgumentsBytes + 4096
        guard bytes.count <= limit else { throw TokenError("limit", "receipt of \(bytes.count) bytes is more than the limit of \(limit)") }
        let value: CBORValue
        do {
            value = try CBORDecoder.decode(bytes, limits: .init(maxBytes: limit, maxDepth: TokenLimits.maxDepth + 2))
        } catch let error as CBORError {
            throw TokenError("encoding", "receipt encoding: \(error)")
        }
        guard case .map(let pairs) = value, pairs.count == 5, let statement = value["receipt"], case .bytes(let tokenBytes)? = value["token"],
              let arguments = value["args"], case .array(let effects)? = value["effects"], case .bytes(let signature)? = value["sig"]
        else { throw TokenError("encoding", "a receipt must be a map of exactly receipt, token, args, effects and sig") }
        guard signature.count == 64 else { throw TokenError("receipt", "receipt field 'sig': must be 64 bytes") }
        guard case .map = arguments else { throw TokenError("receipt", "receipt field 'args': must be a map") }
        let token = try SignedToken(encoded: tokenBytes)
        guard case .map(let statementPairs) = statement, statementPairs.count == 7, let now = statement["now"]?.int64
        else { throw TokenError("receipt", "receipt field 'receipt': must be the 7-field statement") }
        let receipt = Receipt(token: token, arguments: arguments, now: now, effects: effects)
        guard CBOREncoder.encode(receipt.statement) == CBOREncoder.encode(statement) else {
            throw TokenError("receipt", "the receipt's statement does not match the token, arguments and effects it carries (it was altered)")
        }
        self.init(receipt: receipt, signature: signature)
    }

    /// Reads one armoured receipt (`khrcpt1:…`); surrounding whitespace and `#` comment lines are ignored.
    public init(armored text: [UInt8], source: String = "input") throws {
        let limit = (TokenLimits.maxEncodedBytes + TokenLimits.maxEffectsBytes + TokenLimits.maxArgumentsBytes + 8192) / 3 * 4 + 64
        guard text.count <= limit * 2 else { throw TokenError("limit", "\(source): \(text.count) bytes is more than any receipt") }
        let lines = text.split(separator: UInt8(ascii: "\n")).map { $0.filter { $0 != 0x0D && $0 != 0x20 && $0 != 0x09 } }
            .filter { !$0.isEmpty && $0.first != UInt8(ascii: "#") }
        guard lines.count == 1, let line = lines.first, line.starts(with: Self.armorPrefix.utf8) else {
            throw TokenError("armor", "\(source): expected one receipt line starting with '\(Self.armorPrefix)'")
        }
        guard let bytes = Base64URL.decode(line.dropFirst(Self.armorPrefix.utf8.count)) else {
            throw TokenError("armor", "\(source): the text after '\(Self.armorPrefix)' is not base64url")
        }
        try self.init(encoded: bytes)
    }
}
