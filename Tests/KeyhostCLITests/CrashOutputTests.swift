import Foundation
import Testing

/// A crash prints no memory: the Swift runtime's crash report shows each register with the 16 bytes it
/// points at, which held the PIN when a hostile card state trapped. keyhost narrows SWIFT_BACKTRACE before
/// the runtime reads it, or takes the runtime's handlers away when there is none.
@Suite struct CrashOutputTests {
    static let pin = "739182"

    /// Whether `text` holds sixteen bytes in hex in a row, as a register's memory is dumped. (No Regex: its
    /// parser keeps allocations LeakSanitizer reports when this suite runs under AddressSanitizer.)
    static func holdsMemoryDump(_ text: String) -> Bool {
        for line in text.split(separator: "\n") {
            var run = 0
            for word in line.split(separator: " ", omittingEmptySubsequences: false) {
                let isByte = word.count == 2 && word.allSatisfy { $0.isHexDigit && !$0.isUppercase }
                run = isByte ? run + 1 : 0
                if run == 16 { return true }
            }
        }
        return false
    }

    @Test func theMemoryDumpCheckFindsADump() {
        #expect(Self.holdsMemoryDump("rdi 0x00007ffc 37 33 39 31 38 32 00 00 00 00 00 00 00 00 00 00  739182"))
        #expect(!Self.holdsMemoryDump("37 33 39 31 38 32 00 00 00 00 00 00 00 00 00"))
    }

    @Test(arguments: [nil, "enable=yes", "enable=yes,registers=all,images=all,preset=full,interactive=yes"])
    func aTrapWithThePINInMemoryPrintsNeitherItNorMemory(_ backtrace: String?) throws {
        var bench = try CardCommandTests.Bench()
        bench.env["KEYHOST_PIN"] = Self.pin
        _ = try bench.json(["init", "--applet", "3.2"])
        var extra: [String: String?] = ["KEYHOST_FAILPOINT": "verify_pin"]
        if let backtrace { extra["SWIFT_BACKTRACE"] = backtrace }
        let run = try bench.card(["verify-pin"], extra)
        // The failpoint traps (SIGILL or SIGTRAP); the run must have got there.
        #expect(run.signaled && (run.status == SIGILL || run.status == SIGTRAP), "\(run.status): \(run.stderr)")
        let hexPIN = Self.pin.utf8.map { String(format: "%02x", $0) }.joined(separator: " ")
        #expect(!run.stderr.contains(Self.pin) && !run.stdout.contains(Self.pin), "\(run.stderr)")
        #expect(!run.stderr.contains(hexPIN), "\(run.stderr)")
        #expect(!run.stderr.contains("Registers") && !run.stderr.contains("Images"), "\(run.stderr)")
        #expect(!Self.holdsMemoryDump(run.stderr), "\(run.stderr)")
        if backtrace != nil {
            // Asked for, the backtrace is still there: its frames, without what they held.
            #expect(run.stderr.contains("Program crashed"), "\(run.stderr)")
        } else {
            #expect(run.stderr.contains("keyhost: crashed with signal \(run.status) (no memory contents are printed"), "\(run.stderr)")
        }
    }
}
