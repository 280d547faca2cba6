/// One key-value pair of a PSBT map, kept as read: the key's raw bytes (type and key data) and the value.
/// Unknown and proprietary pairs survive a parse/serialize round trip byte for byte this way.
public struct PSBTField: Equatable, Sendable {
    /// The whole key: compact-size type followed by key data.
    public let key: [UInt8]
    public var value: [UInt8]
    /// The key type (the compact size at the start of the key).
    public let type: UInt64
    /// Where the key data starts in `key`.
    let keyDataStart: Int

    public var keyData: [UInt8] { Array(key[keyDataStart...]) }

    /// A pair read from a PSBT; `key` must be non-empty and start with a valid compact size.
    init(key: [UInt8], value: [UInt8]) throws {
        var reader = ByteReader(key, what: "key", kind: .invalidPSBT)
        type = try reader.compactSize(limit: UInt64.max)
        keyDataStart = reader.offset
        self.key = key
        self.value = value
    }

    /// A pair this program makes (always minimal encoding).
    public init(type: UInt64, keyData: [UInt8] = [], value: [UInt8]) {
        var key = [UInt8]()
        key.appendCompactSize(type)
        keyDataStart = key.count
        key.append(contentsOf: keyData)
        self.key = key
        self.type = type
        self.value = value
    }
}

/// A PSBT map (global, one input or one output): pairs in the order read or added.
public struct PSBTMap: Equatable, Sendable {
    public var fields: [PSBTField]

    public init(fields: [PSBTField] = []) { self.fields = fields }

    /// The value of the pair with this type and key data.
    public func value(_ type: UInt64, keyData: [UInt8] = []) -> [UInt8]? {
        fields.first { $0.type == type && $0.keyData == keyData }?.value
    }

    public func fields(ofType type: UInt64) -> [PSBTField] { fields.filter { $0.type == type } }

    public func contains(_ type: UInt64) -> Bool { fields.contains { $0.type == type } }

    /// Sets a pair: replaces the value in place if the key exists (keeping its position), else inserts it
    /// before the first key that sorts after it, so a map in canonical order (as Bitcoin Core writes
    /// them) stays in it, and one in another order keeps the order it has.
    public mutating func set(_ type: UInt64, keyData: [UInt8] = [], value: [UInt8]) {
        if let i = fields.firstIndex(where: { $0.type == type && $0.keyData == keyData }) {
            fields[i].value = value
        } else {
            insert(PSBTField(type: type, keyData: keyData, value: value))
        }
    }

    mutating func insert(_ field: PSBTField) {
        let at = fields.firstIndex { $0.key.lexicographicallyPrecedes(field.key) == false && $0.key != field.key } ?? fields.count
        fields.insert(field, at: at)
    }

    public mutating func remove(_ type: UInt64) { fields.removeAll { $0.type == type } }

    func serialize(into out: inout [UInt8]) {
        for field in fields {
            out.appendVarBytes(field.key)
            out.appendVarBytes(field.value)
        }
        out.append(0x00)
    }
}

/// Key types from BIP174, BIP370 and BIP371.
public enum PSBTGlobalType {
    public static let unsignedTx: UInt64 = 0x00
    public static let xpub: UInt64 = 0x01
    public static let txVersion: UInt64 = 0x02
    public static let fallbackLocktime: UInt64 = 0x03
    public static let inputCount: UInt64 = 0x04
    public static let outputCount: UInt64 = 0x05
    public static let txModifiable: UInt64 = 0x06
    public static let version: UInt64 = 0xfb
    public static let proprietary: UInt64 = 0xfc
}

public enum PSBTInputType {
    public static let nonWitnessUTXO: UInt64 = 0x00
    public static let witnessUTXO: UInt64 = 0x01
    public static let partialSig: UInt64 = 0x02
    public static let sighashType: UInt64 = 0x03
    public static let redeemScript: UInt64 = 0x04
    public static let witnessScript: UInt64 = 0x05
    public static let bip32Derivation: UInt64 = 0x06
    public static let finalScriptSig: UInt64 = 0x07
    public static let finalScriptWitness: UInt64 = 0x08
    public static let porCommitment: UInt64 = 0x09
    public static let ripemd160: UInt64 = 0x0a
    public static let sha256: UInt64 = 0x0b
    public static let hash160: UInt64 = 0x0c
    public static let hash256: UInt64 = 0x0d
    public static let previousTxid: UInt64 = 0x0e
    public static let outputIndex: UInt64 = 0x0f
    public static let sequence: UInt64 = 0x10
    public static let requiredTimeLocktime: UInt64 = 0x11
    public static let requiredHeightLocktime: UInt64 = 0x12
    public static let tapKeySig: UInt64 = 0x13
    public static let tapScriptSig: UInt64 = 0x14
    public static let tapLeafScript: UInt64 = 0x15
    public static let tapBIP32Derivation: UInt64 = 0x16
    public static let tapInternalKey: UInt64 = 0x17
    public static let tapMerkleRoot: UInt64 = 0x18
    public static let proprietary: UInt64 = 0xfc
}

public enum PSBTOutputType {
    public static let redeemScript: UInt64 = 0x00
    public static let witnessScript: UInt64 = 0x01
    public static let bip32Derivation: UInt64 = 0x02
    public static let amount: UInt64 = 0x03
    public static let script: UInt64 = 0x04
    public static let tapInternalKey: UInt64 = 0x05
    public static let tapTree: UInt64 = 0x06
    public static let tapBIP32Derivation: UInt64 = 0x07
    public static let proprietary: UInt64 = 0xfc
}
