import KeyhostCrypto
import Testing
@testable import KeyhostBitcoin

/// What the signer refuses for an input of ours, each with the input named and the reason.
@Suite("PSBT signer policy")
struct SignerPolicyTests {
    static let master = (try? HDNode(extendedKey: OracleTests.tprv))

    /// A one-input PSBT spending `script` (amount from a previous transaction) whose origin names our key.
    static func psbt(spending script: [UInt8], redeem: [UInt8]? = nil, witnessScript: [UInt8]? = nil, sighash: UInt32? = nil,
                     outputs: Int = 1) throws -> PSBT {
        let master = try #require(Self.master)
        let node = try master.derive("m/84'/1'/0'/0/0")
        let previous = BitcoinTransaction(inputs: [TxInput(previousOutput: OutPoint(txid: [UInt8](repeating: 9, count: 32), index: 0))],
                                          outputs: [TxOutput(value: 50_000, scriptPubKey: script)])
        let tx = BitcoinTransaction(inputs: [TxInput(previousOutput: OutPoint(txid: previous.txid, index: 0))],
                                    outputs: Array(repeating: TxOutput(value: 40_000 / UInt64(outputs), scriptPubKey: Script.p2wpkh([UInt8](repeating: 1, count: 20))), count: outputs))
        var psbt = try PSBT(unsignedTransaction: tx)
        psbt.inputs[0].set(PSBTInputType.nonWitnessUTXO, value: previous.serialized())
        psbt.inputs[0].set(PSBTInputType.bip32Derivation, keyData: node.publicKey.compressed,
                           value: KeyOrigin(fingerprint: master.fingerprint, path: try DerivationPath("m/84'/1'/0'/0/0")).bytes)
        if let redeem { psbt.inputs[0].set(PSBTInputType.redeemScript, value: redeem) }
        if let witnessScript { psbt.inputs[0].set(PSBTInputType.witnessScript, value: witnessScript) }
        if let sighash { psbt.inputs[0].set(PSBTInputType.sighashType, value: LE.bytes(sighash)) }
        return try PSBT.parse(psbt.serialized())
    }

