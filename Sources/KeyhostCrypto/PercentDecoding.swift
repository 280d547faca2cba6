/// `text` with %XX escapes decoded, nil if an escape is malformed or the result is not UTF-8
/// (as Foundation's removingPercentEncoding): URL hosts and PostgreSQL URL passwords.
public func removingPercentEncoding(_ text: some StringProtocol) -> String? {
    var bytes = [UInt8]()
    var input = Array(text.utf8)[...]
    while let byte = input.popFirst() {
        guard byte == UInt8(ascii: "%") else { bytes.append(byte); continue }
        guard input.count >= 2, let high = Hex.nibble(input.removeFirst()), let low = Hex.nibble(input.removeFirst()) else { return nil }
        bytes.append(high << 4 | low)
    }
    return String(validating: bytes, as: UTF8.self)
}
