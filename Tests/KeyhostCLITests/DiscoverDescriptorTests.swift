import Foundation
import Testing

/// `keyhost discover --descriptor` through the binary (the engine side is in KeyhostDiscoveryTests).
@Suite struct DiscoverDescriptorTests {
    @Test("discover --descriptor: a multipath descriptor, or receive and change, scanned as one wallet; errors are usage errors")
    func discover() throws {
        let dir = try Keyhost.scratch(["used.txt": "bc1qp59yckz4ae5c4efgw2s5wfyvrz0ala7rgvuz8z\n"])
        defer { try? FileManager.default.removeItem(at: dir) }
        let index = dir.appendingPathComponent("used.txt").path
        let multipath = try Keyhost.run(["discover", "--descriptor", DescriptorCommandTests.multipath, "--source", "index:\(index)", "--gap-limit", "3", "--json"])
        #expect(multipath.status == 0, "\(multipath.stderr)")
        let result = try #require(try DescriptorCommandTests.json(multipath.stdout) as? [String: Any])
        let account = try #require((result["accounts"] as? [[String: Any]])?.first)
        let used = try #require(account["used"] as? [[String: Any]])
        #expect(used.map { $0["address"] as? String } == ["bc1qp59yckz4ae5c4efgw2s5wfyvrz0ala7rgvuz8z"])
        #expect(used.first?["path"] as? String == "m/84'/0'/0'/0/2")
        #expect((account["descriptors"] as? [String: String]) == ["receive": DescriptorCommandTests.receive, "change": DescriptorCommandTests.change])
        #expect(result["scheme"] as? String == "descriptor" && result["kind"] as? String == "wpkh")
        let two = try Keyhost.run(["discover", "--descriptor", DescriptorCommandTests.receive, "--descriptor", DescriptorCommandTests.change, "--source", "index:\(index)", "--gap-limit", "3", "--json"])
        #expect(two.stdout == multipath.stdout, "\(two.stderr)")
        // The table shows the descriptors of the account.
        let table = try Keyhost.run(["discover", "--descriptor", DescriptorCommandTests.multipath, "--source", "index:\(index)", "--gap-limit", "3"])
        #expect(table.stdout.contains("descriptors:\n    \(DescriptorCommandTests.receive)\n    \(DescriptorCommandTests.change)"), "\(table.stdout)")
        for bad in [["--descriptor", DescriptorCommandTests.multipath, "--purpose", "84"], ["--descriptor", "wpkh(\(DescriptorCommandTests.account)/0H/*)"],
                    ["--descriptor", DescriptorCommandTests.multipath, "--xpub", "xpub6CatWdiZiodmUeTDp8LT5or8nmbKNcuyvz7WyksVFkKB4RHwCD3XyuvPEbvqAQY3rAPshWcMLoP2fMFMKHPJ4ZeZXYVUhLv1VMrjPC7PW6V"],
                    ["--descriptor", DescriptorCommandTests.multipath, "--coin", "ltc"], ["--descriptor", "-"]] {
            let run = try Keyhost.run(["discover"] + bad + ["--source", "index:\(index)"])
            #expect(run.status == 64, "\(bad): \(run.stderr)")
        }
    }
}
