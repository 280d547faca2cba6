import KeyhostCrypto

/// Where a key comes from: the master key's fingerprint and the derivation path (BIP174's key origin).
public struct KeyOrigin: Hashable, Sendable, CustomStringConvertible {
    public var fingerprint: UInt32
    public var path: DerivationPath

    public init(fingerprint: UInt32, path: DerivationPath) {
        self.fingerprint = fingerprint
        self.path = path
    }

    /// Reads 4 bytes of fingerprint (as they appear in the key identifier) and little-endian 32-bit indexes.
    init(bytes: [UInt8]) throws {
        guard bytes.count >= 4, bytes.count % 4 == 0 else { throw PSBTError.invalid("a key origin is a 4-byte fingerprint and 4-byte indexes, got \(bytes.count) bytes") }
        fingerprint = UInt32(bytes[0]) << 24 | UInt32(bytes[1]) << 16 | UInt32(bytes[2]) << 8 | UInt32(bytes[3])
        var indexes = [UInt32]()
        var i = 4
        while i < bytes.count {
            indexes.append(LE.uint32(Array(bytes[i..<i + 4])) ?? 0)
            i += 4
        }
        do { path = try DerivationPath(indexes: indexes) } catch { throw PSBTError.invalid("bad key origin path: \(error)") }
    }

    public var bytes: [UInt8] {
        var out: [UInt8] = [UInt8(fingerprint >> 24), UInt8(truncatingIfNeeded: fingerprint >> 16), UInt8(truncatingIfNeeded: fingerprint >> 8), UInt8(truncatingIfNeeded: fingerprint)]
        for index in path.indexes { out.appendUInt32(index) }
        return out
    }

    /// The fingerprint as 8 hex digits, as descriptors write it.
    public var fingerprintHex: String { KeyOrigin.hex(fingerprint) }

    public static func hex(_ fingerprint: UInt32) -> String {
        KeyhostCrypto.fingerprintHex(fingerprint)
    }

    /// `[fingerprint/84'/0'/0']`, hardened steps marked with `marker` ("'", or "h" as descriptors print them):
    /// the one way keyhost writes a key origin.
    public func text(hardened marker: String = "'") -> String {
        "[" + fingerprintHex + path.indexes.map { "/" + DerivationPath.format($0, hardened: marker) }.joined() + "]"
    }

    public var description: String { text() }
}

/// A BIP371 taproot key origin: the leaf hashes the key is used in (none for the key path) and the origin.
public struct TapKeyOrigin: Hashable, Sendable {
    public var leafHashes: [[UInt8]]
    public var origin: KeyOrigin

    public var bytes: [UInt8] {
        var out = [UInt8]()
        out.appendCompactSize(leafHashes.count)
        for hash in leafHashes { out.append(contentsOf: hash) }
        out.append(contentsOf: origin.bytes)
        return out
    }
}
