/// Bech32 (BIP173) and Bech32m (BIP350) encoding.
public enum Bech32 {
    /// Which checksum constant a string uses.
    public enum Variant: String, Sendable {
        case bech32
        case bech32m

        var constant: UInt32 { self == .bech32 ? 1 : 0x2bc8_30a3 }
    }

    static let charset: [UInt8] = Array("qpzry9x8gf2tvdw0s3jn54khce6mua7l".utf8)
    private static let reverse: [Int8] = {
        var table = [Int8](repeating: -1, count: 128)
        for (i, c) in charset.enumerated() {
            table[Int(c)] = Int8(i)
            table[Int(c) & ~0x20] = Int8(i)  // upper-case form; case consistency is checked separately
        }
        return table
    }()

    /// Longest string BIP173 allows.
    public static let maxLength = 90

    /// Encodes `hrp` and 5-bit `data` values with the checksum of `variant`.
    public static func encode(hrp: String, data: [UInt8], variant: Variant) -> String {
        let hrpBytes = Array(hrp.lowercased().utf8)
        let checksum = createChecksum(hrp: hrpBytes, data: data, variant: variant)
        var out = hrpBytes
        out.reserveCapacity(hrpBytes.count + 1 + data.count + 6)
        out.append(UInt8(ascii: "1"))
        for v in data { out.append(charset[Int(v & 31)]) }
        for v in checksum { out.append(charset[Int(v)]) }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes a Bech32 or Bech32m string into its lower-case HRP, 5-bit data (checksum removed) and variant.
    public static func decode(_ text: String, maxLength: Int = Bech32.maxLength) throws -> (hrp: String, data: [UInt8], variant: Variant) {
        try InputLimit.check(text, 4 * maxLength, what: "a Bech32 string")  // before any per-character work
        let scalars = Array(text.unicodeScalars)
        guard scalars.count <= maxLength else {
            throw EncodingError.badLength("\(scalars.count) characters; Bech32 strings have at most \(maxLength)")
        }
        var hasLower = false, hasUpper = false
        for (i, s) in scalars.enumerated() {
            guard (33...126).contains(s.value) else {
                throw EncodingError.badCharacter(position: i, character: EncodingError.show(s), alphabet: "Bech32 (printable ASCII)")
            }
            if ("a"..."z").contains(s) { hasLower = true }
            if ("A"..."Z").contains(s) { hasUpper = true }
        }
        guard !(hasLower && hasUpper) else { throw EncodingError.mixedCase }
        let lower = scalars.map { s -> UInt8 in UInt8(s.value) | (("A"..."Z").contains(s) ? 0x20 : 0) }
        guard let separator = lower.lastIndex(of: UInt8(ascii: "1")), separator > 0 else { throw EncodingError.missingSeparator }
        guard lower.count - separator - 1 >= 6 else {
            throw EncodingError.badLength("the checksum needs 6 characters after the \"1\" separator, found \(lower.count - separator - 1)")
        }
        let hrp = Array(lower[0..<separator])
        var values = [UInt8]()
        values.reserveCapacity(lower.count - separator - 1)
        for i in (separator + 1)..<lower.count {
            let v = reverse[Int(lower[i])]
            guard v >= 0 else {
                throw EncodingError.badCharacter(position: i, character: EncodingError.show(scalars[i]), alphabet: "Bech32")
            }
            values.append(UInt8(v))
        }
        let residue = polymod(hrp: hrp, values: values)
        let variant: Variant
        switch residue {
        case Variant.bech32.constant: variant = .bech32
        case Variant.bech32m.constant: variant = .bech32m
        default: throw EncodingError.badChecksum("the Bech32/Bech32m checksum does not match")
        }
        return (String(decoding: hrp, as: UTF8.self), Array(values.dropLast(6)), variant)
    }

    /// Regroups bits, e.g. 8-bit bytes to 5-bit values (`pad` true) or back (`pad` false, rejecting bad padding).
    public static func convertBits(_ data: [UInt8], from: Int, to: Int, pad: Bool) throws -> [UInt8] {
        var acc = 0, bits = 0
        let maxValue = (1 << to) - 1
        var out = [UInt8]()
        out.reserveCapacity(data.count * from / to + 1)
        for value in data {
            guard Int(value) >> from == 0 else { throw EncodingError.badPadding }
            acc = (acc << from) | Int(value)
            bits += from
            while bits >= to {
                bits -= to
                out.append(UInt8((acc >> bits) & maxValue))
            }
            acc &= (1 << bits) - 1  // keep only the pending bits so acc never grows
        }
        if pad {
            if bits > 0 { out.append(UInt8((acc << (to - bits)) & maxValue)) }
        } else if bits >= from || ((acc << (to - bits)) & maxValue) != 0 {
            throw EncodingError.badPadding
        }
        return out
    }

    private static func polymod(hrp: [UInt8], values: [UInt8]) -> UInt32 {
        var chk: UInt32 = 1
        for c in hrp { chk = step(chk) ^ UInt32(c >> 5) }
        chk = step(chk)
        for c in hrp { chk = step(chk) ^ UInt32(c & 31) }
        for v in values { chk = step(chk) ^ UInt32(v) }
        return chk
    }

    @inline(__always)
    private static func step(_ pre: UInt32) -> UInt32 {
        let b = pre >> 25
        var chk = (pre & 0x1ff_ffff) << 5
        if b & 1 != 0 { chk ^= 0x3b6a_57b2 }
        if b & 2 != 0 { chk ^= 0x2650_8e6d }
        if b & 4 != 0 { chk ^= 0x1ea1_19fa }
        if b & 8 != 0 { chk ^= 0x3d42_33dd }
        if b & 16 != 0 { chk ^= 0x2a14_62b3 }
        return chk
    }

    private static func createChecksum(hrp: [UInt8], data: [UInt8], variant: Variant) -> [UInt8] {
        let mod = polymod(hrp: hrp, values: data + [0, 0, 0, 0, 0, 0]) ^ variant.constant
        return (0..<6).map { UInt8((mod >> (5 * (5 - UInt32($0)))) & 31) }
    }
}

/// Segregated-witness output programs as Bech32/Bech32m addresses (BIP173, BIP350).
public enum SegwitAddress {
    /// The address for witness `version` (0...16) and `program` under human-readable part `hrp`.
    public static func encode(hrp: String, version: Int, program: [UInt8]) throws -> String {
        try validate(version: version, program: program)
        // Cannot throw: 8-to-5 with padding accepts any bytes.
        let data = [UInt8(version)] + ((try? Bech32.convertBits(program, from: 8, to: 5, pad: true)) ?? [])
        return Bech32.encode(hrp: hrp, data: data, variant: version == 0 ? .bech32 : .bech32m)
    }

