import KeyhostRecord
import Foundation
import KeyhostTestSupport
import KeyhostCrypto
import Testing
@testable import KeyhostEthereum

@Suite("EIP-712 typed data")
struct TypedDataTests {
    static let mail = """
        {"types":{"EIP712Domain":[{"name":"name","type":"string"},{"name":"version","type":"string"},{"name":"chainId","type":"uint256"},
        {"name":"verifyingContract","type":"address"}],
        "Person":[{"name":"name","type":"string"},{"name":"wallet","type":"address"}],
        "Mail":[{"name":"from","type":"Person"},{"name":"to","type":"Person"},{"name":"contents","type":"string"}]},
        "primaryType":"Mail",
        "domain":{"name":"Ether Mail","version":"1","chainId":1,"verifyingContract":"0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC"},
        "message":{"from":{"name":"Cow","wallet":"0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826"},
        "to":{"name":"Bob","wallet":"0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB"},"contents":"Hello, Bob!"}}
        """

    @Test("the Mail example of EIP-712: type encoding, domain separator, digest and signature")
    func mailExample() throws {
        let data = try TypedData(json: Array(Self.mail.utf8))
        #expect(try data.encodeType("Mail") == "Mail(Person from,Person to,string contents)Person(string name,address wallet)")
        #expect(hex(try data.typeHash("Mail")) == "0xa0cedeb2dc280ba39b857546d74f5549c3a1d7bdc2dd96bf881f76108e23dac2")
        #expect(hex(try data.domainSeparator()) == "0xf2cee375fa42b42143804025fc449deafd50cc031ca257e0b194a650a912090f")
        #expect(hex(try data.hashStruct("Mail", data.message)) == "0xc52c0ee5d84264471806290a3f2c4cecfc5490626bf912d01f240d7a274b371e")
        #expect(hex(try data.digest()) == "0xbe609aee343fb3c4b28e1df9e632fca64fcfaede20f02e86244efddf30957bd2")
        // The EIP's signer is the key keccak256("cow").
        let key = try PrivateKey(bytes: Keccak256.hash(Array("cow".utf8)))
        let signature = try data.sign(with: key)
        #expect(hex(signature.r) == "0x4355c47d63924e8a72e509b65029052eb6c299d53a04e167c5775fd466751c9d")
        #expect(hex(signature.s) == "0x07299936d304c153f6443dfa05f40ff007d72911b6f72307f996231605b91562")
        #expect(signature.rsv.last == 28)
        #expect(try data.recoverAddress(signature) == "0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826")
    }

    @Test("without EIP712Domain in types, the domain type is built from the standard fields present, as eth-account does")
    func inferredDomain() throws {
        guard case .object(let top) = try JSONValue.parse(Array(Self.mail.utf8)), case .object(let types)? = top.first(where: { $0.key == "types" })?.value
        else { Issue.record("Mail example is not an object"); return }
        let withoutDomainType = top.map { member in
            member.key == "types" ? JSONValue.Member("types", .object(types.filter { $0.key != "EIP712Domain" })) : member
        }
        #expect(hex(try TypedData(.object(withoutDomainType)).digest()) == "0xbe609aee343fb3c4b28e1df9e632fca64fcfaede20f02e86244efddf30957bd2")
        // Fields in another order and a subset: eth-account's digest for domain {chainId: 1, name: "Ether Mail"}.
        let reordered = withoutDomainType.map { member in
            member.key == "domain" ? JSONValue.Member("domain", .object([.init("chainId", .number("1")), .init("name", .string("Ether Mail"))])) : member
        }
        #expect(hex(try TypedData(.object(reordered)).digest()) == "0xa286dca0926918b23afa7f442b8b60116361a16aed23ad4565195448c7cc0259")
    }

