/// Ethereum personal_sign messages (EIP-191 version 0x45).
public enum EthereumMessage {
    /// Keccak-256 of "\x19Ethereum Signed Message:\n" + decimal length + message.
    public static func hash(_ message: [UInt8]) -> [UInt8] {
        Keccak256.hash(Array("\u{19}Ethereum Signed Message:\n\(message.count)".utf8) + message)
    }

    /// Signs like personal_sign / eth_sign: 65 bytes r || s || v with v 27 or 28.
    public static func sign(_ message: [UInt8], with key: PrivateKey) throws -> RecoverableSignature {
        try key.signRecoverable(digest: hash(message))
    }

    /// The public key that signed `message` (signature as 65 bytes r || s || v).
    public static func recoverPublicKey(_ message: [UInt8], signature: [UInt8]) throws -> PublicKey {
        try RecoverableSignature(rsv: signature).recoverPublicKey(digest: hash(message))
    }

    /// The EIP-55 address that signed `message`; compare it with the expected signer.
    public static func recoverAddress(_ message: [UInt8], signature: [UInt8]) throws -> String {
        EthereumAddress.address(of: try recoverPublicKey(message, signature: signature))
    }
}

/// Bitcoin signed messages in the legacy format that Bitcoin Core's verifymessage and Electrum accept.
public enum BitcoinMessage {
    /// Double SHA-256 of varint(24) "Bitcoin Signed Message:\n" varint(len) message.
    public static func hash(_ message: [UInt8]) -> [UInt8] {
        let magic = Array("Bitcoin Signed Message:\n".utf8)
        return Hash.sha256d(varint(magic.count) + magic + varint(message.count) + message)
    }

    /// Signs `message` and returns base64 of 65 bytes header || r || s.
    ///
    /// Header: 31+recid for P2PKH with a compressed key, 27+recid with an uncompressed one (what Core writes); for segwit kinds, with
    /// `bip137Headers`, 35+recid (P2SH-P2WPKH) or 39+recid (P2WPKH) as Trezor writes and Electrum accepts.
    public static func sign(_ message: [UInt8], with key: PrivateKey, kind: AddressKind = .p2pkh,
                            bip137Headers: Bool = true) throws -> String {
        if !key.isCompressed && kind != .p2pkh && kind != .ethereum { throw AddressError.uncompressedKey(kind) }
        return try encode(key.signRecoverable(digest: hash(message)), kind: kind, compressed: key.isCompressed, bip137Headers: bip137Headers)
    }

    /// Base64 of header || r || s for a signature over `hash(message)` made elsewhere (a Keycard signs the digest
    /// and returns the recoverable signature); `compressed` says which form of the signer's key the address hashes.
    public static func encode(_ signature: RecoverableSignature, kind: AddressKind = .p2pkh, compressed: Bool = true,
                              bip137Headers: Bool = true) throws -> String {
        if !compressed && kind != .p2pkh && kind != .ethereum { throw AddressError.uncompressedKey(kind) }
        // 27+recid marks an uncompressed key, whose P2PKH address hashes all 65 bytes.
        var header = compressed ? 31 : 27
        if bip137Headers {
            switch kind {
            case .p2shP2wpkh: header = 35
            case .p2wpkh: header = 39
            case .p2pkh: break
            case .p2tr, .ethereum: throw AddressError.unsupportedKind(kind, coin: "Bitcoin signed messages (legacy format)")
            }
        }
        return Base64.encode([UInt8(header + signature.recoveryID)] + signature.r + signature.s)
    }

    /// The public key and whether the signature marks it compressed.
    public static func recover(_ message: [UInt8], signature: String) throws -> (key: PublicKey, compressed: Bool) {
        try InputLimit.check(signature, InputLimit.base64Signature, what: "a Base64 message signature")
        guard let bytes = Base64.decode(Array(signature.utf8)), bytes.count == 65 else { throw SignatureError.base64 }
        let header = Int(bytes[0])
        guard (27...42).contains(header) else { throw SignatureError.recoveryID(header) }
        let recid = (header - 27) % 4
        let key = try RecoverableSignature(compact: Array(bytes[1...]), recoveryID: recid).recoverPublicKey(digest: hash(message))
        return (key, header >= 31)
    }

    /// Whether `signature` (base64) signs `message` for `address` (P2PKH, P2SH-P2WPKH or P2WPKH on `coin`).
    /// Like Electrum, the address type decides how the recovered key is turned into an address.
    public static func verify(_ message: [UInt8], signature: String, address: String, coin: Coin = .bitcoin) throws -> Bool {
        let decoded = try Address.decode(address, coin: coin)
        let (key, compressed) = try recover(message, signature: signature)
        switch decoded.type {
        case .p2pkh:
            return Hash.hash160(compressed ? key.compressed : key.uncompressed) == decoded.payload
        case .p2sh:
            return compressed && Hash.hash160(Address.p2wpkhScript(key.hash160)) == decoded.payload
        case .p2wpkh:
            return compressed && key.hash160 == decoded.payload
        default:
            return false
        }
    }

    static func varint(_ n: Int) -> [UInt8] {
        switch n {
        case ..<0xfd: return [UInt8(n)]
        case ...0xffff: return [0xfd, UInt8(n & 0xff), UInt8(n >> 8)]
        case ...0xffff_ffff: return [0xfe] + withUnsafeBytes(of: UInt32(n).littleEndian) { Array($0) }
        default: return [0xff] + withUnsafeBytes(of: UInt64(n).littleEndian) { Array($0) }
        }
    }
}
