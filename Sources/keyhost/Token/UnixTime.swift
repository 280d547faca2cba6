#if canImport(Glibc)
import Glibc
#endif

/// Unix seconds to and from the ISO 8601 forms the token commands accept and print (UTC only).
enum UnixTime {
    static func iso8601(_ seconds: Int64) -> String {
        var time = time_t(seconds)
        var parts = tm()
        guard gmtime_r(&time, &parts) != nil else { return String(seconds) }
        var buffer = [CChar](repeating: 0, count: 32)
        let n = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%SZ", &parts)
        return n > 0 ? String(cString: buffer) : String(seconds)
    }

    /// `1700000000`, `2027-01-31` or `2027-01-31T12:00:00Z`; nil for anything else.
    static func parse(_ text: String) -> Int64? {
        if let seconds = Int64(text) { return seconds }
        let pattern: [Character] = Array(text)
        func number(_ range: Range<Int>) -> Int32? {
            guard range.upperBound <= pattern.count else { return nil }
            return Int32(String(pattern[range]))
        }
        guard pattern.count == 10 || (pattern.count == 20 && pattern[10] == "T" && pattern[19] == "Z" && pattern[13] == ":" && pattern[16] == ":"),
              pattern[4] == "-", pattern[7] == "-",
              let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              (1...12).contains(month), (1...31).contains(day)
        else { return nil }
        var parts = tm()
        parts.tm_year = year - 1900
        parts.tm_mon = month - 1
        parts.tm_mday = day
        if pattern.count == 20 {
            guard let h = number(11..<13), let m = number(14..<16), let s = number(17..<19), h < 24, m < 60, s < 61 else { return nil }
            parts.tm_hour = h
            parts.tm_min = m
            parts.tm_sec = s
        }
        let seconds = timegm(&parts)
        // timegm normalises 2027-02-31 to March: refuse dates that did not survive the round trip.
        guard iso8601(Int64(seconds)).hasPrefix(String(text.prefix(10))) else { return nil }
        return Int64(seconds)
    }
}
