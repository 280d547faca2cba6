import KeyhostRecord
import KeyhostCrypto
import Testing
@testable import KeyhostEthereum

@Suite("Transactions")
struct TransactionTests {
    static let caseCount = 120

    @Test("eth-account signs → keyhost decodes, recovers and re-serializes byte for byte; keyhost signs the same bytes")
    func againstEthAccount() throws {
        let cases = try EthOracle.runJSON(["tx-cases", String(Self.caseCount), "1337"]).items
        #expect(cases.count == Self.caseCount)
        var ours = [String]()
        for (n, c) in cases.enumerated() {
            guard let raw = c["raw"]?.text, let keyHex = c["key"]?.text, let from = c["from"]?.text, let hash = c["hash"]?.text,
                  let fieldsJSON = c["fields"] else { Issue.record("case \(n) malformed"); continue }
            // eth-account → keyhost
            let decoded = try EthereumTransaction.decode(raw: bytes(raw))
            #expect(hex(try decoded.serialized()) == raw, "case \(n) re-serialization")
            #expect(EthereumAddress.checksummed(try decoded.sender()) == from, "case \(n) sender")
            #expect(hex(try decoded.hash()) == hash, "case \(n) hash")
            // keyhost signs the same fields with the same key: RFC 6979 makes the bytes identical.
            let fields = try TransactionFields(fieldsJSON)
            #expect(fields.transaction.signingHash == decoded.signingHash, "case \(n) signing hash")
            let key = try PrivateKey(bytes: bytes(keyHex))
            let signed = try fields.transaction.signed(with: key)
            #expect(hex(try signed.serialized()) == raw, "case \(n) keyhost's signature")
            #expect(signed == decoded, "case \(n) fields")
            // The output table reads back as the same transaction (from and hash are checked on the way).
            let again = try TransactionFields(try signed.fields())
            #expect(again.transaction == signed, "case \(n) fields round trip")
            ours.append(hex(try signed.serialized()))
        }
        // keyhost → eth-account: its recover_transaction and its own decoder agree.
        let checks = try EthOracle.run(["tx-check"], input: ours) as? [[String: String]] ?? []
        #expect(checks.count == ours.count)
        for (n, (check, raw)) in zip(checks, ours).enumerated() {
            let expected = cases[n]["from"]?.text
            #expect(check["from"] == expected, "case \(n) eth-account recovers keyhost's sender")
            #expect(check["reencoded"] == raw, "case \(n) eth-account re-encodes keyhost's bytes identically")
        }
    }