    /// Decodes `address`, requiring human-readable part `hrp`, into witness version and program.
    public static func decode(_ address: String, hrp: String) throws -> (version: Int, program: [UInt8]) {
        let decoded: (hrp: String, data: [UInt8], variant: Bech32.Variant)
        do {
            decoded = try Bech32.decode(address)
        } catch let error as EncodingError {
            throw AddressError.encoding(error)
        }
        guard decoded.hrp == hrp.lowercased() else {
            throw AddressError.wrongNetwork(expected: "human-readable part \"\(hrp.lowercased())\"", found: "\"\(decoded.hrp)\"")
        }
        guard let version = decoded.data.first else {
            throw AddressError.badProgram("the data part is empty; a segwit address needs a witness version")
        }
        guard version <= 16 else { throw AddressError.badProgram("witness version \(version) is above 16") }
        let expected: Bech32.Variant = version == 0 ? .bech32 : .bech32m
        guard decoded.variant == expected else {
            throw AddressError.encoding(.badChecksum("witness version \(version) requires a \(expected.rawValue) checksum, found \(decoded.variant.rawValue)"))
        }
        let program: [UInt8]
        do {
            program = try Bech32.convertBits(Array(decoded.data.dropFirst()), from: 5, to: 8, pad: false)
        } catch let error as EncodingError {
            throw AddressError.encoding(error)
        }
        try validate(version: Int(version), program: program)
        return (Int(version), program)
    }

    /// The scriptPubKey for a witness program: OP_n followed by a push of the program.
    public static func scriptPubKey(version: Int, program: [UInt8]) -> [UInt8] {
        [UInt8(version == 0 ? 0 : 0x50 + version), UInt8(program.count)] + program
    }

    private static func validate(version: Int, program: [UInt8]) throws {
        guard (0...16).contains(version) else { throw AddressError.badProgram("witness version \(version) is not 0...16") }
        guard (2...40).contains(program.count) else {
            throw AddressError.badProgram("witness program of \(program.count) bytes; BIP141 allows 2 to 40")
        }
        if version == 0 && program.count != 20 && program.count != 32 {
            throw AddressError.badProgram("version 0 witness program of \(program.count) bytes; it must be 20 (P2WPKH) or 32 (P2WSH)")
        }
    }
}
