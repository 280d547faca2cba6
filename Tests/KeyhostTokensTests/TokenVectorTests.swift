import Foundation
import KeyhostCrypto
import Testing
@testable import KeyhostTokens

/// Tokens and a receipt written and signed by independent code (cbor2 + coincurve, see
/// Vectors/make_token_vectors.py): keyhost reads them, re-encodes them byte for byte, and verifies.
@Suite struct TokenVectorTests {
    static let vectors: [String: Any] = {
        let url = Bundle.module.url(forResource: "Vectors/token-vectors", withExtension: "json")!
        return try! JSONSerialization.jsonObject(with: Data(contentsOf: url)) as! [String: Any]
    }()

    @Test func tokensFromCbor2ReadReEncodeAndVerify() throws {
        let tokens = try #require(Self.vectors["tokens"] as? [[String: Any]])
        #expect(tokens.count == 2)
        for vector in tokens {
            let name = vector["name"] as! String
            let parsed = try TokenArmor.tokens(in: Array((vector["armored"] as! String).utf8))
            let signed = try #require(parsed.first)
            #expect(signed.encoded == hexBytes(vector["signed_cbor"] as! String), "\(name)")
            #expect(signed.token.encoded == hexBytes(vector["token_cbor"] as! String), "\(name)")
            #expect(SignedToken.digest(of: signed.token) == hexBytes(vector["digest"] as! String), "\(name)")
            #expect(signed.signatureIsValid, "\(name)")
            #expect(signed.token.value == vector["value"] as! UInt64)
            #expect(Hex.encode(signed.token.issuer.bytes) == Self.vectors["issuer_xonly"] as! String)
        }
        let limits = try TokenArmor.tokens(in: Array((tokens[1]["armored"] as! String).utf8))[0].token.policy
        #expect(limits == TokenPolicy(instructions: 1_000_000, memoryBytes: 8 << 20, timeMillis: 250))
    }

    @Test func aReceiptFromCoincurveVerifies() throws {
        let vector = try #require(Self.vectors["receipt"] as? [String: String])
        let receipt = try SignedReceipt(armored: Array(vector["armored"]!.utf8))
        #expect(receipt.encoded == hexBytes(vector["cbor"]!))
        #expect(receipt.id == hexBytes(vector["digest"]!))
        #expect(receipt.signatureIsValid)
        #expect(receipt.receipt.now == 1_800_000_000)
        #expect(receipt.receipt.effects == [.map([CBORPair(.text("shop"), .text("bakery")), CBORPair(.text("redeemed"), .unsigned(500))])])
        // One changed effect no longer matches the signed statement.
        var bytes = hexBytes(vector["cbor"]!)
        let bakery = Array("bakery".utf8)
        let at = try #require((0..<(bytes.count - bakery.count)).last { Array(bytes[$0..<($0 + bakery.count)]) == bakery })
        bytes[at] = UInt8(ascii: "f")
        #expect(throws: TokenError.self) { try SignedReceipt(encoded: bytes) }
    }
}
