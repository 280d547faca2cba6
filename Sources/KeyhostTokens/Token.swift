import KeyhostCrypto

/// The issuer-signed content of a one-time token. Its canonical form is a deterministic CBOR map
/// with text keys; `SignedToken` adds the issuer's signature over that encoding.
public struct Token: Equatable, Sendable {
    /// The only format this keyhost reads and writes.
    public static let formatVersion: UInt64 = 1

    /// 32 random bytes naming this token everywhere (wallet, ledger, receipts).
    public var id: [UInt8]
    /// The issuer's BIP340 (x-only) public key.
    public var issuer: XOnlyPublicKey
    /// The amount, in the unit's smallest denomination.
    public var value: UInt64
    public var unit: String
    /// Unix seconds before which the token must not run.
    public var notBefore: Int64?
    /// Unix seconds from which the token no longer runs.
    public var expires: Int64?
    public var program: TokenProgram
    /// The key that may run the token (compressed secp256k1, held in software or on a card).
    public var holder: PublicKey
    /// Anything the issuer adds (integers, strings, bytes, booleans, null, arrays, maps).
    public var metadata: CBORValue?
    /// The issuer's run limits for the program (capped by the wallet).
    public var policy: TokenPolicy

    public init(
        id: [UInt8], issuer: XOnlyPublicKey, value: UInt64, unit: String, notBefore: Int64? = nil, expires: Int64? = nil,
        program: TokenProgram, holder: PublicKey, metadata: CBORValue? = nil, policy: TokenPolicy = TokenPolicy()
    ) {
        self.id = id
        self.issuer = issuer
        self.value = value
        self.unit = unit
        self.notBefore = notBefore
        self.expires = expires
        self.program = program
        self.holder = holder
        self.metadata = metadata
        self.policy = policy
    }

    /// SHA-256 of the program, as signed.
    public var programHash: [UInt8] { Hash.sha256(program.code) }

    /// Checks the fields' own rules (lengths, unit, window, sizes), before signing or after parsing.
    public func validate() throws {
        guard id.count == 32 else { throw TokenError.field("id", "must be 32 bytes, got \(id.count)") }
        guard !unit.isEmpty, unit.utf8.count <= TokenLimits.maxUnitLength,
              unit.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
        else {
            throw TokenError.field("unit", "must be 1 to \(TokenLimits.maxUnitLength) printable ASCII characters without spaces, got \(unit.debugDescription)")
        }
        if let notBefore, let expires, expires <= notBefore {
            throw TokenError.field("expires", "must be later than not_before (\(expires) <= \(notBefore))")
        }
        guard !program.code.isEmpty else { throw TokenError.field("program", "is empty") }
        guard program.code.count <= TokenLimits.maxProgramBytes else {
            throw TokenError("limit", "token field 'program': \(program.code.count) bytes is more than the limit of \(TokenLimits.maxProgramBytes)")
        }
        if let metadata {
            let size = CBOREncoder.encode(metadata).count
            guard size <= TokenLimits.maxMetadataBytes else {
                throw TokenError("limit", "token field 'meta': \(size) bytes encoded is more than the limit of \(TokenLimits.maxMetadataBytes)")
            }
        }
    }

    /// The canonical CBOR map.
    public var cbor: CBORValue {
        var pairs: [CBORPair] = [
            CBORPair(.text("v"), .unsigned(Self.formatVersion)),
            CBORPair(.text("id"), .bytes(id)),
            CBORPair(.text("issuer"), .bytes(issuer.bytes)),
            CBORPair(.text("value"), .unsigned(value)),
            CBORPair(.text("unit"), .text(unit)),
            CBORPair(.text("program"), .bytes(program.code)),
            CBORPair(.text("program_kind"), .text(program.kind.rawValue)),
            CBORPair(.text("program_sha256"), .bytes(programHash)),
            CBORPair(.text("holder"), .bytes(holder.compressed)),
        ]
        if let notBefore { pairs.append(CBORPair(.text("not_before"), .int(notBefore))) }
        if let expires { pairs.append(CBORPair(.text("expires"), .int(expires))) }
        if let metadata { pairs.append(CBORPair(.text("meta"), metadata)) }
        if !policy.isEmpty { pairs.append(CBORPair(.text("limits"), policy.cbor)) }
        return .map(pairs)
    }

