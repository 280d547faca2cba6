import Foundation
import Testing
import KeyhostCrypto
@testable import KeyhostDiscovery
@testable import KeyhostHTTP

/// The helpers that replaced Foundation proper in discovery (which keyhost no longer links), against Foundation itself.
@Suite("Discovery without Foundation")
struct FoundationReplacementTests {
    static let posix: DateFormatter = {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        return formatter
    }()

    @Test("HTTP dates in all three forms read as DateFormatter read them, over 2 000 random instants")
    func httpDates() {
        let now = Int64(Date().timeIntervalSince1970)
        for _ in 0..<2_000 {
            // Two-digit years only name 1976...2075 unambiguously around now; the other forms take any year.
            let instant = Int64.random(in: 0...4_000_000_000)
            let date = Date(timeIntervalSince1970: Double(instant))
            for format in ["EEE, dd MMM yyyy HH:mm:ss 'GMT'", "EEEE, dd-MMM-yy HH:mm:ss 'GMT'", "EEE MMM d HH:mm:ss yyyy"] {
                Self.posix.dateFormat = format
                var text = Self.posix.string(from: date)
                if format.hasPrefix("EEE MMM d "), let space = text.range(of: " ", options: [], range: text.index(text.startIndex, offsetBy: 8)..<text.endIndex),
                   text[text.index(text.startIndex, offsetBy: 8)..<space.lowerBound].count == 1 {
                    text.insert(" ", at: text.index(text.startIndex, offsetBy: 8))  // asctime pads the day with a space
                }
                if format.contains("-yy "), abs(instant - now) > 45 * 365 * 86_400 { continue }
                #expect(HTTPDate.parse(text, now: now) == instant, "\(text)")
            }
        }
    }

    @Test("Malformed or impossible HTTP dates are nil, not a guess")
    func badHTTPDates() {
        for text in ["", "soon", "Sun, 06 Nov 1994 08:49:37 PST", "Sun, 31 Feb 1994 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT",
                     "Sun, 6 Nov 1994 08:49:37 GMT", "Funday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49 1994", "Sun, 06 Foo 1994 08:49:37 GMT"] {
            #expect(HTTPDate.parse(text) == nil, "\(text)")
        }
        #expect(HTTPDate.parse("Sun, 29 Feb 2004 00:00:00 GMT") == 1_078_012_800)
    }

    @Test("An address path segment is percent-encoded as Foundation's urlPathAllowed without '/' encodes it")
    func pathSegments() {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "/")
        var samples = ["bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu", "a/b?c#d e", "é€😀", "%41", "!$&'()*+,;=:@-._~"]
        for value in 0...0x7F { samples.append("x" + String(UnicodeScalar(UInt8(value))) + "y") }
        for text in samples {
            #expect(percentEncodedPathSegment(text) == text.addingPercentEncoding(withAllowedCharacters: allowed), "\(text)")
        }
    }

    @Test("Percent escapes decode as Foundation's removingPercentEncoding decodes them")
    func percentDecoding() {
        for text in ["plain", "%5B%3A%3A1%5D", "a%20b", "%", "%4", "%zz", "%C3%A9", "%C3", "%ff", "100%25", "%e2%82%ac"] {
            #expect(removingPercentEncoding(text) == text.removingPercentEncoding, "\(text)")
        }
    }

    @Test("The index file's format comes from the same extension URL.pathExtension gives")
    func fileExtensions() {
        for path in ["used.json", "used.JSON", "dir/used.csv", "dir.d/used", "used.", ".json", "a.tar.txt", "/x/y.json/", "used", "./used.txt"] {
            #expect(IndexFileUsageSource.fileExtension(path) == URL(fileURLWithPath: path).pathExtension, "\(path)")
        }
    }

    @Test("An index file that is not JSON says where and why")
    func badJSONIndex() {
        #expect {
            try IndexFileUsageSource(contents: "[\"bc1q\", ", format: .json, origin: "used.json")
        } throws: { error in
            "\(error)".contains("used.json") && "\(error)".contains("is not valid JSON") && "\(error)".contains("at byte 9")
        }
    }
}