    static func refusal(_ psbt: PSBT) throws -> String {
        var copy = psbt
        do {
            try copy.sign(with: HDKeySource(master: try #require(Self.master)))
        } catch let error as PSBTError {
            #expect(error.kind == .signing && error.input == 0)
            #expect(copy == psbt, "a refused PSBT is unchanged")
            return error.message
        }
        Issue.record("signing was not refused")
        return ""
    }

    static var ourHash: [UInt8] { (try? Self.master?.derive("m/84'/1'/0'/0/0"))?.publicKey.hash160 ?? [] }

    @Test("non-standard scripts, bare or behind P2SH/P2WSH, are refused")
    func nonStandard() throws {
        #expect(try Self.refusal(Self.psbt(spending: [0x51])).contains("keyhost signs P2PKH, P2SH-P2WPKH, P2WPKH, P2TR key path and multisig only"))
        let oddRedeem: [UInt8] = [0x51, 0x75]
        #expect(try Self.refusal(Self.psbt(spending: Script.p2sh(Hash.hash160(oddRedeem)), redeem: oddRedeem)).contains("standard scripts only"))
        let oddWitness: [UInt8] = [0x00, 0x75, 0x51]
        #expect(try Self.refusal(Self.psbt(spending: Script.p2wsh(Hash.sha256(oddWitness)), witnessScript: oddWitness)).contains("not a standard multisig"))
    }

    @Test("scripts that do not match the output, and missing ones, are refused")
    func mismatches() throws {
        let redeem = Script.p2wpkh(Self.ourHash)
        #expect(try Self.refusal(Self.psbt(spending: Script.p2sh([UInt8](repeating: 3, count: 20)), redeem: redeem)).contains("does not hash"))
        #expect(try Self.refusal(Self.psbt(spending: Script.p2sh(Hash.hash160(redeem)))).contains("no redeem_script"))
        #expect(try Self.refusal(Self.psbt(spending: Script.p2wsh([UInt8](repeating: 4, count: 32)))).contains("no witness_script"))
    }

    @Test("a P2PKH input that also carries a witness_utxo is refused, as BIP174's signer does")
    func witnessUTXOOnALegacyInput() throws {
        let script = Script.p2pkh(Self.ourHash)
        var psbt = try Self.psbt(spending: script)
        var plain = psbt
        #expect(try plain.sign(with: HDKeySource(master: try #require(Self.master))).signatures.count == 1)
        psbt.inputs[0].set(PSBTInputType.witnessUTXO, value: TxOutput(value: 50_000, scriptPubKey: script).serialized)
        #expect(try Self.refusal(PSBT.parse(psbt.serialized())).contains("also carries a witness_utxo"))
    }

    @Test("a tap_internal_key that is not on the curve is refused when the PSBT is parsed")
    func internalKeyOffTheCurve() throws {
        var psbt = try Self.psbt(spending: Script.p2wpkh(Self.ourHash))
        // x = 5 has no point on secp256k1 (5^3 + 7 = 132 is not a square mod p).
        psbt.inputs[0].set(PSBTInputType.tapInternalKey, value: [UInt8](repeating: 0, count: 31) + [5])
        #expect { try PSBT.parse(psbt.serialized()) } throws: { error in
            (error as? PSBTError)?.kind == .invalidPSBT && "\(error)".contains("not a valid x-only public key")
        }
    }

    @Test("non-standard sighash types and SIGHASH_SINGLE without its output are refused")
    func sighashTypes() throws {
        #expect(try Self.refusal(Self.psbt(spending: Script.p2wpkh(Self.ourHash), sighash: 0x04)).contains("not a standard type"))
        #expect(try Self.refusal(Self.psbt(spending: Script.p2wpkh(Self.ourHash), sighash: 0x00)).contains("not a standard type"))
        // SINGLE for input 0 with an output 0 is fine; the bug case needs an input beyond the outputs (OracleTests covers
        // SINGLE's hashes; PSBTSigner refuses index >= outputs before hashing).
        var single = try Self.psbt(spending: Script.p2wpkh(Self.ourHash), sighash: 0x03, outputs: 1)
        #expect(try single.sign(with: HDKeySource(master: try #require(Self.master))).signatures.count == 1)
    }

    @Test("an input of ours that spends our key signs; one whose key is not in the script is skipped with the reason")
    func keyNotInScript() throws {
        var psbt = try Self.psbt(spending: Script.p2wpkh([UInt8](repeating: 5, count: 20)))
        let report = try psbt.sign(with: HDKeySource(master: try #require(Self.master)))
        #expect(report.signatures.isEmpty)
        #expect(report.skipped.first?.reason.contains("does not use them") == true)
    }

    @Test("SIGHASH_SINGLE on an input with no output of its index (the SINGLE bug) is refused")
    func singleBug() throws {
        var psbt = try Self.psbt(spending: Script.p2wpkh(Self.ourHash), outputs: 1)
        // A second input, the same output spent twice is enough for the signer's check, which comes first.
        var tx = try psbt.unsignedTransaction()
        tx.inputs.append(tx.inputs[0])
        var two = try PSBT(unsignedTransaction: tx)
        two.inputs = [psbt.inputs[0], psbt.inputs[0]]
        two.inputs[1].set(PSBTInputType.sighashType, value: LE.bytes(UInt32(3)))
        two.inputs[0].remove(PSBTInputType.bip32Derivation)
        psbt = two
        #expect { try psbt.sign(with: HDKeySource(master: try #require(Self.master))) } throws: {
            ($0 as? PSBTError)?.input == 1 && ($0 as? PSBTError)?.message.contains("SIGHASH_SINGLE bug") == true
        }
    }
}