    @Test("the example of EIP-155: signing payload, hash and signed bytes")
    func eip155Example() throws {
        let tx = try EthereumTransaction(kind: .legacy, chainID: UInt256(1), nonce: UInt256(9), gasPrice: UInt256(20_000_000_000), gas: UInt256(21000),
                                         to: [UInt8](repeating: 0x35, count: 20), value: UInt256(1_000_000_000_000_000_000))
        #expect(hex(tx.signingPayload) == "0xec098504a817c800825208943535353535353535353535353535353535353535880de0b6b3a764000080018080")
        #expect(hex(tx.signingHash) == "0xdaf5a779ae972f972197303d7b574746c7ef83eadac0f2791ad23db92e4c8e53")
        let signed = try tx.signed(with: try PrivateKey(bytes: [UInt8](repeating: 0x46, count: 32)))
        #expect(hex(try signed.serialized()) == "0xf86c098504a817c800825208943535353535353535353535353535353535353535880de0b6b3a76400008025a0"
            + "28ef61340bd939bc2195fe537567866003e1a15d3c71ff63e1590620aa636276a067cbe9d8997f761aecb703304b3800ccf555c9f3dc64214b297fb1966a3b6d83")
    }

    @Test("a signer closure (as a card signs) gives the same transaction as the key")
    func signerClosure() throws {
        let key = try PrivateKey(bytes: [UInt8](repeating: 0x11, count: 32))
        let tx = try Self.sample()
        var seen = [UInt8]()
        let signed = try tx.signed { digest in seen = digest; return try key.signRecoverable(digest: digest) }
        #expect(seen == tx.signingHash)
        #expect(signed == (try tx.signed(with: key)))
        #expect(try signed.sender() == EthereumAddress.addressBytes(of: key.publicKey))
        // A signer that answers for another digest is caught only by the sender check; a high-s answer at once.
        let high = try RecoverableSignature(compact: Self.highS(try key.signRecoverable(digest: tx.signingHash)), recoveryID: 0)
        #expect(throws: TransactionError.highS) { try tx.signed { _ in high } }
    }

    /// The same (r, s) with s replaced by n - s.
    static func highS(_ signature: RecoverableSignature) -> [UInt8] {
        let n = UInt256(bigEndian: bytes("fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141"))!
        let s = UInt256(bigEndian: signature.s)!
        return signature.r + n.subtracting(s)!.word
    }

    static func sample(_ extra: [JSONValue.Member] = []) throws -> EthereumTransaction {
        try TransactionFields(.object([
            .init("type", .number("2")), .init("chain_id", .number("1")), .init("nonce", .number("7")), .init("gas", .number("21000")),
            .init("max_fee_per_gas", .string("30000000000")), .init("max_priority_fee_per_gas", .string("0x3b9aca00")),
            .init("to", .string("0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045")), .init("value", .string("1000000000000000000")),
        ] + extra)).transaction
    }

    @Test("a decoded transaction with high s is refused (EIP-2)")
    func highSDecoded() throws {
        let key = try PrivateKey(bytes: [UInt8](repeating: 0x22, count: 32))
        let signed = try Self.sample().signed(with: key)
        var flipped = signed
        let sig = try #require(signed.signature)
        let n = UInt256(bigEndian: bytes("fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141"))!
        flipped.signature = .init(r: sig.r, s: n.subtracting(sig.s)!, yParity: sig.yParity ^ 1)
        let decoded = try EthereumTransaction.decode(raw: try flipped.serialized())
        #expect(throws: TransactionError.highS) { try decoded.sender() }
    }

    static let badFields: [(String, JSONValue, String)] = [
        ("unknown name", .string("1"), "unknown transaction field 'gasLimit'"),
        ("value over 256 bits", .string("0x1" + String(repeating: "0", count: 64)), "does not fit in 256 bits"),
        ("negative value", .number("-1"), "negative"),
        ("fractional value", .number("1.5"), "whole number"),
        ("value with spaces", .string("1 000"), "not a decimal digit"),
        ("bad checksum", .string("0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96046"), "checksum"),
        ("short address", .string("0x1234"), "20 bytes"),
        ("data without 0x", .string("abcd"), "must start with 0x"),
        ("gas_price on type 2", .string("1"), "not a field of type 2"),
        ("tip above cap", .string("40000000000"), "exceeds max_fee_per_gas"),
        ("nonce 2^64 - 1", .string("18446744073709551615"), "EIP-2681"),
    ]

    @Test("bad fields are refused, naming the field", arguments: 0..<badFields.count)
    func badField(_ index: Int) {
        let (name, value, expected) = Self.badFields[index]
        let key: String
        switch name {
        case "unknown name": key = "gasLimit"
        case "bad checksum", "short address": key = "to"
        case "data without 0x": key = "data"
        case "gas_price on type 2": key = "gas_price"
        case "tip above cap": key = "max_priority_fee_per_gas"
        case "nonce 2^64 - 1": key = "nonce"
        default: key = "value"
        }
        do {
            guard case .object(var members) = try Self.sample().fields() else { Issue.record("no object"); return }
            members.removeAll { $0.key == key }
            members.append(.init(key, value))
            _ = try TransactionFields(.object(members))
            Issue.record("\(name) accepted")
        } catch {
            #expect("\(error)".contains(expected), "\(name): \(error)")
        }
    }

    @Test("required fields: chain_id, nonce, gas, to, and the fees of the type")
    func missingFields() throws {
        guard case .object(let members) = try Self.sample().fields() else { return }
        for name in ["chain_id", "nonce", "gas", "to", "max_fee_per_gas"] {
            #expect(throws: TransactionError.self, "\(name)") { try TransactionFields(.object(members.filter { $0.key != name })) }
        }
        // "to": "" creates a contract; a missing "to" is a mistake.
        var create = members.filter { $0.key != "to" }
        create.append(.init("to", .string("")))
        #expect(try TransactionFields(.object(create)).transaction.to == nil)
    }

    static let badRaw: [(String, String, String)] = [
        ("empty", "", "no bytes"),
        ("blob type", "03c0", "EIP-4844"),
        ("unknown type", "05c0", "unknown transaction type 5"),
        ("string body", "0283010203", "RLP string"),
        ("too few fields", "02c3010203", "has 12 fields"),
        ("truncated", "02f8", "truncated"),
        ("trailing byte", "c0c0", "follow the complete item"),
        // nonce written 0x0001 (leading zero) in a legacy transaction
        ("non-canonical nonce", "e1820001808252089400000000000000000000000000000000000000008080258080", "leading zero"),
        ("bad legacy v", "df8080825208940000000000000000000000000000000000000000808005 0101".replacingOccurrences(of: " ", with: ""), "EIP-155"),
    ]

    @Test("bad raw transactions are refused with a reason", arguments: 0..<badRaw.count)
    func badRawTransaction(_ index: Int) {
        let (name, raw, expected) = Self.badRaw[index]
        do {
            let tx = try EthereumTransaction.decode(raw: bytes(raw))
            _ = try tx.sender()
            Issue.record("\(name) accepted")
        } catch {
            #expect("\(error)".contains(expected), "\(name): \(error)")
        }
    }

    @Test("UInt256 parses and prints decimal and hex at the edges")
    func quantities() throws {
        let max = "115792089237316195423570985008687907853269984665640564039457584007913129639935"
        #expect(try UInt256(parsing: max).description == max)
        #expect(try UInt256(parsing: "0x" + String(repeating: "f", count: 64)) == .max)
        #expect(throws: QuantityError.overflow(bits: 256)) { try UInt256(parsing: "115792089237316195423570985008687907853269984665640564039457584007913129639936") }
        #expect(throws: QuantityError.empty) { try UInt256(parsing: "0x") }
        #expect(try UInt256(parsing: "0x0").hexString == "0x0")
        #expect(try UInt256(parsing: "255").hexString == "0xff")
        #expect(UInt256(bigEndian: [UInt8](repeating: 1, count: 33)) == nil)
        #expect(UInt256(1).negated == .max)
    }
}
