import KeyhostCrypto
import Testing
@testable import KeyhostBitcoin

/// BIP370 PSBTs are signed, finalized and extracted like their version 0 form: the same transaction comes out.
@Suite("PSBT version 2")
struct VersionTwoTests {
    /// The version 2 form of a version 0 PSBT (BIP370's constructor fields in place of the global transaction).
    static func versionTwo(_ v0: PSBT) throws -> PSBT {
        let tx = try v0.unsignedTransaction()
        var global = PSBTMap()
        global.set(PSBTGlobalType.txVersion, value: LE.bytes(tx.version))
        global.set(PSBTGlobalType.fallbackLocktime, value: LE.bytes(tx.lockTime))
        var count = [UInt8](); count.appendCompactSize(tx.inputs.count)
        global.set(PSBTGlobalType.inputCount, value: count)
        count = []; count.appendCompactSize(tx.outputs.count)
        global.set(PSBTGlobalType.outputCount, value: count)
        global.set(PSBTGlobalType.version, value: LE.bytes(UInt32(2)))
        var inputs = v0.inputs
        for (i, input) in tx.inputs.enumerated() {
            inputs[i].set(PSBTInputType.previousTxid, value: input.previousOutput.txid)
            inputs[i].set(PSBTInputType.outputIndex, value: LE.bytes(input.previousOutput.index))
            inputs[i].set(PSBTInputType.sequence, value: LE.bytes(input.sequence))
        }
        var outputs = v0.outputs
        for (i, output) in tx.outputs.enumerated() {
            outputs[i].set(PSBTOutputType.amount, value: LE.bytes(output.value))
            outputs[i].set(PSBTOutputType.script, value: output.scriptPubKey)
        }
        // Through the parser, so the result is checked as any PSBT read is.
        return try PSBT.parse(PSBT(version: 2, global: global, inputs: inputs, outputs: outputs).serialized())
    }

    @Test("a v2 PSBT made by embit's v0 converted signs to the same transaction (ECDSA inputs are deterministic)")
    func sameTransaction() throws {
        let master = try HDNode(extendedKey: OracleTests.tprv)
        let v0 = try OracleTests.embitPSBT(Array(OracleTests.allKinds.prefix(3)), seed: 370)
        var v2 = try Self.versionTwo(v0)
        #expect(v2.version == 2)
        #expect(try v2.unsignedTransaction() == (try v0.unsignedTransaction()))
        var signed0 = v0
        try signed0.sign(with: HDKeySource(master: master))
        try signed0.finalize()
        try v2.sign(with: HDKeySource(master: master))
        try v2.finalize()
        #expect(try v2.extractTransaction() == (try signed0.extractTransaction()))
        // Finalizing keeps BIP370's transaction fields.
        #expect(v2.inputs.allSatisfy { $0.contains(PSBTInputType.previousTxid) && $0.contains(PSBTInputType.outputIndex) })
    }

    @Test("taproot in a v2 PSBT: the Schnorr signature checks against the output key")
    func taproot() throws {
        let master = try HDNode(extendedKey: OracleTests.tprv)
        var v2 = try Self.versionTwo(try OracleTests.embitPSBT([OracleTests.allKinds[3], OracleTests.allKinds[2]], seed: 371))
        try v2.sign(with: HDKeySource(master: master))
        let checked = try #require(try PSBTOracle.run("verify", ["psbt": try Self.versionZero(v2).base64])["inputs"] as? [[String: Any]])
        #expect(checked.allSatisfy { $0["valid"] as? Bool == true && $0["signatures"] as? Int == 1 })
    }

    /// Back to version 0 (embit 0.8.0 reads v0 only): the global transaction, without the v2 fields.
    static func versionZero(_ v2: PSBT) throws -> PSBT {
        var v0 = try PSBT(unsignedTransaction: try v2.unsignedTransaction())
        v0.inputs = v2.inputs.map { PSBTMap(fields: $0.fields.filter { !PSBTValidation.v2Input.contains($0.type) }) }
        v0.outputs = v2.outputs.map { PSBTMap(fields: $0.fields.filter { !PSBTValidation.v2Output.contains($0.type) }) }
        return v0
    }

    @Test("signing updates PSBT_GLOBAL_TX_MODIFIABLE as BIP370's signer must")
    func modifiableFlags() throws {
        let master = try HDNode(extendedKey: OracleTests.tprv)
        for (type, before, after): (SighashType?, UInt8?, UInt8?) in [(nil, 0x03, 0x00), (.singleAnyoneCanPay, 0x03, 0x05), (.noneAnyoneCanPay, 0x03, 0x03),
                                                                    (.single, nil, 0x04), (nil, nil, nil)] {
            var psbt = try Self.versionTwo(try OracleTests.embitPSBT([OracleTests.allKinds[2]], sighash: type, seed: 372))
            if let before { psbt.global.set(PSBTGlobalType.txModifiable, value: [before]) }
            try psbt.sign(with: HDKeySource(master: master))
            #expect(psbt.global.value(PSBTGlobalType.txModifiable) == after.map { [$0] }, "\(type.map { "\($0)" } ?? "ALL")")
        }
    }
}
