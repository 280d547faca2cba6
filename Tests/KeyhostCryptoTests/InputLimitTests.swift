import Foundation
import Testing
@testable import KeyhostCrypto

extension KeyhostCryptoTests {
    /// Every text parser checks a size limit before parsing (Base58 decoding is quadratic: 100 KB once took 36 s).
    @Suite("Input size limits")
    struct InputLimitTests {
        static let big = String(repeating: "2", count: 100 * 1024)

        /// Runs `body`, which must throw at once with a message naming a limit.
        func expectFastLimit(_ name: String, _ body: () throws -> Void) {
            let start = Date()
            do {
                try body()
                Issue.record("\(name) accepted 100 KB")
            } catch {
                #expect(String(describing: error).contains("limit"), "\(name): \(error)")
            }
            // Refusing takes microseconds and parsing 100 KB took 36 s: a bound between the two that
            // no load on the machine reaches.
            #expect(Date().timeIntervalSince(start) < 10, "\(name) was slow")
        }

        @Test("100 KB fails at once in every parser, with an error naming the limit")
        func hundredKilobytes() {
            expectFastLimit("Base58") { _ = try Base58.decode(Self.big) }
            expectFastLimit("Base58Check") { _ = try Base58.decodeCheck(Self.big) }
            expectFastLimit("WIF") { _ = try PrivateKey.fromWIF(Self.big) }
            expectFastLimit("extended key") { _ = try HDNode.parse(Self.big) }
            expectFastLimit("Bech32") { _ = try Bech32.decode("bc1" + Self.big) }
            expectFastLimit("segwit") { _ = try SegwitAddress.decode("bc1" + Self.big, hrp: "bc") }
            expectFastLimit("CashAddr") { _ = try CashAddr.decode(Self.big, prefix: "bitcoincash") }
            expectFastLimit("Ethereum") { _ = try EthereumAddress.decode("0x" + Self.big) }
            expectFastLimit("address") { _ = try Address.decode(Self.big, coin: .bitcoin) }
            expectFastLimit("mnemonic") { _ = try Mnemonic(phrase: String(repeating: "abandon ", count: 12_800)) }
            expectFastLimit("derivation path") { _ = try DerivationPath("m/" + String(repeating: "0/", count: 50 * 1024)) }
            expectFastLimit("DER signature") { _ = try ECDSASignature(der: [0x30] + [UInt8](repeating: 2, count: 100 * 1024)) }
            expectFastLimit("message signature") { _ = try BitcoinMessage.recover([1], signature: Self.big) }
            // Hex's limit is an extended APDU's worth (transcripts hold those), so it is tested with more than that.
            expectFastLimit("hex") { _ = try Hex.decode(String(repeating: "ab", count: 100 * 1024)) }
        }

        @Test("The longest valid inputs stay within the limits")
        func validInputsFit() throws {
            let node = try HDNode(seed: [UInt8](repeating: 7, count: 32))
            #expect(try HDNode.parse(node.extendedPrivateKey(.Zpub)).node.isPrivate)
            let words = try Mnemonic(entropy: [UInt8](repeating: 0xff, count: 32)).phrase
            #expect(try Mnemonic(phrase: words.uppercased().replacingOccurrences(of: " ", with: "\t  ")).phrase == words)
            let deep = "m/" + Array(repeating: "2147483647'", count: 255).joined(separator: "/")
            #expect(try DerivationPath(deep).depth == 255)
        }
    }
}
