import KeyhostCrypto
import Testing
@testable import KeyhostBitcoin

/// Mutated and truncated PSBTs end in a PSBT or a thrown error, never a trap; whatever parses round-trips,
/// and inspect, sign and finalize on it also end without trapping.
@Suite("PSBT hostile input")
struct HostileInputTests {
    @Test("mutated vectors: accepted ones serialize back to the same bytes")
    func mutations() throws {
        var rng = SplitMix(seed: 174)
        let samples = (Vectors.cases("bip174.json") + Vectors.cases("bip370.json") + Vectors.cases("bip371.json"))
            .filter { $0.kind != "invalid" }.map { hex($0.hex) }
        let roles = try Vectors.roles()
        let source = try HDKeySource(master: HDNode(extendedKey: roles.master_tprv))
        var accepted = 0
        for sample in samples {
            for _ in 0..<300 {
                var bytes = sample
                switch rng.next() % 4 {
                case 0: bytes[Int(rng.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: rng.next())
                case 1: bytes.removeLast(Int(rng.next() % UInt64(bytes.count)))
                case 2: bytes.insert(UInt8(truncatingIfNeeded: rng.next()), at: Int(rng.next() % UInt64(bytes.count)))
                default:
                    let at = 5 + Int(rng.next() % UInt64(bytes.count - 5))
                    bytes[at] = [0xfd, 0xfe, 0xff, 0x00][Int(rng.next() % 4)]
                }
                guard var psbt = try? PSBT.parse(bytes) else { continue }
                accepted += 1
                #expect(psbt.serialized() == bytes)
                _ = try? psbt.summary(coin: .bitcoinTestnet, signer: source)
                _ = try? psbt.sign(with: source, options: PSBTSigningOptions(allowWitnessUTXOOnly: true))
                _ = try? psbt.finalize()
                _ = try? psbt.extractTransaction()
            }
        }
        #expect(accepted > 0)
    }

    @Test("compact sizes: non-canonical forms and lengths beyond the input are errors")
    func compactSizes() {
        let magic = PSBT.magic
        for body: [UInt8] in [[0xfd, 0x01, 0x00], [0xfe, 0xff, 0xff, 0x00, 0x00], [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
                              [0x01, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]] {
            #expect(throws: PSBTError.self) { try PSBT.parse(magic + body) }
        }
    }

    @Test("size limit is checked before parsing")
    func sizeLimit() {
        #expect(throws: PSBTError.self) { try PSBT.parse(PSBT.magic + [UInt8](repeating: 0, count: 100), maxSize: 50) }
        #expect(throws: PSBTError.self) { try PSBT.parse(data: Array(String(repeating: "A", count: 400).utf8), maxSize: 50) }
    }

    @Test("base64: padding, whitespace and alphabet")
    func base64() {
        for n in 1..<20 {
            let bytes = (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            let text = Base64.encode(bytes)
            #expect(Base64.decode(Array((" " + text + "\n").utf8)) == bytes)
        }
        #expect(Base64.encode(Array("foobar".utf8)) == "Zm9vYmFy")
        #expect(Base64.encode(Array("fo".utf8)) == "Zm8=")
        #expect(Base64.decode(Array("Zm9v!mFy".utf8)) == nil)
        #expect(Base64.decode(Array("Zm8".utf8)) == nil)
    }
}
