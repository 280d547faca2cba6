#if canImport(Glibc)
import Glibc
#endif

/// HTTP dates (RFC 9110 §5.6.7) as Unix seconds, for Retry-After; Foundation's DateFormatter would bring ICU.
public enum HTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    private static let days = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
    private static let longDays = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]

    /// IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), then the obsolete RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`)
    /// and asctime (`Sun Nov  6 08:49:37 1994`) forms; nil for anything else.
    public static func parse(_ text: String, now: Int64 = Int64(time(nil))) -> Int64? {
        let words = text.split(separator: " ").map { $0.lowercased() }
        if words.count == 6, words[0].hasSuffix(","), days.contains(String(words[0].dropLast())), words[5] == "gmt",
           let day = number(words[1], digits: 2...2), let month = months.firstIndex(of: words[2]),
           let year = number(words[3], digits: 4...4) {
            return seconds(year: year, month: month + 1, day: day, clock: words[4])
        }
        if words.count == 4, words[0].hasSuffix(","), longDays.contains(String(words[0].dropLast())), words[3] == "gmt" {
            let date = words[1].split(separator: "-", omittingEmptySubsequences: false).map(String.init)
            guard date.count == 3, let day = number(date[0], digits: 2...2), let month = months.firstIndex(of: date[1]),
                  let shortYear = number(date[2], digits: 2...2) else { return nil }
            // A two-digit year more than 50 years ahead is the latest past year ending in those digits (RFC 9110).
            let thisYear = Int(civilYear(now))
            var year = thisYear - thisYear % 100 + shortYear
            if year > thisYear + 50 { year -= 100 }
            return seconds(year: year, month: month + 1, day: day, clock: words[2])
        }
        if words.count == 5, days.contains(words[0]), let month = months.firstIndex(of: words[1]),
           let day = number(words[2], digits: 1...2), let year = number(words[4], digits: 4...4) {
            return seconds(year: year, month: month + 1, day: day, clock: words[3])
        }
        return nil
    }

    private static func number(_ text: String, digits: ClosedRange<Int>) -> Int? {
        guard digits.contains(text.utf8.count), text.utf8.allSatisfy({ (48...57).contains($0) }) else { return nil }
        return Int(text)
    }

    private static func seconds(year: Int, month: Int, day: Int, clock: String) -> Int64? {
        let parts = clock.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, let hour = number(parts[0], digits: 2...2), let minute = number(parts[1], digits: 2...2),
              let second = number(parts[2], digits: 2...2), hour < 24, minute < 60, second <= 60,
              (1...daysIn(month: month, year: year)).contains(day) else { return nil }
        return daysFromCivil(year: Int64(year), month: Int64(month), day: Int64(day)) * 86_400
            + Int64(hour * 3600 + minute * 60 + second)
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
    private static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The Gregorian (UTC) year of Unix time `seconds`.
    private static func civilYear(_ seconds: Int64) -> Int64 {
        var year = 1970 + seconds / 31_556_952
        while daysFromCivil(year: year, month: 1, day: 1) * 86_400 > seconds { year -= 1 }
        while daysFromCivil(year: year + 1, month: 1, day: 1) * 86_400 <= seconds { year += 1 }
        return year
    }
}
