import KeyhostCrypto
import Testing
@testable import KeyhostBitcoin

/// The test vectors of BIP174 (v0), BIP370 (v2) and BIP371 (taproot fields), from the BIPs' text.
@Suite("PSBT vectors")
struct PSBTVectorTests {
    static let bip174 = Vectors.cases("bip174.json")
    static let bip370 = Vectors.cases("bip370.json")
    static let bip371 = Vectors.cases("bip371.json")
    /// BIP174's signer example signs its P2SH-P2WSH input from witness_utxo alone, which keyhost refuses by default.
    static let bip174Policy = PSBTSigningOptions(allowWitnessUTXOOnly: true)

    @Test("invalid PSBTs are refused", arguments: (bip174 + bip370 + bip371).filter { $0.kind == "invalid" })
    func invalid(_ vector: VectorCase) {
        #expect(throws: PSBTError.self) { try PSBT.parse(hex(vector.hex)) }
    }

    @Test("valid PSBTs parse and serialize back to the same bytes", arguments: (bip174 + bip370 + bip371).filter { $0.kind != "invalid" })
    func roundTrip(_ vector: VectorCase) throws {
        let bytes = hex(vector.hex)
        let psbt = try PSBT.parse(bytes)
        #expect(psbt.serialized() == bytes)
        // The base64 form reads back to the same PSBT.
        #expect(try PSBT.parse(base64: psbt.base64) == psbt)
    }

    @Test("BIP370 lock time determination", arguments: bip370.filter { $0.kind == "timelock" })
    func lockTime(_ vector: VectorCase) throws {
        let psbt = try PSBT.parse(hex(vector.hex))
        if let expected = vector.locktime {
            #expect(try psbt.lockTime() == UInt32(expected))
        } else {
            #expect(throws: PSBTError.self) { try psbt.lockTime() }
        }
    }

    @Test("BIP174 signer checks: inconsistent inputs are refused", arguments: bip174.filter { $0.kind == "signer_fails" })
    func signerChecks(_ vector: VectorCase) throws {
        var psbt = try PSBT.parse(hex(vector.hex))
        let roles = try Vectors.roles()
        let master = try HDNode(extendedKey: roles.master_tprv)
        #expect(throws: PSBTError.self) { try psbt.sign(with: HDKeySource(master: master), options: PSBTSigningOptions(allowWitnessUTXOOnly: true)) }
    }

    @Test("BIP174 signers, finalizer and extractor reproduce the vectors byte for byte")
    func roles() throws {
        let roles = try Vectors.roles()
        let updated = try PSBT.parse(hex(roles.sighash_all))
        for (keys, expected) in [(roles.signer1_keys, roles.signer1), (roles.signer2_keys, roles.signer2)] {
            // BIP174's signatures are plain RFC 6979; keyhost grinds for a low R as Core does, unless told not to.
            var psbt = updated
            let source = PrivateKeySet(try keys.map { try PrivateKey.fromWIF($0, coin: .bitcoinTestnet).key })
            source.lowR = false
            let report = try psbt.sign(with: source, options: Self.bip174Policy)
            #expect(report.signatures.count == 2)
            #expect(hex(psbt.serialized()) == expected)
            // Ground, the same signatures where R was already low, and every one at most 70 bytes of DER.
            var ground = updated
            let grinding = PrivateKeySet(try keys.map { try PrivateKey.fromWIF($0, coin: .bitcoinTestnet).key })
            try ground.sign(with: grinding, options: Self.bip174Policy)
            for (plainInput, lowInput) in zip(psbt.inputs, ground.inputs) {
                for ((_, plain), (_, low)) in zip(plainInput.partialSignatures, lowInput.partialSignatures) {
                    #expect(low.count <= 71)
                    if plain.count <= 71 { #expect(low == plain) } else { #expect(low != plain) }
                }
            }
        }
        // Signing with all four keys at once gives what the combiner makes of the two halves.
        var all = updated
        let four = PrivateKeySet(try (roles.signer1_keys + roles.signer2_keys).map { try PrivateKey.fromWIF($0, coin: .bitcoinTestnet).key })
        four.lowR = false
        try all.sign(with: four, options: Self.bip174Policy)
        #expect(try all.finalizedHex() == roles.finalized)
        var combined = try PSBT.parse(hex(roles.combined))
        try combined.finalize()
        #expect(hex(combined.serialized()) == roles.finalized)
        #expect(hex(try combined.extractTransaction().serialized()) == roles.extracted)
    }

    @Test("the HD master signs the same as its WIF keys (origins matched by fingerprint)")
    func hdSigner() throws {
        let roles = try Vectors.roles()
        var psbt = try PSBT.parse(hex(roles.sighash_all))
        let master = try HDKeySource(master: HDNode(extendedKey: roles.master_tprv))
        master.lowR = false // BIP174's vectors are plain RFC 6979
        let report = try psbt.sign(with: master, options: Self.bip174Policy)
        #expect(report.signatures.count == 4)
        #expect(try psbt.finalizedHex() == roles.finalized)
    }

    @Test("BIP174 combiner: the two signers' PSBTs combine into the vector's, unknown pairs in key order")
    func combiner() throws {
        let roles = try Vectors.roles()
        var first = try PSBT.parse(hex(roles.signer1))
        try first.combine(try PSBT.parse(hex(roles.signer2)))
        #expect(hex(first.serialized()) == roles.combined)
        var unknown = try PSBT.parse(hex(roles.unknown_a))
        try unknown.combine(try PSBT.parse(hex(roles.unknown_b)))
        #expect(hex(unknown.serialized()) == roles.unknown_combined)
        // Another transaction does not combine.
        var other = try PSBT.parse(hex(roles.signer1))
        #expect(throws: PSBTError.self) { try other.combine(try PSBT.parse(hex(roles.unknown_a))) }
    }

    @Test("unknown key-value pairs are kept byte for byte")
    func unknownFields() throws {
        let roles = try Vectors.roles()
        for text in [roles.unknown_a, roles.unknown_b, roles.unknown_combined] {
            #expect(hex(try PSBT.parse(hex(text)).serialized()) == text)
        }
    }
}

extension PSBT {
    func finalizedHex() throws -> String {
        var copy = self
        try copy.finalize()
        return hex(copy.serialized())
    }
}
