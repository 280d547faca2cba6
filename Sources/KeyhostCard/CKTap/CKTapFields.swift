import KeyhostCrypto

/// Typed reads of one answer's fields; anything missing, mistyped or mis-sized is `CKTapError.malformedAnswer`.
struct CKTapFields {
    let map: CKTapCBOR
    let command: String

    init(_ value: CKTapCBOR, command: String) throws {
        guard case .map = value else { throw CKTapError.malformedAnswer(command: command, reason: "the answer is not a CBOR map") }
        self.map = value
        self.command = command
    }

    func fail(_ reason: String) -> CKTapError { .malformedAnswer(command: command, reason: reason) }

    func has(_ key: String) -> Bool { map[key] != nil }

    func bytes(_ key: String, count: Int? = nil, max: Int = 256) throws -> [UInt8] {
        guard let value = map[key] else { throw fail("field '\(key)' is missing") }
        guard let b = value.byteString else { throw fail("field '\(key)' is not a byte string") }
        if let count, b.count != count { throw fail("field '\(key)' has \(b.count) bytes; expected \(count)") }
        guard b.count <= max else { throw fail("field '\(key)' has \(b.count) bytes; at most \(max) expected") }
        return b
    }

    func optionalBytes(_ key: String, count: Int? = nil) throws -> [UInt8]? { has(key) ? try bytes(key, count: count) : nil }

    func int(_ key: String, range: ClosedRange<Int>) throws -> Int {
        guard let value = map[key] else { throw fail("field '\(key)' is missing") }
        guard let n = value.int, range.contains(n) else { throw fail("field '\(key)' is not an integer in \(range.lowerBound)...\(range.upperBound)") }
        return n
    }

    func optionalInt(_ key: String, range: ClosedRange<Int>) throws -> Int? { has(key) ? try int(key, range: range) : nil }

    func text(_ key: String, max: Int = 128) throws -> String {
        guard let t = map[key]?.textString else { throw fail("field '\(key)' is missing or not text") }
        guard t.utf8.count <= max else { throw fail("field '\(key)' is longer than \(max) bytes") }
        return t
    }

    func optionalText(_ key: String, max: Int = 128) throws -> String? { has(key) ? try text(key, max: max) : nil }

    /// A boolean flag; absent means false, as the cards omit false flags.
    func flag(_ key: String) throws -> Bool {
        guard let value = map[key] else { return false }
        guard let b = value.boolValue else { throw fail("field '\(key)' is not a boolean") }
        return b
    }

    func optionalFlag(_ key: String) throws -> Bool? { has(key) ? try flag(key) : nil }

    func publicKey(_ key: String) throws -> PublicKey {
        let raw = try bytes(key, count: 33)
        guard let pub = try? PublicKey(bytes: raw) else { throw fail("field '\(key)' is not a compressed secp256k1 public key") }
        return pub
    }

    func signature(_ key: String) throws -> ECDSASignature {
        guard let sig = try? ECDSASignature(compact: try bytes(key, count: 64)) else { throw fail("field '\(key)' is not a 64-byte signature") }
        return sig
    }

    func path(_ key: String) throws -> [UInt32] {
        guard let items = map[key]?.arrayValue else { throw fail("field '\(key)' is missing or not an array") }
        guard items.count <= 32 else { throw fail("field '\(key)' has \(items.count) components") }
        return try items.map {
            guard case .unsigned(let n) = $0, n <= UInt64(UInt32.max) else { throw fail("field '\(key)' holds a value that is no path component") }
            return UInt32(n)
        }
    }
}
