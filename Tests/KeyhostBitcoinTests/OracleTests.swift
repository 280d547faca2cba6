import Foundation
import KeyhostCrypto
import Testing
@testable import KeyhostBitcoin

/// keyhost against independent implementations from PyPI: btclib's signature hashes on random
/// transactions, and PSBTs made by embit and signed, checked (btclib hashes), finalized by the other.
@Suite("PSBT oracle (embit, btclib)")
struct OracleTests {
    static let tprv = "tprv8ZgxMBicQKsPd9TeAdPADNnSyH9SSUUbTVeFszDE23Ki6TBB5nCefAdHkK8Fm3qMQR6sHwA56zqRmKmxnHk37JkiFzvncDqoKmPWubu7hDF"

    static func randomTransaction(_ rng: inout SplitMix) -> BitcoinTransaction {
        func bytes(_ n: Int) -> [UInt8] { (0..<n).map { _ in UInt8(truncatingIfNeeded: rng.next()) } }
        // Scripts without 0xab: embit keeps OP_CODESEPARATOR in legacy script codes, Bitcoin Core drops it.
        func script() -> [UInt8] { bytes(Int(rng.next() % 40)).map { $0 == 0xab ? 0xac : $0 } }
        let inputs = (0..<(1 + Int(rng.next() % 5))).map { _ in
            TxInput(previousOutput: OutPoint(txid: bytes(32), index: UInt32(truncatingIfNeeded: rng.next() % 4)),
                    sequence: rng.next() % 2 == 0 ? 0xffff_ffff : UInt32(truncatingIfNeeded: rng.next()))
        }
        let outputs = (0..<(1 + Int(rng.next() % 5))).map { _ in TxOutput(value: rng.next() % 5_000_000_000, scriptPubKey: script()) }
        return BitcoinTransaction(version: UInt32(1 + rng.next() % 2), inputs: inputs, outputs: outputs,
                                  lockTime: rng.next() % 2 == 0 ? 0 : UInt32(truncatingIfNeeded: rng.next()))
    }

    @Test("legacy, BIP143 and BIP341 sighashes agree with btclib on random transactions, every type")
    func sighashes() throws {
        var rng = SplitMix(seed: 341)
        var request = [[String: Any]]()
        var ours = [String]()
        var labels = [String]()
        for _ in 0..<60 {
            let tx = Self.randomTransaction(&rng)
            let spent = tx.inputs.map { _ in TxOutput(value: rng.next() % 2_100_000_000_000_000, scriptPubKey: [0x51, 0x20] + (0..<32).map { _ in UInt8(truncatingIfNeeded: rng.next()) }) }
            let cache = SighashCache(transaction: tx, spentOutputs: spent)
            var cases = [[String: Any]]()
            for index in tx.inputs.indices {
                let code = (0..<Int(rng.next() % 30)).map { _ in UInt8(truncatingIfNeeded: rng.next() % 0xa0) }
                let amount = rng.next() % 2_100_000_000_000_000
                for type in SighashType.standard + [.default] {
                    // SINGLE without its output: legacy signs the constant 1 (consensus), BIP341 has no hash.
                    let singleMissing = type.rawValue & 3 == 3 && index >= tx.outputs.count
                    if type != .default {
                        cases.append(["kind": "legacy", "index": index, "script_code": hex(code), "sighash": type.rawValue])
                        ours.append(hex(try cache.legacy(input: index, scriptCode: code, type: type)))
                        labels.append("legacy \(type) input \(index)")
                    }
                    if type != .default {
                        cases.append(["kind": "segwit", "index": index, "script_code": hex(code), "amount": amount, "sighash": type.rawValue])
                        ours.append(hex(try cache.segwitV0(input: index, scriptCode: code, amount: amount, type: type)))
                        labels.append("segwit \(type) input \(index)")
                    }
                    if !singleMissing {
                        cases.append(["kind": "taproot", "index": index, "sighash": type.rawValue,
                                      "spent": spent.map { ["value": $0.value, "script": hex($0.scriptPubKey)] as [String: Any] }])
                        ours.append(hex(try cache.taproot(input: index, type: type)))
                        labels.append("taproot \(type) input \(index)")
                    }
                }
            }
            request.append(["tx": hex(tx.serialized()), "cases": cases])
        }
        var theirs = [String]()
        for item in request {
            theirs += try #require(try PSBTOracle.run("sighash", item)["hashes"] as? [String])
        }
        #expect(theirs.count == ours.count)
        for (i, (a, b)) in zip(ours, theirs).enumerated() where a != b {
            Issue.record("\(labels[i]): keyhost \(a), btclib \(b)")
        }
    }

