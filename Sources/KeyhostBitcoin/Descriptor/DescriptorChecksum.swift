/// The BIP380 descriptor checksum: 8 characters of a BCH code over the descriptor's characters.
public enum DescriptorChecksum {
    /// The characters a descriptor may contain, in the order that gives each its symbol (three groups of 32).
    static let inputCharset: [UInt8] = Array("0123456789()[],'/*abcdefgh@:$%{}IJKLMNOPQRSTUVWXYZ&+-.;<=>?!^_|~ijklmnopqrstuvwxyzABCDEFGH`#\"\\ ".utf8)
    /// The checksum's own alphabet (Bech32's).
    static let checksumCharset: [UInt8] = Array("qpzry9x8gf2tvdw0s3jn54khce6mua7l".utf8)

    private static let symbolOf: [Int8] = {
        var table = [Int8](repeating: -1, count: 128)
        for (i, c) in inputCharset.enumerated() { table[Int(c)] = Int8(i) }
        return table
    }()

    /// Whether `byte` may appear in a descriptor.
    static func isAllowed(_ byte: UInt8) -> Bool { byte < 128 && symbolOf[Int(byte)] >= 0 }

    /// The checksum of `body` (a descriptor without `#…`); throws at the first character outside BIP380's set.
    public static func compute(_ body: String) throws -> String {
        try compute(Array(body.utf8), offset: 0)
    }

    /// The checksum of `body`, positions in errors counted from `offset`.
    static func compute(_ body: [UInt8], offset: Int) throws -> String {
        var chk: UInt64 = 1
        var groups = [Int]()
        groups.reserveCapacity(3)
        for (i, c) in body.enumerated() {
            guard isAllowed(c) else {
                throw DescriptorError(.invalid, "character \(DescriptorText.show(body, at: i)) is not allowed in a descriptor (BIP380's character set)",
                                      at: offset + characterOffset(body, i))
            }
            let v = Int(symbolOf[Int(c)])
            chk = polymod(chk, UInt64(v & 31))
            groups.append(v >> 5)
            if groups.count == 3 {
                chk = polymod(chk, UInt64(groups[0] * 9 + groups[1] * 3 + groups[2]))
                groups.removeAll(keepingCapacity: true)
            }
        }
        if groups.count == 1 { chk = polymod(chk, UInt64(groups[0])) }
        if groups.count == 2 { chk = polymod(chk, UInt64(groups[0] * 3 + groups[1])) }
        for _ in 0..<8 { chk = polymod(chk, 0) }
        chk ^= 1
        let letters = (0..<8).map { checksumCharset[Int((chk >> (5 * (7 - UInt64($0)))) & 31)] }
        return String(decoding: letters, as: UTF8.self)
    }

    /// Splits `text` into its body and checksum, verifying the checksum when there is one.
    public static func split(_ text: String) throws -> (body: String, checksum: String?) {
        let bytes = Array(text.utf8)
        let (body, checksum) = try split(bytes)
        return (String(decoding: body, as: UTF8.self), checksum)
    }

    static func split(_ bytes: [UInt8]) throws -> (body: [UInt8], checksum: String?) {
        guard let hash = bytes.firstIndex(of: UInt8(ascii: "#")) else { return (bytes, nil) }
        let body = Array(bytes[..<hash])
        let given = Array(bytes[(hash + 1)...])
        let at = characterOffset(bytes, hash)
        guard !given.isEmpty else {
            throw DescriptorError(.checksum, "\"#\" is followed by no checksum; give its 8 characters or leave out the \"#\"", at: at)
        }
        if let second = given.firstIndex(of: UInt8(ascii: "#")) {
            throw DescriptorError(.checksum, "a second \"#\": a descriptor has one checksum", at: at + 1 + characterOffset(given, second))
        }
        guard given.count == 8 else {
            throw DescriptorError(.checksum, "the checksum has \(given.count) characters; a descriptor checksum has exactly 8", at: at + 1)
        }
        if let bad = given.firstIndex(where: { !checksumCharset.contains($0) }) {
            throw DescriptorError(.checksum, "character \(DescriptorText.show(given, at: bad)) is not in the checksum alphabet "
                + "(qpzry9x8gf2tvdw0s3jn54khce6mua7l)", at: at + 1 + bad)
        }
        let expected = try compute(body, offset: 0)
        let text = String(decoding: given, as: UTF8.self)
        guard text == expected else {
            throw DescriptorError(.checksum, "checksum \(text) does not match the descriptor (its checksum is \(expected)); "
                + "the descriptor or the checksum was mistyped or changed", at: at + 1)
        }
        return (body, text)
    }

    /// One step of BIP380's polymod over GF(32).
    @inline(__always)
    private static func polymod(_ pre: UInt64, _ value: UInt64) -> UInt64 {
        let top = pre >> 35
        var chk = (pre & 0x7_ffff_ffff) << 5 ^ value
        if top & 1 != 0 { chk ^= 0xf5_dee5_1989 }
        if top & 2 != 0 { chk ^= 0xa9_fdca_3312 }
        if top & 4 != 0 { chk ^= 0x1b_ab10_e32d }
        if top & 8 != 0 { chk ^= 0x37_06b1_677a }
        if top & 16 != 0 { chk ^= 0x64_4d62_6ffd }
        return chk
    }

    /// The character (not byte) offset of byte `i`: UTF-8 continuation bytes do not count.
    static func characterOffset(_ bytes: [UInt8], _ i: Int) -> Int {
        bytes[..<i].reduce(0) { $0 + ($1 & 0xC0 == 0x80 ? 0 : 1) }
    }
}
