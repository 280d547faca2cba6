import KeyhostCrypto

/// EXPORT KEY answer: `A1 { [80 public key] [81 private key] [82 chain code] }`.
public struct ExportedKey: Equatable, Sendable {
    public let publicKey: PublicKey?
    public let privateKey: PrivateKey?
    public let chainCode: [UInt8]?

    public init(publicKey: PublicKey?, privateKey: PrivateKey?, chainCode: [UInt8]?) {
        self.publicKey = publicKey; self.privateKey = privateKey; self.chainCode = chainCode
    }

    public init(response: [UInt8]) throws {
        do {
            guard let template = try TLV.parseAll(response).first(tag: 0xA1) else { throw TLVError.missingTag(0xA1, in: "EXPORT KEY answer") }
            let fields = try template.children()
            publicKey = try fields.first(tag: 0x80).map { try PublicKey(bytes: $0.value) }
            var priv = fields.first(tag: 0x81)?.value
            defer { if priv != nil { wipe(&priv!) } }
            privateKey = try priv.map { try PrivateKey(bytes: $0) }
            chainCode = fields.first(tag: 0x82)?.value
            if let chainCode, chainCode.count != 32 { throw TLVError.badValueLength(tag: 0x82, length: chainCode.count, expected: "32") }
        } catch {
            throw KeycardError.invalidResponse(.exportKey, "\(error)")
        }
    }

    /// The public key, derived from the private key when the card sent only that (3.2 does).
    public var resolvedPublicKey: PublicKey? { publicKey ?? privateKey?.publicKey }
}

/// Turns GENERATE MNEMONIC word indexes into a BIP39 mnemonic (the checksum is verified).
public enum KeycardMnemonic {
    public static func mnemonic(fromIndexes indexes: [Int]) throws -> Mnemonic {
        guard Mnemonic.validWordCounts.contains(indexes.count), indexes.allSatisfy({ (0..<2048).contains($0) }) else {
            throw KeycardError.invalidResponse(.generateMnemonic, "\(indexes.count) word indexes; expected 12-24 values below 2048")
        }
        let entropyBits = indexes.count * 11 * 32 / 33
        var bits: [UInt8] = []
        for index in indexes { for shift in stride(from: 10, through: 0, by: -1) { bits.append(UInt8((index >> shift) & 1)) } }
        var entropy = [UInt8](repeating: 0, count: entropyBits / 8)
        defer { wipe(&entropy) }
        for i in 0..<entropyBits where bits[i] == 1 { entropy[i / 8] |= UInt8(0x80) >> UInt8(i % 8) }
        let mnemonic = try Mnemonic(entropy: entropy)
        // The words recomputed from the entropy carry our checksum; they must equal the card's.
        var expected: [Int] = []
        for word in mnemonic.words { if let i = Mnemonic.index(of: word) { expected.append(i) } }
        guard expected == indexes else { throw KeycardError.invalidResponse(.generateMnemonic, "word indexes fail the BIP39 checksum") }
        return mnemonic
    }
}
