import Foundation
import Testing
import KeyhostCrypto
@testable import KeyhostCard

/// A card's answers and a twin's state file are input: malformed, truncated, oversized or lying ones are typed errors.
@Suite struct CKTapHostileTests {
    /// A genuine status answer from the twin, to mutate.
    static func genuineStatus(_ kind: SoftCKTapState.Kind) throws -> [UInt8] {
        let (soft, _) = try makeTapCard(kind, seed: "hostile")
        return try soft.transmit(CommandAPDU(cla: 0, ins: 0xA4, p1: 4, data: CKTap.appletID)).data
    }

    static func isTyped(_ error: Error) -> Bool { error is CKTapError || error is CardChannelError }

    /// Random bytes, truncations, byte flips and wrong status words fed to every parser the client has.
    @Test func fuzzClientParsers() throws {
        let random = SeededRandom(seed: "tap fuzz")
        let genuine = [try Self.genuineStatus(.tapsigner), try Self.genuineStatus(.satscard)]
        let words: [StatusWord] = [.success, .success, .success, .insNotSupported, .wrongLength, StatusWord(0x6100)]
        var failures = 0
        for round in 0..<3000 {
            var data: [UInt8]
            switch round % 3 {
            case 0: data = random.bytes(Int(random.bytes(1)[0]))
            case 1:
                data = genuine[round % 2]
                data = Array(data.prefix(Int(random.bytes(1)[0]) % (data.count + 1)))
            default:
                data = genuine[round % 2]
                for _ in 0..<(1 + Int(random.bytes(1)[0]) % 3) { data[Int(random.bytes(1)[0]) % data.count] = random.bytes(1)[0] }
            }
            let sw = words[Int(random.bytes(1)[0]) % words.count]
            let answers = Array(repeating: ResponseAPDU(data: data, statusWord: sw), count: 4)
            let client = CKTapCommandSet(channel: ScriptedChannel(answers), random: random)
            do {
                switch round % 6 {
                case 0: _ = try client.select()
                case 1: _ = try client.getStatus()
                case 2: _ = try client.wait()
                case 3: _ = try client.dump(slot: 0)
                case 4: _ = try client.readSlot()
                default: _ = try client.certificateCheck(trustedRoots: [testRoot])
                }
            } catch {
                #expect(Self.isTyped(error), "round \(round): \(error)")
                failures += 1
            }
        }
        #expect(failures > 2500)
    }

    /// Specific lies: an oversized answer, an error without a code, a 429 body, a status of another protocol, a
    /// signature that does not verify.
    @Test func namedBadAnswers() throws {
        func answer(_ value: CKTapCBOR, _ sw: StatusWord = .success) -> ResponseAPDU { ResponseAPDU(data: CKTapCBORCoding.encode(value), statusWord: sw) }
        let status = try CKTapCBORCoding.decode(try Self.genuineStatus(.satscard))
        guard case .map(var pairs) = status else { Issue.record("status is no map"); return }

        var client = CKTapCommandSet(channel: ScriptedChannel([ResponseAPDU(data: [0x5B] + [UInt8](repeating: 0xFF, count: 8), statusWord: .success)]))
        #expect { try client.select() } throws: { ($0 as? CKTapError)?.kind == "malformed_answer" }

        client = CKTapCommandSet(channel: ScriptedChannel([answer(.textMap([("error", .text("x"))]))]))
        #expect { try client.getStatus() } throws: { ($0 as? CKTapError)?.kind == "malformed_answer" }

        client = CKTapCommandSet(channel: ScriptedChannel([answer(.textMap([("error", .text("rate limited")), ("code", .int(429))]))]))
        #expect { try client.wait() } throws: { ($0 as? CKTapError) == .rateLimited(command: "wait", delay: nil) }

        client = CKTapCommandSet(channel: ScriptedChannel([ResponseAPDU(statusWord: .insNotSupported)]))
        #expect { try client.getStatus() } throws: { ($0 as? CKTapError) == .statusWord(.insNotSupported, command: "status") }

        let proto = pairs.firstIndex { $0.key == .text("proto") }!
        pairs[proto].value = .int(2)
        client = CKTapCommandSet(channel: ScriptedChannel([answer(.map(pairs))]))
        #expect { try client.select() } throws: { "\($0)".contains("protocol version 2") }

        // A read whose signature is by another key than the one it names.
        let (soft, honest) = try makeTapCard(.satscard, seed: "liar")
        try honest.select()
        let other = try PrivateKey(bytes: Hash.sha256([9]))
        final class Liar: CardChannel {
            let inner: SoftCKTap, key: PrivateKey
            init(_ inner: SoftCKTap, _ key: PrivateKey) { self.inner = inner; self.key = key }
            func transmit(_ apdu: CommandAPDU) throws -> ResponseAPDU {
                let real = try inner.transmit(apdu)
                guard apdu.ins == 0xCB, (try? CKTapCBORCoding.decode(apdu.data))?["cmd"] == .text("read"),
                      case .map(var pairs)? = try? CKTapCBORCoding.decode(real.data) else { return real }
                if let i = pairs.firstIndex(where: { $0.key == .text("sig") }) {
                    pairs[i].value = .bytes(try key.sign(digest: Hash.sha256([1])).compact)
                }
                return ResponseAPDU(data: CKTapCBORCoding.encode(.map(pairs)), statusWord: .success)
            }
        }
        let lied = CKTapCommandSet(channel: Liar(soft, other))
        try lied.select()
        #expect { try lied.readSlot() } throws: { ($0 as? CKTapError)?.kind == "verification_failed" }
    }

