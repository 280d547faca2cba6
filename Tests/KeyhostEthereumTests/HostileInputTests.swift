import KeyhostCrypto
import Testing
@testable import KeyhostEthereum

/// Random and mutated input must end in a value or a thrown error, never a trap; whatever decodes is canonical.
@Suite("Hostile input")
struct HostileInputTests {
    static func signedSamples() throws -> [[UInt8]] {
        let key = try PrivateKey(bytes: [UInt8](repeating: 0x33, count: 32))
        let to: [UInt8] = [UInt8](repeating: 0x35, count: 20)
        let entry = EthereumTransaction.AccessListEntry(address: to, storageKeys: [[UInt8](repeating: 1, count: 32)])
        let samples = [
            try EthereumTransaction(kind: .legacy, chainID: UInt256(1), nonce: UInt256(9), gasPrice: UInt256(20_000_000_000), gas: UInt256(21000),
                                    to: to, value: UInt256(UInt64.max), data: [1, 2, 3]),
            try EthereumTransaction(kind: .legacy, chainID: nil, nonce: .zero, gasPrice: UInt256(1), gas: UInt256(21000), to: nil, data: [0x60]),
            try EthereumTransaction(kind: .accessList, chainID: UInt256(5), nonce: UInt256(1), gasPrice: UInt256(7), gas: UInt256(90000), to: to,
                                    accessList: [entry]),
            try EthereumTransaction(kind: .dynamicFee, chainID: UInt256(137), nonce: UInt256(3), maxPriorityFeePerGas: UInt256(2), maxFeePerGas: UInt256(3),
                                    gas: UInt256(50000), to: to, value: .max, data: [UInt8](repeating: 0xab, count: 80), accessList: [entry, entry]),
        ]
        return try samples.map { try $0.signed(with: key).serialized() }
    }

    @Test("mutated raw transactions: every accepted one re-serializes to the same bytes")
    func mutatedTransactions() throws {
        var rng = SplitMix(seed: 2718)
        var accepted = 0
        for sample in try Self.signedSamples() {
            #expect(try EthereumTransaction.decode(raw: sample).serialized() == sample)
            for _ in 0..<3000 {
                var bytes = sample
                switch rng.next() % 4 {
                case 0: bytes[Int(rng.next() % UInt64(bytes.count))] ^= UInt8(truncatingIfNeeded: rng.next() | 1)
                case 1: bytes.removeLast(Int(rng.next() % UInt64(bytes.count)))
                case 2: bytes.insert(UInt8(truncatingIfNeeded: rng.next()), at: Int(rng.next() % UInt64(bytes.count + 1)))
                default: bytes[Int(rng.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: rng.next())
                }
                guard let tx = try? EthereumTransaction.decode(raw: bytes) else { continue }
                accepted += 1
                #expect(try tx.serialized() == bytes, "accepted a non-canonical encoding: \(hex0x(bytes))")
                _ = try? tx.sender()
                _ = try? tx.fields()
            }
        }
        #expect(accepted > 0, "some mutations (e.g. of r, s, data bytes) are still valid transactions")
    }

    @Test("random bytes into RLP and the transaction decoder")
    func randomBytes() {
        var rng = SplitMix(seed: 31337)
        for _ in 0..<20_000 {
            let length = Int(rng.next() % 80)
            let bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            if let item = try? RLP.decode(bytes) { #expect(RLP.encode(item) == bytes) }
            _ = try? EthereumTransaction.decode(raw: bytes)
        }
    }

    @Test("mutated typed-data documents and JSON text")
    func mutatedTypedData() {
        var rng = SplitMix(seed: 712)
        let mail = Array(TypedDataTests.mail.utf8)
        let alphabet = Array(#"{}[]":,0123456789-eE.truefalsnl\ abcxyzABC"#.utf8)
        for _ in 0..<5000 {
            var bytes = mail
            for _ in 0..<(1 + rng.next() % 3) {
                let i = Int(rng.next() % UInt64(bytes.count))
                switch rng.next() % 3 {
                case 0: bytes[i] = alphabet[Int(rng.next() % UInt64(alphabet.count))]
                case 1: bytes.remove(at: i)
                default: bytes.insert(alphabet[Int(rng.next() % UInt64(alphabet.count))], at: i)
                }
            }
            guard let data = try? TypedData(json: bytes) else { continue }
            _ = try? data.digest()
        }
    }

    @Test("typed data: huge numbers and strings are refused or hashed, never trapped")
    func numericEdges() throws {
        for value in ["1" + String(repeating: "0", count: 200), "-" + String(repeating: "9", count: 80), "0x" + String(repeating: "f", count: 65),
                      "\"-0\"", "\"0x\"", "\"\"", "1e999", "-0", "\"-57896044618658097711785492504343953926634992332820282019728792003956564819968\"",
                      "\"57896044618658097711785492504343953926634992332820282019728792003956564819968\""] {
            let json = #"{"types":{"A":[{"name":"x","type":"int256"}]},"primaryType":"A","domain":{},"message":{"x":\#(value)}}"#
            _ = try? TypedData(json: Array(json.utf8)).digest()
        }
        // -2^255 fits int256, 2^255 does not.
        let min = #"{"types":{"A":[{"name":"x","type":"int256"}]},"primaryType":"A","domain":{},"message":{"x":"-57896044618658097711785492504343953926634992332820282019728792003956564819968"}}"#
        #expect(try TypedData(json: Array(min.utf8)).digest().count == 32)
        let over = #"{"types":{"A":[{"name":"x","type":"int256"}]},"primaryType":"A","domain":{},"message":{"x":"57896044618658097711785492504343953926634992332820282019728792003956564819968"}}"#
        #expect(throws: TypedDataError.self) { try TypedData(json: Array(over.utf8)).digest() }
    }
}