    static func embitPSBT(_ inputs: [(String, String)], sighash: SighashType? = nil, seed: Int = 1) throws -> PSBT {
        var request: [String: Any] = [
            "tprv": tprv, "seed": seed,
            "inputs": inputs.enumerated().map { ["kind": $1.0, "path": $1.1, "amount": 40_000 + $0 * 1000] as [String: Any] },
            // As many outputs as inputs, so SIGHASH_SINGLE has an output for every input.
            "outputs": [["amount": 30_000] as [String: Any], ["amount": 5_000 * inputs.count, "path": "m/84h/1h/0h/1/7"]]
                + (2..<max(2, inputs.count)).map { _ in ["amount": 1_000] as [String: Any] },
        ]
        if let sighash { request["sighash"] = sighash.rawValue }
        let text = try #require(try PSBTOracle.run("make", request)["psbt"] as? String)
        return try PSBT.parse(base64: text)
    }

    static let allKinds = [("p2pkh", "m/44h/1h/0h/0/3"), ("p2sh-p2wpkh", "m/49h/1h/0h/0/4"), ("p2wpkh", "m/84h/1h/0h/0/5"), ("p2tr", "m/86h/1h/0h/0/6")]

    @Test("embit makes, keyhost signs (HD master), embit checks every signature and finalizes the same transaction")
    func keyhostSigns() throws {
        var psbt = try Self.embitPSBT(Self.allKinds)
        let summary = try psbt.summary(coin: .bitcoinTestnet, signer: HDKeySource(master: HDNode(extendedKey: Self.tprv)))
        #expect(summary.inputs.map(\.scriptType) == ["p2pkh", "p2sh-p2wpkh", "p2wpkh", "p2tr"])
        #expect(summary.inputs.allSatisfy { $0.ours })
        #expect(summary.outputs.map(\.change) == [false, true, false, false])
        #expect(summary.fee == 40_000 + 41_000 + 42_000 + 43_000 - 30_000 - 20_000 - 2_000)

        let report = try psbt.sign(with: HDKeySource(master: HDNode(extendedKey: Self.tprv)))
        #expect(report.signatures.count == 4)
        let checked = try #require(try PSBTOracle.run("verify", ["psbt": psbt.base64])["inputs"] as? [[String: Any]])
        #expect(checked.map { $0["signatures"] as? Int } == [1, 1, 1, 1])
        #expect(checked.allSatisfy { $0["valid"] as? Bool == true })

        try psbt.finalize()
        let ours = hex(try psbt.extractTransaction().serialized())
        let theirs = try #require(try PSBTOracle.run("finalize", ["psbt": psbt.base64])["tx"] as? String)
        #expect(ours == theirs)
    }

    /// Bitcoin Core and embit grind RFC 6979's extra data until R is low (DER at most 70 bytes); keyhost's
    /// signatures must be those exact bytes, not merely valid ones.
    @Test("keyhost's ECDSA signatures are the low-R ones embit makes, byte for byte")
    func lowRSignaturesMatchEmbit() throws {
        var compared = 0
        for seed in 20..<32 {
            let unsigned = try Self.embitPSBT(Array(Self.allKinds.prefix(3)), seed: seed)
            let theirs = try #require(try PSBTOracle.run("sign", ["psbt": unsigned.base64, "tprv": Self.tprv])["psbt"] as? String)
            var ours = unsigned
            try ours.sign(with: HDKeySource(master: HDNode(extendedKey: Self.tprv)))
            let expected = try #require(try PSBTOracle.run("partial_sigs", ["psbt": theirs])["inputs"] as? [[String]])
            let got = try #require(try PSBTOracle.run("partial_sigs", ["psbt": ours.base64])["inputs"] as? [[String]])
            #expect(got == expected, "seed \(seed)")
            for signature in got.joined() {
                #expect(signature.count <= 2 * 71, "DER of at most 70 bytes and the sighash byte: \(signature)")
                compared += 1
            }
        }
        #expect(compared == 36)
    }