    /// Hostile requests to the twin: every one answers CBOR with a code, never a trap.
    @Test func twinSurvivesHostileRequests() throws {
        let (soft, client) = try makeTapCard(.satscard, seed: "twin fuzz")
        try client.select()
        let random = SeededRandom(seed: "requests")
        let commands = ["status", "read", "derive", "certs", "check", "new", "sign", "wait", "nfc", "xpub", "backup", "change", "unseal", "dump"]
        let values: [CKTapCBOR] = [.null, .int(-1), .int(1 << 40), .bytes([]), .bytes([UInt8](repeating: 0, count: 100)), .text("x"), .array([.int(1)]), .bool(true)]
        for round in 0..<3000 {
            var pairs: [(String, CKTapCBOR)] = [("cmd", .text(commands[round % commands.count]))]
            for key in ["nonce", "slot", "path", "subpath", "digest", "epubkey", "xcvc", "data", "chain_code", "master"] where random.bytes(1)[0] < 80 {
                pairs.append((key, values[Int(random.bytes(1)[0]) % values.count]))
            }
            let data = round % 5 == 0 ? random.bytes(Int(random.bytes(1)[0])) : CKTapCBORCoding.encode(.textMap(pairs))
            let answer = try soft.transmit(CommandAPDU(cla: 0, ins: 0xCB, data: data))
            #expect(answer.statusWord == .success)
            #expect((try? CKTapCBORCoding.decode(answer.data)) != nil)
        }
    }

    /// A state file with values no card could hold is refused, naming the field.
    @Test func hostileStateFiles() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("cktap-state-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("card.json")
        _ = try makeTapCard(.tapsigner, seed: "state", store: SoftCKTapStore(url: url))
        let json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        func loadError(_ edit: (inout [String: Any]) -> Void) throws -> String? {
            var edited = json
            edit(&edited)
            try JSONSerialization.data(withJSONObject: edited).write(to: url)
            do { _ = try SoftCKTapStore(url: url).load(); return nil } catch let error as SoftCKTapError { return error.description }
        }
        #expect(try loadError { _ in } == nil)
        #expect(try loadError { $0["cvc"] = [1, 2] }?.contains("field 'cvc'") == true)
        #expect(try loadError { $0["activeSlot"] = 5 }?.contains("field 'activeSlot'") == true)
        #expect(try loadError { $0["authDelay"] = 1_000_000 }?.contains("field 'authDelay'") == true)
        #expect(try loadError { $0["certificateChain"] = [[1]] }?.contains("certificateChain[0]") == true)
        #expect(try loadError { $0["backupKey"] = nil }?.contains("backupKey") == true)
        #expect(try loadError { $0["kind"] = "opendime" } != nil)
        try Data("{".utf8).write(to: url)
        #expect(throws: SoftCKTapError.self) { try SoftCKTapStore(url: url).load() }
    }
}
