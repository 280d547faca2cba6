import Foundation
import KeyhostCrypto
import KeyhostTestSupport
import Testing
@testable import KeyhostTokens

/// The token format: canonical encoding, issuer signatures, strict parsing, armour, and cbor2 reading it.
@Suite struct TokenTests {
    static let issuerKey = try! PrivateKey(bytes: hexBytes("0b432b2677937381aef05bb02a66ecd012773062cf3fa2549e44f58ed2401710"))
    static let holderKey = try! PrivateKey(bytes: hexBytes("8bdd21f1ac8c1e2ef3c1e3bd3ac8c6a9d2a6cb79c9d1d44a4b7bb8e2bd4e9a51"))

    static func sample(program: String = "return token.value", meta: CBORValue? = .map([CBORPair(.text("campaign"), .text("spring"))])) -> Token {
        Token(
            id: Array(0..<32), issuer: issuerKey.publicKey.xOnly, value: 500, unit: "EUR-cent", notBefore: 1_700_000_000,
            expires: 1_800_000_000, program: TokenProgram(kind: .luaSource, code: Array(program.utf8)), holder: holderKey.publicKey,
            metadata: meta
        )
    }

    @Test func issuedTokensRoundTripAndVerify() throws {
        let signed = try SignedToken.issue(Self.sample(), issuerKey: Self.issuerKey)
        #expect(signed.signatureIsValid)
        let parsed = try SignedToken(encoded: signed.encoded)
        #expect(parsed == signed)
        try parsed.verify()
        #expect(parsed.token.programHash == Hash.sha256(Array("return token.value".utf8)))
        #expect(try TokenArmor.tokens(in: Array(TokenArmor.armor(signed).utf8)) == [signed])
    }