    @Test("random documents with nested structs and arrays: digests and signatures equal eth-account's, both ways")
    func againstEthAccount() throws {
        let cases = try EthOracle.runJSON(["typed-cases", "150", "712"]).items
        #expect(cases.count == 150)
        var ours = [JSONValue]()
        var expected = [String]()
        for (n, c) in cases.enumerated() {
            guard let document = c["document"], let keyHex = c["key"]?.text, let digest = c["digest"]?.text,
                  let signatureHex = c["signature"]?.text, let address = c["address"]?.text else { Issue.record("case \(n) malformed"); continue }
            let data = try TypedData(document)
            #expect(hex(try data.digest()) == digest, "case \(n) digest of \(document.rendered)")
            let key = try PrivateKey(bytes: bytes(keyHex))
            let signature = try data.sign(with: key)
            #expect(hex(signature.rsv) == signatureHex, "case \(n) signature")
            #expect(try data.recoverAddress(try RecoverableSignature(rsv: bytes(signatureHex))) == address, "case \(n) recovery")
            // Sign with another key so eth-account recovers a signature it did not make itself.
            let other = try PrivateKey(bytes: Keccak256.hash(bytes(keyHex)))
            // The document goes back as keyhost renders it: 256-bit numbers must not pass through a Double.
            ours.append(.object([.init("document", document), .init("signature", .string(hex(try data.sign(with: other).rsv)))]))
            expected.append(EthereumAddress.address(of: other.publicKey))
        }
        let output = try PythonOracle.run("eth_oracle.py", ["typed-recover"], input: Data(JSONValue.array(ours).rendered.utf8))
        let recovered = try JSONSerialization.jsonObject(with: output) as? [String] ?? []
        #expect(recovered == expected)
    }

