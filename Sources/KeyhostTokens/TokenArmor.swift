import KeyhostCrypto
/// Text armour for files and transport: `khtok1:` then base64url of the encoded token, one token a
/// line; blank lines and lines starting with `#` are ignored.
public enum TokenArmor {
    public static let prefix = "khtok1:"

    /// One armoured line for `token`.
    public static func armor(_ token: SignedToken) -> String { prefix + Base64.encodeURL(token.encoded) }

    /// Every token in `text`; a line that is not a token is an error naming its number.
    public static func tokens(in text: [UInt8], source: String = "input") throws -> [SignedToken] {
        let limit = (TokenLimits.maxEncodedBytes + 2) / 3 * 4 + prefix.utf8.count
        var result: [SignedToken] = []
        for (index, rawLine) in text.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated() {
            var line = rawLine[...]
            while let last = line.last, last == 0x0D || last == 0x20 || last == 0x09 { line = line.dropLast() }
            while let first = line.first, first == 0x20 || first == 0x09 { line = line.dropFirst() }
            if line.isEmpty || line.first == UInt8(ascii: "#") { continue }
            let where_ = "\(source) line \(index + 1)"
            guard line.count <= limit else { throw TokenError("limit", "\(where_): \(line.count) characters is longer than any token (limit \(limit))") }
            guard line.starts(with: prefix.utf8) else {
                throw TokenError("armor", "\(where_): not a keyhost token (tokens start with '\(prefix)')")
            }
            guard let bytes = Base64.decodeURL(line.dropFirst(prefix.utf8.count)) else {
                throw TokenError("armor", "\(where_): the text after '\(prefix)' is not base64url (letters, digits, '-' and '_', no padding)")
            }
            do {
                result.append(try SignedToken(encoded: bytes))
            } catch let error as TokenError {
                throw TokenError(error.kind, "\(where_): \(error.message)")
            }
        }
        guard !result.isEmpty else { throw TokenError("armor", "\(source) holds no token (tokens start with '\(prefix)')") }
        return result
    }
}
