import Foundation
import KeyhostTestSupport
import Testing

/// `keyhost card status --reader virtual --card-state F` on state files nobody wrote with keyhost:
/// each run ends with exit status 0 or 1, never a signal (a trap), whatever the file holds.
@Suite struct HostileStateFileTests {
    /// A 3.2 card, initialised and holding the test mnemonic's key; its state file as JSON.
    static func initialisedState() throws -> (bench: CardCommandTests.Bench, json: [String: Any]) {
        let bench = try CardCommandTests.Bench()
        _ = try bench.json(["init", "--applet", "3.2"])
        _ = try bench.json(["load-seed"], ["KEYHOST_MNEMONIC": CardCommandTests.words])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: bench.state))) as? [String: Any])
        return (bench, json)
    }

    /// One value a hostile file might hold where `current` was.
    static func hostileValue(_ random: inout SplitMix64, replacing current: Any) -> Any {
        let numbers: [Any] = [-1, 0, 1, 2, 255, 256, 65535, 65536, Int(Int32.max), Int(Int32.max) + 1, Int64.max, Int64.min, 4_294_967_296]
        switch random.below(5) {
        case 0, 1: return random.pick(numbers)
        case 2: return Array(repeating: random.pick([0, 255, 65536, -1]), count: random.pick([0, 1, 15, 17, 31, 33, 127, 128, 256, 100_000]))
        case 3: return random.pick(["", "12345", "1234567", "ÿÿÿÿÿÿ", String(repeating: "9", count: 100_000)] as [Any])
        default:
            // Keep the type and break the content: a neighbouring length or number.
            if let array = current as? [Any] { return array + array }
            if let number = current as? Int { return number &* 256 &+ 255 }
            return NSNull()
        }
    }

    /// Every path to a value (objects by key, arrays by index).
    static func paths(_ value: Any, _ prefix: [Any] = []) -> [[Any]] {
        var out: [[Any]] = [prefix]
        if let object = value as? [String: Any] {
            for key in object.keys.sorted() { out += paths(object[key]!, prefix + [key]) }
        } else if let array = value as? [Any], array.count <= 40 {
            for (i, item) in array.enumerated() { out += paths(item, prefix + [i]) }
        }
        return out
    }

    static func value(at path: [Any], in root: Any) -> Any {
        path.reduce(root) { node, step in
            if let key = step as? String { return (node as? [String: Any])?[key] ?? NSNull() }
            return (node as? [Any]).map { $0[step as! Int] } ?? NSNull()
        }
    }

    static func replacing(_ path: ArraySlice<Any>, in root: Any, with new: Any?) -> Any {
        guard let step = path.first else { return new ?? NSNull() }
        if var object = root as? [String: Any], let key = step as? String {
            if path.count == 1 && new == nil { object[key] = nil } else {
                object[key] = replacing(path.dropFirst(), in: object[key] ?? NSNull(), with: new)
            }
            return object
        }
        if var array = root as? [Any], let index = step as? Int {
            array[index] = replacing(path.dropFirst(), in: array[index], with: new)
            return array
        }
        return root
    }

    @Test func threeHundredMutatedStateFilesNeverCrash() throws {
        let (bench, original) = try Self.initialisedState()
        let all = Self.paths(original).filter { !$0.isEmpty }
        var random = SplitMix64(seed: 0x6B65_7968_6F73_74)  // "keyhost"
        var refused = 0
        for round in 0..<300 {
            var mutated: Any = original
            for _ in 0..<(1 + random.below(3)) {
                let path = random.pick(all)
                let dropping = random.below(12) == 0
                mutated = Self.replacing(path[...], in: mutated,
                                         with: dropping ? nil : Self.hostileValue(&random, replacing: Self.value(at: path, in: mutated)))
            }
            let data = try JSONSerialization.data(withJSONObject: mutated)
            try data.write(to: URL(fileURLWithPath: bench.state))
            let run = try bench.card(["status"])
            #expect(!run.signaled && (run.status == 0 || run.status == 1),
                    "round \(round): \(run.signaled ? "signal" : "status") \(run.status): \(run.stderr.prefix(300))\n\(String(decoding: data.prefix(2000), as: UTF8.self))")
            if run.status == 1 { refused += 1 }
            if run.signaled { break }
        }
        // The mutations are hostile enough to be refused most of the time (the test would otherwise prove little).
        #expect(refused > 150, "\(refused) of 300 refused")
    }

    @Test func theFuzzersFindsAreRefusedNamingFileAndField() throws {
        let (bench, original) = try Self.initialisedState()
        let cases: [(field: String, path: [Any], value: Any)] = [
            ("credentials.pinLimit", ["credentials", "pinLimit"], 65536),
            ("credentials.pukTries", ["credentials", "pukTries"], 65536),
            ("credentials.pukTries", ["credentials", "pukTries"], -1),
            ("keyUID", ["keyUID"], Array(repeating: 7, count: 100_000)),
            ("certificate", ["certificate"], Array(repeating: 7, count: 100_000)),
        ]
        for (field, path, value) in cases {
            let data = try JSONSerialization.data(withJSONObject: Self.replacing(path[...], in: original, with: value))
            try data.write(to: URL(fileURLWithPath: bench.state))
            let run = try bench.card(["status"])
            #expect(!run.signaled && run.status == 1, "\(field): \(run.status) \(run.stderr.prefix(300))")
            #expect(run.stderr.hasPrefix("keyhost: soft keycard state \(bench.state) is unreadable: field '\(field)' "), "\(run.stderr.prefix(300))")
            // Refused, not rewritten: the file is left as it was for the user to look at.
            #expect(try Data(contentsOf: URL(fileURLWithPath: bench.state)) == data)
        }
    }
}