    static let hostile: [(String, String, String)] = [
        ("unknown type", #"{"types":{"A":[{"name":"x","type":"Persn"}]},"primaryType":"A","domain":{},"message":{"x":1}}"#, "'Persn' is not defined"),
        ("uint alias", #"{"types":{"A":[{"name":"x","type":"uint"}]},"primaryType":"A","domain":{},"message":{"x":1}}"#, "write uint256"),
        ("odd int size", #"{"types":{"A":[{"name":"x","type":"int7"}]},"primaryType":"A","domain":{},"message":{"x":1}}"#, "not a valid size"),
        ("bytes33", #"{"types":{"A":[{"name":"x","type":"bytes33"}]},"primaryType":"A","domain":{},"message":{"x":"0x"}}"#, "bytes1 … bytes32"),
        ("self cycle", #"{"types":{"A":[{"name":"a","type":"A"}]},"primaryType":"A","domain":{},"message":{}}"#, "contains itself"),
        ("two-type cycle", #"{"types":{"A":[{"name":"b","type":"B"}],"B":[{"name":"a","type":"A"}]},"primaryType":"A","domain":{},"message":{}}"#, "contains itself"),
        ("missing primary", #"{"types":{"A":[]},"primaryType":"B","domain":{},"message":{}}"#, "primaryType 'B' is not defined"),
        ("duplicate field", #"{"types":{"A":[{"name":"x","type":"bool"},{"name":"x","type":"bool"}]},"primaryType":"A","domain":{},"message":{}}"#, "defined twice"),
        ("missing value", #"{"types":{"A":[{"name":"x","type":"bool"}]},"primaryType":"A","domain":{},"message":{}}"#, "message.x is missing"),
        ("missing address", #"{"types":{"A":[{"name":"to","type":"address"}]},"primaryType":"A","domain":{},"message":{}}"#, "A needs an address 'to'"),
        ("missing uint", #"{"types":{"A":[{"name":"n","type":"uint8"}]},"primaryType":"A","domain":{},"message":{}}"#, "A needs a uint8 'n'"),
        ("extra value", #"{"types":{"A":[]},"primaryType":"A","domain":{},"message":{"y":1}}"#, "message.y is not a field of A"),
        ("uint8 overflow", #"{"types":{"A":[{"name":"x","type":"uint8"}]},"primaryType":"A","domain":{},"message":{"x":256}}"#, "does not fit in uint8"),
        ("negative uint", #"{"types":{"A":[{"name":"x","type":"uint8"}]},"primaryType":"A","domain":{},"message":{"x":-1}}"#, "negative"),
        ("int8 below range", #"{"types":{"A":[{"name":"x","type":"int8"}]},"primaryType":"A","domain":{},"message":{"x":"-129"}}"#, "does not fit in int8"),
        ("fixed array length", #"{"types":{"A":[{"name":"x","type":"bool[2]"}]},"primaryType":"A","domain":{},"message":{"x":[true]}}"#, "needs exactly 2"),
        ("bool as number", #"{"types":{"A":[{"name":"x","type":"bool"}]},"primaryType":"A","domain":{},"message":{"x":1}}"#, "true or false"),
        ("bad address", #"{"types":{"A":[{"name":"x","type":"address"}]},"primaryType":"A","domain":{},"message":{"x":"0x12"}}"#, "message.x is not an address"),
        ("bytes4 length", #"{"types":{"A":[{"name":"x","type":"bytes4"}]},"primaryType":"A","domain":{},"message":{"x":"0x0102"}}"#, "needs exactly 4"),
        ("unknown domain field", #"{"types":{"A":[]},"primaryType":"A","domain":{"chain":1},"message":{}}"#, "not a standard EIP712Domain field"),
        ("array dimension zero-padded", #"{"types":{"A":[{"name":"x","type":"bool[02]"}]},"primaryType":"A","domain":{},"message":{"x":[]}}"#, "array length"),
        ("huge array dimension", #"{"types":{"A":[{"name":"x","type":"bool[99999999999999999999]"}]},"primaryType":"A","domain":{},"message":{"x":[]}}"#, "array length"),
        ("bad struct name", #"{"types":{"A B":[]},"primaryType":"A B","domain":{},"message":{}}"#, "not an identifier"),
        ("not JSON", #"{"types":"#, "not JSON"),
        ("duplicate JSON key", #"{"types":{},"types":{}}"#, "duplicate member"),
    ]

    @Test("hostile documents are refused with a clear reason", arguments: 0..<hostile.count)
    func hostileDocument(_ index: Int) {
        let (name, json, expected) = Self.hostile[index]
        do {
            let digest = try TypedData(json: Array(json.utf8)).digest()
            Issue.record("\(name) hashed to \(hex(digest))")
        } catch {
            #expect("\(error)".contains(expected), "\(name): \(error)")
        }
    }

    @Test("deep nesting stops at the limit instead of overflowing the stack")
    func deepNesting() throws {
        // A type recursive through an array is legal; a value 40 levels deep is over the limit.
        var value = #"{"kids":[]}"#
        for _ in 0..<40 { value = #"{"kids":[\#(value)]}"# }
        let json = #"{"types":{"Node":[{"name":"kids","type":"Node[]"}]},"primaryType":"Node","domain":{},"message":\#(value)}"#
        #expect(throws: TypedDataError.self) { try TypedData(json: Array(json.utf8)).digest() }
        var shallow = #"{"kids":[]}"#
        for _ in 0..<5 { shallow = #"{"kids":[\#(shallow),\#(shallow)]}"# }
        let ok = #"{"types":{"Node":[{"name":"kids","type":"Node[]"}]},"primaryType":"Node","domain":{},"message":\#(shallow)}"#
        #expect(try TypedData(json: Array(ok.utf8)).digest().count == 32)
        let deepJSON = String(repeating: "[", count: 100_000)
        #expect(throws: TypedDataError.self) { try TypedData(json: Array(deepJSON.utf8)) }
    }

    @Test("integers may be JSON numbers, decimal strings or 0x-hex strings")
    func integerForms() throws {
        func digest(_ value: String) throws -> [UInt8] {
            try TypedData(json: Array(#"{"types":{"A":[{"name":"x","type":"int256"}]},"primaryType":"A","domain":{},"message":{"x":\#(value)}}"#.utf8)).digest()
        }
        #expect(try digest("255") == digest(#""255""#))
        #expect(try digest("255") == digest(#""0xff""#))
        #expect(try digest("-1") == digest(#""-1""#))
        #expect(try digest("-1") != digest("1"))
    }
}