    @Test("embit finalizes keyhost's partial signatures (P2PKH, P2SH-P2WPKH, P2WPKH) into the transaction keyhost extracts")
    func embitFinalizesOurSignatures() throws {
        var psbt = try Self.embitPSBT(Array(Self.allKinds.prefix(3)), seed: 11)
        try psbt.sign(with: HDKeySource(master: HDNode(extendedKey: Self.tprv)))
        // embit 0.8.0 cannot finalize from PSBT_IN_TAP_KEY_SIG, so taproot is checked in keyhostSigns instead.
        let theirs = try #require(try PSBTOracle.run("finalize", ["psbt": psbt.base64])["tx"] as? String)
        try psbt.finalize()
        #expect(hex(try psbt.extractTransaction().serialized()) == theirs)
    }

    @Test("every sighash type the PSBT names is signed with and checks out in embit", arguments: SighashType.standard)
    func sighashTypes(_ type: SighashType) throws {
        // Three outputs-worth of inputs keep SINGLE's matching output present for the first two.
        var psbt = try Self.embitPSBT(Array(Self.allKinds.prefix(2)) + [Self.allKinds[3]], sighash: type, seed: Int(type.rawValue))
        try psbt.sign(with: HDKeySource(master: HDNode(extendedKey: Self.tprv)))
        let checked = try #require(try PSBTOracle.run("verify", ["psbt": psbt.base64])["inputs"] as? [[String: Any]])
        #expect(checked.allSatisfy { $0["valid"] as? Bool == true && $0["signatures"] as? Int == 1 })
        // A type other than the PSBT's is refused.
        var other = try Self.embitPSBT([Self.allKinds[2]], sighash: type)
        let different: SighashType = type == .all ? .none : .all
        #expect(throws: PSBTError.self) {
            try other.sign(with: HDKeySource(master: HDNode(extendedKey: Self.tprv)), options: PSBTSigningOptions(sighashType: different))
        }
    }

    @Test("embit signs, keyhost finalizes and extracts what embit's finalizer extracts")
    func embitSigns() throws {
        let unsigned = try Self.embitPSBT(Self.allKinds, seed: 7)
        let signedText = try #require(try PSBTOracle.run("sign", ["psbt": unsigned.base64, "tprv": Self.tprv])["psbt"] as? String)
        var psbt = try PSBT.parse(base64: signedText)
        let theirs = try #require(try PSBTOracle.run("finalize", ["psbt": signedText])["tx"] as? String)
        try psbt.finalize()
        #expect(hex(try psbt.extractTransaction().serialized()) == theirs)
    }

    @Test("a segwit v0 input with witness_utxo only is refused unless allowed")
    func witnessUTXOPolicy() throws {
        let request: [String: Any] = ["tprv": Self.tprv, "witness_utxo_only": true,
                                      "inputs": [["kind": "p2wpkh", "path": "m/84h/1h/0h/0/5", "amount": 50_000]],
                                      "outputs": [["amount": 40_000]]]
        var psbt = try PSBT.parse(base64: try #require(try PSBTOracle.run("make", request)["psbt"] as? String))
        let source = try HDKeySource(master: HDNode(extendedKey: Self.tprv))
        #expect(throws: PSBTError.self) { try psbt.sign(with: source) }
        #expect(try psbt.sign(with: source, options: PSBTSigningOptions(allowWitnessUTXOOnly: true)).signatures.count == 1)
        #expect(try psbt.summary(coin: .bitcoinTestnet).warnings.contains { $0.contains("not proven") })
    }

    @Test("a key at the PSBT's fingerprint and path that is not the listed key is refused")
    func mismatchedKey() throws {
        var psbt = try Self.embitPSBT([Self.allKinds[2]])
        // Same fingerprint, another master: any master whose fingerprint is forged into the PSBT would do;
        // here the listed path is changed so the same master derives a different key.
        let field = try #require(psbt.inputs[0].fields.first { $0.type == PSBTInputType.bip32Derivation })
        var origin = try KeyOrigin(bytes: field.value)
        origin.path = try DerivationPath("m/84'/1'/0'/0/6")
        psbt.inputs[0].set(PSBTInputType.bip32Derivation, keyData: field.keyData, value: origin.bytes)
        #expect(throws: PSBTError.self) { try psbt.sign(with: HDKeySource(master: HDNode(extendedKey: Self.tprv))) }
    }
}
