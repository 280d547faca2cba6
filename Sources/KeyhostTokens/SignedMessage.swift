import KeyhostCrypto

/// The signature convention of the payment protocol: ECDSA over secp256k1, 64 bytes r ‖ s with
/// low S, over the tagged hash of a map's canonical encoding. ECDSA because every Keycard signs
/// it; low S so that a signature cannot be altered into a second valid one.
public enum ProtocolSignature {
    /// The digest signed for `map` under `tag`.
    public static func digest(_ tag: String, _ map: CBORValue) -> [UInt8] { Hash.tagged(tag, CBOREncoder.encode(map)) }

    /// Whether `signature` is `key`'s over `digest`.
    public static func isValid(_ signature: [UInt8], by key: PublicKey, digest: [UInt8]) -> Bool {
        guard signature.count == 64, let sig = try? ECDSASignature(compact: signature), sig.isLowS else { return false }
        return (try? key.verify(sig, digest: digest)) ?? false
    }

    /// Signs with a software key.
    public static func sign(_ digest: [UInt8], with key: PrivateKey) throws -> [UInt8] {
        try key.sign(digest: digest).normalized().compact
    }

    /// Reads `{ <name>: map, "sig": 64 bytes }`, nothing else.
    static func envelope(_ value: CBORValue, body name: String, what: String) throws -> (CBORValue, [UInt8]) {
        guard case .map(let pairs) = value, pairs.count == 2, let body = value[name], case .map = body,
              case .bytes(let sig)? = value["sig"], sig.count == 64
        else { throw TokenError("encoding", "\(what) must be a map of exactly '\(name)' (a map) and 'sig' (64 bytes)") }
        return (body, sig)
    }

    /// Decodes strictly with the payment protocol's limits.
    static func decode(_ bytes: [UInt8], limit: Int, what: String) throws -> CBORValue {
        guard bytes.count <= limit else { throw TokenError("limit", "\(what) of \(bytes.count) bytes is more than the limit of \(limit)") }
        do {
            return try CBORDecoder.decode(bytes, limits: .init(maxBytes: limit, maxDepth: TokenLimits.maxDepth + 4))
        } catch let error as CBORError {
            throw TokenError("encoding", "\(what) encoding: \(error)")
        }
    }

    /// `prefix` + base64url, one line.
    static func armor(_ prefix: String, _ bytes: [UInt8]) -> String { prefix + Base64.encodeURL(bytes) }

    /// The one armoured item in `text` (blank lines and `#` comments ignored).
    static func unarmor(_ text: [UInt8], prefix: String, source: String, limit: Int) throws -> [[UInt8]] {
        guard text.count <= limit * 4 / 3 + 4096 else { throw TokenError("limit", "\(source) is larger than any \(prefix) item") }
        var items: [[UInt8]] = []
        for (index, raw) in text.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated() {
            let line = raw.filter { $0 != 0x0D && $0 != 0x20 && $0 != 0x09 }
            if line.isEmpty || line.first == UInt8(ascii: "#") { continue }
            guard line.starts(with: prefix.utf8) else {
                throw TokenError("armor", "\(source) line \(index + 1): expected a line starting with '\(prefix)'")
            }
            guard let bytes = Base64.decodeURL(line.dropFirst(prefix.utf8.count)) else {
                throw TokenError("armor", "\(source) line \(index + 1): the text after '\(prefix)' is not base64url")
            }
            items.append(bytes)
        }
        guard !items.isEmpty else { throw TokenError("armor", "\(source) holds nothing starting with '\(prefix)'") }
        return items
    }
}