    /// The canonical encoding, which the issuer signs.
    public var encoded: [UInt8] { CBOREncoder.encode(cbor) }

    static let fieldNames: Set<String> = [
        "v", "id", "issuer", "value", "unit", "program", "program_kind", "program_sha256", "holder", "not_before", "expires", "meta", "limits",
    ]

    /// Reads a token map, refusing unknown versions and fields, wrong types and a program that
    /// does not match its hash.
    public init(cbor value: CBORValue) throws {
        guard case .map(let pairs) = value else { throw TokenError("encoding", "a token must be a CBOR map, got \(value.kindName)") }
        for pair in pairs {
            guard case .text(let name) = pair.key, Self.fieldNames.contains(name) else {
                throw TokenError("encoding", "unknown token field \(Self.describe(pair.key)): this keyhost reads format version \(Self.formatVersion) only")
            }
        }
        func required(_ name: String) throws -> CBORValue {
            guard let v = value[name] else { throw TokenError.field(name, "is missing") }
            return v
        }
        func bytes(_ name: String, count: Int? = nil) throws -> [UInt8] {
            guard case .bytes(let b) = try required(name) else { throw TokenError.field(name, "must be a byte string") }
            if let count, b.count != count { throw TokenError.field(name, "must be \(count) bytes, got \(b.count)") }
            return b
        }
        func text(_ name: String) throws -> String {
            guard case .text(let t) = try required(name) else { throw TokenError.field(name, "must be a text string") }
            return t
        }
        func time(_ name: String) throws -> Int64? {
            guard let v = value[name] else { return nil }
            guard let t = v.int64 else { throw TokenError.field(name, "must be an integer number of Unix seconds") }
            return t
        }
        guard case .unsigned(let version) = try required("v"), version == Self.formatVersion else {
            throw TokenError.field("v", "format version \(Self.describe(value["v"] ?? .null)) is not supported (this keyhost reads version \(Self.formatVersion))")
        }
        let issuerBytes = try bytes("issuer", count: 32)
        guard let issuer = try? XOnlyPublicKey(bytes: issuerBytes) else { throw TokenError.field("issuer", "is not a valid x-only public key") }
        let holderBytes = try bytes("holder", count: 33)
        guard let holder = try? PublicKey(bytes: holderBytes) else { throw TokenError.field("holder", "is not a valid compressed public key") }
        guard case .unsigned(let amount) = try required("value") else { throw TokenError.field("value", "must be a non-negative integer") }
        let kindName = try text("program_kind")
        guard let kind = TokenProgram.Kind(rawValue: kindName) else {
            throw TokenError.field("program_kind", "\(kindName.debugDescription) is not one of \(TokenProgram.Kind.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        let code = try bytes("program")
        let hash = try bytes("program_sha256", count: 32)
        self.init(
            id: try bytes("id"), issuer: issuer, value: amount, unit: try text("unit"), notBefore: try time("not_before"),
            expires: try time("expires"), program: TokenProgram(kind: kind, code: code), holder: holder, metadata: value["meta"],
            policy: try value["limits"].map(TokenPolicy.init(cbor:)) ?? TokenPolicy()
        )
        try validate()
        guard hash == programHash else { throw TokenError.field("program_sha256", "does not match the program (the program was altered)") }
    }

    private static func describe(_ value: CBORValue) -> String {
        switch value {
        case .text(let t): return "'\(t.prefix(40))'"
        case .unsigned(let n): return String(n)
        default: return "(\(value.kindName))"
        }
    }
}
