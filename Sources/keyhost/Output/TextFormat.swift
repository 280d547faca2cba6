#if canImport(Glibc)
import Glibc
#endif

extension String {
    /// The text followed by spaces up to `width` characters (never cut), for columns.
    func padding(_ width: Int) -> String { count >= width ? self : self + String(repeating: " ", count: width - count) }
}

/// printf's number formatting, which String(format:) used (Foundation proper, with ICU, is not linked).
enum CFormat {
    /// `value` with `digits` decimals, rounded as printf's `%.Nf` rounds ("12", "0.5", "inf").
    static func fixed(_ value: Double, digits: Int) -> String {
        let format = "%.\(max(0, min(digits, 30)))f"
        // Room for any Double: at most 309 integer digits, a sign, a point and 30 decimals.
        var buffer = [CChar](repeating: 0, count: 400)
        let length = withVaList([value]) { vsnprintf(&buffer, buffer.count, format, $0) }
        guard length > 0 else { return String(value) }
        return String(decoding: buffer.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
