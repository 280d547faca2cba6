/// Bitcoin Cash CashAddr encoding (prefix:payload with a 40-bit BCH checksum).
public enum CashAddr {
    /// Encodes a 20-byte hash as a CashAddr; `type` 0 is P2PKH, 1 is P2SH.
    public static func encode(prefix: String, type: UInt8, hash: [UInt8]) -> String {
        // Version byte: type in bits 3-6, size code 0 (160 bits) in bits 0-2.
        let payload = (try? Bech32.convertBits([type << 3] + hash, from: 8, to: 5, pad: true)) ?? []
        let checksum = polymod(expand(prefix) + payload + [UInt8](repeating: 0, count: 8))
        var out = prefix + ":"
        for v in payload { out.unicodeScalars.append(Unicode.Scalar(Bech32.charset[Int(v)])) }
        for i in 0..<8 {
            out.unicodeScalars.append(Unicode.Scalar(Bech32.charset[Int((checksum >> (5 * (7 - UInt64(i)))) & 31)]))
        }
        return out
    }

    /// Decodes a CashAddr (with or without its prefix) into type (0 P2PKH, 1 P2SH) and 20-byte hash.
    public static func decode(_ text: String, prefix: String) throws -> (type: UInt8, hash: [UInt8]) {
        do { try InputLimit.check(text, InputLimit.address, what: "a CashAddr address") } catch let error as EncodingError {
            throw AddressError.encoding(error)
        }
        var body = Substring(text)
        let lowerCount = text.unicodeScalars.filter { ("a"..."z").contains($0) }.count
        let upperCount = text.unicodeScalars.filter { ("A"..."Z").contains($0) }.count
        guard lowerCount == 0 || upperCount == 0 else { throw AddressError.encoding(.mixedCase) }
        var offset = 0
        if let colon = text.firstIndex(of: ":") {
            let found = text[..<colon].lowercased()
            guard found == prefix else { throw AddressError.wrongNetwork(expected: "prefix \"\(prefix)\"", found: "\"\(found)\"") }
            body = text[text.index(after: colon)...]
            offset = found.count + 1
        }
        var values = [UInt8]()
        for (i, scalar) in body.lowercased().unicodeScalars.enumerated() {
            guard scalar.isASCII, let v = Bech32.charset.firstIndex(of: UInt8(scalar.value)) else {
                throw AddressError.encoding(.badCharacter(position: i + offset, character: EncodingError.show(scalar), alphabet: "CashAddr"))
            }
            values.append(UInt8(v))
        }
        guard values.count == 42 else {
            throw AddressError.badLength(found: values.count, expected: "42 characters after the prefix for a 160-bit hash")
        }
        guard polymod(expand(prefix) + values) == 0 else {
            throw AddressError.encoding(.badChecksum("the CashAddr checksum does not match"))
        }
        let bytes: [UInt8]
        do {
            bytes = try Bech32.convertBits(Array(values.dropLast(8)), from: 5, to: 8, pad: false)
        } catch let error as EncodingError {
            throw AddressError.encoding(error)
        }
        guard bytes.count == 21, bytes[0] & 0x07 == 0 else {
            throw AddressError.badLength(found: max(bytes.count - 1, 0), expected: "a 20-byte hash (size code 0)")
        }
        return (bytes[0] >> 3, Array(bytes[1...]))
    }

    private static func expand(_ prefix: String) -> [UInt8] {
        prefix.utf8.map { $0 & 31 } + [0]
    }

    private static func polymod(_ values: [UInt8]) -> UInt64 {
        var c: UInt64 = 1
        for d in values {
            let c0 = c >> 35
            c = ((c & 0x07_ffff_ffff) << 5) ^ UInt64(d)
            if c0 & 0x01 != 0 { c ^= 0x98_f2bc_8e61 }
            if c0 & 0x02 != 0 { c ^= 0x79_b76d_99e2 }
            if c0 & 0x04 != 0 { c ^= 0xf3_3e5f_b3c4 }
            if c0 & 0x08 != 0 { c ^= 0xae_2eab_e2a8 }
            if c0 & 0x10 != 0 { c ^= 0x1e_4f43_e470 }
        }
        return c ^ 1
    }
}