    @Test func onlyTheIssuersKeyCanSign() throws {
        #expect { try SignedToken.issue(Self.sample(), issuerKey: Self.holderKey) } throws: {
            ($0 as? TokenError)?.message == "token field 'issuer': is not the public key of the signing key"
        }
    }

    /// Every single-bit change of an issued token is refused: by the parser or by the signature.
    @Test func everyFlippedBitIsRejected() throws {
        let signed = try SignedToken.issue(Self.sample(), issuerKey: Self.issuerKey)
        let bytes = signed.encoded
        var parseErrors = 0, signatureErrors = 0
        for bit in 0..<(bytes.count * 8) {
            var tampered = bytes
            tampered[bit / 8] ^= UInt8(1 << (bit % 8))
            guard let parsed = try? SignedToken(encoded: tampered) else { parseErrors += 1; continue }
            #expect(!parsed.signatureIsValid, "bit \(bit) still verifies")
            signatureErrors += 1
        }
        #expect(parseErrors + signatureErrors == bytes.count * 8)
        #expect(parseErrors > 0 && signatureErrors > 0)
    }

    @Test func cbor2ReadsTheSameToken() throws {
        let signed = try SignedToken.issue(Self.sample(), issuerKey: Self.issuerKey)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("keyhost-token-\(UUID().uuidString).txt")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(("# a voucher\n" + TokenArmor.armor(signed) + "\n").utf8).write(to: file)
        let json = try PythonOracle.run("cbor_oracle.py", ["token", file.path])
        let decoded = try #require((try JSONSerialization.jsonObject(with: json)) as? [[String: Any]])
        let fields = try #require(decoded.first)
        #expect(decoded.count == 1)
        #expect(fields["v"] as? Int == 1)
        #expect(fields["id"] as? String == hexString(Array(0..<32)))
        #expect(fields["issuer"] as? String == hexString(Self.issuerKey.publicKey.xOnly.bytes))
        #expect(fields["holder"] as? String == hexString(Self.holderKey.publicKey.compressed))
        #expect(fields["value"] as? Int == 500)
        #expect(fields["unit"] as? String == "EUR-cent")
        #expect(fields["program_kind"] as? String == "lua54-source")
        #expect(fields["program_sha256"] as? String == hexString(Hash.sha256(Array("return token.value".utf8))))
        #expect(fields["not_before"] as? Int == 1_700_000_000)
        #expect(fields["expires"] as? Int == 1_800_000_000)
        #expect(fields["sig"] as? String == hexString(signed.signature))
    }

    /// Re-encodes the token map with one field changed and the signature kept, then parses it.
    func parseAltered(_ change: (inout [CBORPair]) -> Void) throws -> SignedToken {
        let signed = try SignedToken.issue(Self.sample(), issuerKey: Self.issuerKey)
        guard case .map(var pairs) = signed.token.cbor else { fatalError() }
        change(&pairs)
        let envelope = CBORValue.map([CBORPair(.text("token"), .map(pairs)), CBORPair(.text("sig"), .bytes(signed.signature))])
        return try SignedToken(encoded: CBOREncoder.encode(envelope))
    }

    func set(_ name: String, _ value: CBORValue?) -> (inout [CBORPair]) -> Void {
        { pairs in
            pairs.removeAll { $0.key == .text(name) }
            if let value { pairs.append(CBORPair(.text(name), value)) }
        }
    }

    @Test(arguments: [
        ("v", CBORValue.unsigned(2), "token field 'v': format version 2 is not supported"),
        ("id", .bytes([1, 2, 3]), "token field 'id': must be 32 bytes, got 3"),
        ("issuer", .bytes([UInt8](repeating: 0xFF, count: 32)), "token field 'issuer': is not a valid x-only public key"),
        ("holder", .bytes([2] + [UInt8](repeating: 0, count: 31)), "token field 'holder': must be 33 bytes, got 32"),
        ("value", .int(-5), "token field 'value': must be a non-negative integer"),
        ("unit", .text("euro cent"), "token field 'unit': must be 1 to 32 printable ASCII characters"),
        ("program_kind", .text("python"), "token field 'program_kind': \"python\" is not one of lua54-source, lua54-bytecode"),
        ("program", .bytes(Array("return 2".utf8)), "token field 'program_sha256': does not match the program"),
        ("program", .bytes([UInt8](repeating: 0x20, count: (128 << 10) + 1)), "token field 'program': 131073 bytes is more than the limit of 131072"),
        ("expires", .int(1_600_000_000), "token field 'expires': must be later than not_before"),
        ("colour", .text("red"), "unknown token field 'colour'"),
        ("unit", nil, "token field 'unit': is missing"),
    ] as [(String, CBORValue?, String)])
    func badFieldsAreNamed(field: String, value: CBORValue?, message: String) throws {
        #expect { try parseAltered(set(field, value)) } throws: { error in
            let text = (error as? TokenError)?.message ?? "\(error)"
            if !text.contains(message) { Issue.record("got: \(text)") }
            return text.contains(message)
        }
    }

    @Test func encodingProblemsAreRefused() throws {
        let bytes = try SignedToken.issue(Self.sample(), issuerKey: Self.issuerKey).encoded
        #expect { try SignedToken(encoded: bytes + [0]) } throws: { "\($0)".contains("1 bytes after the end of the item") }
        #expect { try SignedToken(encoded: Array(bytes.dropLast())) } throws: { "\($0)".contains("runs past the end") }
        #expect { try SignedToken(encoded: [UInt8](repeating: 0x80, count: (256 << 10) + 1)) } throws: {
            "\($0)" == "token of 262145 bytes is more than the limit of 262144"
        }
    }

    @Test func armourFilesHoldSeveralTokensAndNameBadLines() throws {
        let a = try SignedToken.issue(Self.sample(), issuerKey: Self.issuerKey)
        let b = try SignedToken.issue(Self.sample(program: "return 2"), issuerKey: Self.issuerKey)
        let text = "# two tokens\n\n" + TokenArmor.armor(a) + "\r\n  " + TokenArmor.armor(b) + "  \n"
        #expect(try TokenArmor.tokens(in: Array(text.utf8), source: "wallet.txt") == [a, b])
        #expect { try TokenArmor.tokens(in: Array((text + "hello\n").utf8), source: "t.txt") } throws: {
            "\($0)" == "t.txt line 5: not a keyhost token (tokens start with 'khtok1:')"
        }
        #expect { try TokenArmor.tokens(in: Array("khtok1:abc=\n".utf8), source: "t.txt") } throws: {
            "\($0)".hasPrefix("t.txt line 1: the text after 'khtok1:' is not base64url")
        }
        #expect { try TokenArmor.tokens(in: Array("# nothing\n".utf8), source: "e.txt") } throws: {
            "\($0)" == "e.txt holds no token (tokens start with 'khtok1:')"
        }
    }

    @Test func base64urlMatchesFoundation() {
        for n in 0..<40 {
            let bytes = (0..<n).map { UInt8(($0 * 37 + n) & 0xFF) }
            let foundation = Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            #expect(Base64.encodeURL(bytes) == foundation)
            #expect(Base64.decodeURL(Array(foundation.utf8)) == bytes)
        }
        #expect(Base64.decodeURL(Array("A".utf8)) == nil)  // 6 bits: no byte count encodes to that
        #expect(Base64.decodeURL(Array("AB".utf8)) == nil) // non-zero leftover bits: not canonical
    }
}
