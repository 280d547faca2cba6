import KeyhostCrypto
import Testing
@testable import KeyhostBitcoin

/// The finalizer verifies every signature it uses, so a bad one is caught with its input named.
@Suite("PSBT finalizer")
struct FinalizerTests {
    static func signed() throws -> PSBT {
        var psbt = try OracleTests.embitPSBT([OracleTests.allKinds[2], OracleTests.allKinds[3]], seed: 99)
        try psbt.sign(with: HDKeySource(master: HDNode(extendedKey: OracleTests.tprv)))
        return psbt
    }

    @Test("a corrupt ECDSA or Schnorr signature, or one with another sighash byte, is refused naming the input")
    func corruptSignatures() throws {
        let good = try Self.signed()
        var copy = good
        try copy.finalize()

        var ecdsa = good
        let partial = try #require(ecdsa.inputs[0].fields.first { $0.type == PSBTInputType.partialSig })
        var bytes = partial.value
        bytes[bytes.count - 3] ^= 0x01  // inside s
        ecdsa.inputs[0].set(PSBTInputType.partialSig, keyData: partial.keyData, value: bytes)
        #expect { try ecdsa.finalize() } throws: { ($0 as? PSBTError)?.input == 0 && ($0 as? PSBTError)?.kind == .finalize }

        var retyped = good
        bytes = partial.value
        bytes[bytes.count - 1] = 0x02  // claims SIGHASH_NONE, signed as ALL
        retyped.inputs[0].set(PSBTInputType.partialSig, keyData: partial.keyData, value: bytes)
        #expect { try retyped.finalize() } throws: { ($0 as? PSBTError)?.message.contains("does not verify") == true }

        var schnorr = good
        var signature = try #require(schnorr.inputs[1].tapKeySignature)
        signature[10] ^= 0x80
        schnorr.inputs[1].set(PSBTInputType.tapKeySig, value: signature)
        #expect { try schnorr.finalize() } throws: { ($0 as? PSBTError)?.input == 1 }

        // A 65-byte signature whose sighash byte is 0 (DEFAULT) is invalid under BIP341.
        var explicitDefault = good
        explicitDefault.inputs[1].set(PSBTInputType.tapKeySig, value: try #require(good.inputs[1].tapKeySignature) + [0x00])
        #expect(throws: PSBTError.self) { try explicitDefault.finalize() }
        // The failed attempts left the PSBTs unchanged.
        #expect(!ecdsa.inputs[0].isFinalized && !schnorr.inputs[1].isFinalized)
    }
}
