/// Ethereum addresses with the EIP-55 mixed-case checksum.
public enum EthereumAddress {
    /// The EIP-55 address of `key`: last 20 bytes of Keccak-256 of the 64-byte uncompressed point.
    public static func address(of key: PublicKey) -> String {
        checksummed(addressBytes(of: key))
    }

    /// The 20 address bytes of `key`.
    public static func addressBytes(of key: PublicKey) -> [UInt8] {
        let point = key.uncompressed
        return point.withUnsafeBytes { raw in
            Array(Keccak256.hash(UnsafeRawBufferPointer(rebasing: raw[1..<65]))[12..<32])
        }
    }

    /// EIP-55 text ("0x" + 40 hex digits, letters upper-cased where the hash nibble is 8 or more).
    public static func checksummed(_ bytes: [UInt8]) -> String {
        let lower = Array(Hex.encode(bytes).utf8)
        let hash = Keccak256.hash(lower)
        var out = Array("0x".utf8)
        for (i, c) in lower.enumerated() {
            let nibble = (hash[i / 2] >> (i % 2 == 0 ? 4 : 0)) & 0x0f
            out.append(c >= UInt8(ascii: "a") && nibble >= 8 ? c - 0x20 : c)
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Parses an address: "0x" + 40 hex digits. A mixed-case address must carry a correct EIP-55 checksum;
    /// all-lower or all-upper addresses carry none and are accepted unless `requireChecksum` is set.
    public static func decode(_ text: String, requireChecksum: Bool = false) throws -> [UInt8] {
        do { try InputLimit.check(text, InputLimit.address, what: "an Ethereum address") } catch let error as EncodingError {
            throw AddressError.encoding(error)
        }
        let scalars = Array(text.unicodeScalars)
        guard scalars.count >= 2, scalars[0] == "0", scalars[1] == "x" || scalars[1] == "X" else {
            throw AddressError.unrecognized("an Ethereum address starts with 0x")
        }
        let digits = scalars.dropFirst(2)
        for (i, s) in zip(2..., digits) where !(s.isASCII && Hex.nibble(UInt8(s.value)) != nil) {
            throw AddressError.encoding(.badCharacter(position: i, character: EncodingError.show(s), alphabet: "hexadecimal"))
        }
        guard digits.count == 40 else {
            throw AddressError.badLength(found: digits.count / 2, expected: "20 bytes (40 hex digits after 0x)")
        }
        let body = String(String.UnicodeScalarView(digits))
        let bytes = try Hex.decode(body)
        let hasLower = digits.contains { ("a"..."f").contains($0) }
        let hasUpper = digits.contains { ("A"..."F").contains($0) }
        if hasLower && hasUpper || requireChecksum {
            guard "0x" + body == checksummed(bytes) else {
                throw AddressError.encoding(.badChecksum("the EIP-55 mixed-case checksum does not match"))
            }
        }
        return bytes
    }
}
