import KeyhostCrypto

/// Constants of Coinkite's tap protocol (TAPSIGNER, SATSCARD), as the maker's client `cktap` has them.
public enum CKTap {
    /// The applet's AID: "\xf0CoinkiteCARDv1".
    public static let appletID: [UInt8] = [0xF0] + Array("CoinkiteCARDv1".utf8)
    /// What the cards answer to reset through a contactless reader; `cktap.transport.find_cards` matches it exactly.
    public static let atr: [UInt8] = [0x3B, 0x88, 0x80, 0x01] + Array("Coinkite".utf8) + [0x31]
    /// The protocol's one APDU: CLA 00, INS CB, CBOR in the data field.
    public static let cla: UInt8 = 0x00
    public static let ins: UInt8 = 0xCB
    /// The only protocol version this client speaks (`proto` in status).
    public static let protocolVersion = 1
    public static let cardNonceSize = 16
    public static let userNonceSize = 16
    /// CVC length limits (bytes).
    public static let cvcLengths = 6...32
    /// Deepest path `derive` accepts on a TAPSIGNER.
    public static let maxDerivePathDepth = 8
    /// Most non-hardened components `sign` accepts after the derived path.
    public static let maxSubpathDepth = 2
    /// Characters of a SATSCARD address kept at each end in `status`'s blanked form.
    public static let addressTrim = 12
    /// The first bytes of every message a card signs to prove a key.
    public static let signedPrefix: [UInt8] = Array("OPENDIME".utf8)
    /// Coinkite's published factory root key; `cktap.constants.FACTORY_ROOT_KEYS` also lists an obsolete testing root.
    public static let factoryRootKey: [UInt8] = hexBytes("03028a0e89e70d0ec0d932053a89ab1da7d9182bdc6d2f03e706ee99517d05d9e1")
    /// Seconds of delay a card imposes after the third wrong CVC, and again after each wrong one while limited.
    public static let authDelaySeconds = 15
    /// Wrong CVCs answered 401 before the delay starts.
    public static let freeAuthAttempts = 3
    /// A TAPSIGNER's path after `new`: m/84h/0h/0h.
    public static let defaultTapsignerPath: [UInt32] = [0x8000_0054, 0x8000_0000, 0x8000_0000]
    public static let hardened: UInt32 = 0x8000_0000

    static func hexBytes(_ text: String) -> [UInt8] {
        var out: [UInt8] = []
        var chars = Array(text.utf8)[...]
        while chars.count >= 2 {
            func nibble(_ c: UInt8) -> UInt8 { c <= 0x39 ? c - 0x30 : (c | 0x20) - 0x57 }
            out.append(nibble(chars[chars.startIndex]) << 4 | nibble(chars[chars.startIndex + 1]))
            chars = chars.dropFirst(2)
        }
        return out
    }

    /// A nonce the cards accept: not all one byte (they answer 417 "weak nonce" to those).
    public static func isStrongNonce(_ nonce: [UInt8]) -> Bool { Set(nonce).count >= 2 }

    /// The address `status` shows: 12 characters, three underscores, 12 characters.
    public static func blanked(_ address: String) -> String {
        let chars = Array(address)
        guard chars.count > 2 * addressTrim else { return address }
        return String(chars.prefix(addressTrim)) + "___" + String(chars.suffix(addressTrim))
    }

    /// The card's human identifier (cktap's `card_pubkey_to_ident`): base32 of SHA-256(pubkey) after byte 8,
    /// first 20 characters in groups of five.
    public static func cardIdent(_ cardPublicKey: [UInt8]) -> String {
        let digest = Array(Hash.sha256(cardPublicKey).dropFirst(8))
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        var bits = 0, value = 0
        var chars: [Character] = []
        for byte in digest {
            value = (value << 8) | Int(byte)
            bits += 8
            while bits >= 5 {
                chars.append(alphabet[(value >> (bits - 5)) & 31])
                bits -= 5
            }
        }
        let first = Array(chars.prefix(20))
        return stride(from: 0, to: 20, by: 5).map { String(first[$0..<$0 + 5]) }.joined(separator: "-")
    }
}
