import KeyhostCrypto

/// Typed reads of the known fields. The maps were validated on parse, so these only fail on maps
/// built in memory with bad values; they return nil (absent) rather than trap.
extension PSBTMap {
    static func parseTxOut(_ value: [UInt8]) throws -> TxOutput {
        var reader = ByteReader(value, what: "witness UTXO", kind: .invalidPSBT)
        let amount = try reader.uint64()
        guard amount <= BitcoinTransaction.maxMoney else { throw reader.fail("witness UTXO amount \(amount) sat is above 21 million BTC", at: 0) }
        let script = try reader.varBytes()
        guard reader.isAtEnd else { throw reader.fail("\(reader.remaining) bytes follow the witness UTXO's script") }
        return TxOutput(value: amount, scriptPubKey: script)
    }

    static func parseWitness(_ value: [UInt8]) throws -> [[UInt8]] {
        var reader = ByteReader(value, what: "final script witness", kind: .invalidPSBT)
        let count = try reader.compactSize(limit: UInt64(reader.remaining))
        var stack = [[UInt8]]()
        for _ in 0..<count { stack.append(try reader.varBytes()) }
        guard reader.isAtEnd else { throw reader.fail("\(reader.remaining) bytes follow the witness stack") }
        return stack
    }

    static func serializeWitness(_ stack: [[UInt8]]) -> [UInt8] {
        var out = [UInt8]()
        out.appendCompactSize(stack.count)
        for item in stack { out.appendVarBytes(item) }
        return out
    }

    static func parseTapOrigin(_ value: [UInt8], _ name: String) throws -> TapKeyOrigin {
        var reader = ByteReader(value, what: name, kind: .invalidPSBT)
        let count = try reader.compactSize(limit: UInt64(reader.remaining / 32))
        var hashes = [[UInt8]]()
        for _ in 0..<count { hashes.append(try reader.bytes(32)) }
        let origin = try KeyOrigin(bytes: try reader.bytes(reader.remaining))
        return TapKeyOrigin(leafHashes: hashes, origin: origin)
    }

    // MARK: Input fields

    public var nonWitnessUTXO: BitcoinTransaction? {
        value(PSBTInputType.nonWitnessUTXO).flatMap { try? BitcoinTransaction.parse($0) }
    }

    public var witnessUTXO: TxOutput? { value(PSBTInputType.witnessUTXO).flatMap { try? PSBTMap.parseTxOut($0) } }

    public var sighashType: UInt32? { value(PSBTInputType.sighashType).flatMap(LE.uint32) }

    public var redeemScript: [UInt8]? { value(PSBTInputType.redeemScript) }
    public var witnessScript: [UInt8]? { value(PSBTInputType.witnessScript) }
    public var finalScriptSig: [UInt8]? { value(PSBTInputType.finalScriptSig) }
    public var finalScriptWitness: [[UInt8]]? { value(PSBTInputType.finalScriptWitness).flatMap { try? PSBTMap.parseWitness($0) } }
    public var isFinalized: Bool { contains(PSBTInputType.finalScriptSig) || contains(PSBTInputType.finalScriptWitness) }

    /// Partial signatures by public key (serialized as in the key), each DER + sighash byte.
    public var partialSignatures: [(publicKey: [UInt8], signature: [UInt8])] {
        fields(ofType: PSBTInputType.partialSig).map { ($0.keyData, $0.value) }
    }

    /// BIP32 derivations (input type 0x06 or output type 0x02) by public key.
    public func derivations(type: UInt64) -> [(publicKey: [UInt8], origin: KeyOrigin)] {
        fields(ofType: type).compactMap { field in (try? KeyOrigin(bytes: field.value)).map { (field.keyData, $0) } }
    }

    public func tapDerivations(type: UInt64) -> [(xOnlyKey: [UInt8], origin: TapKeyOrigin)] {
        fields(ofType: type).compactMap { field in (try? PSBTMap.parseTapOrigin(field.value, "")).map { (field.keyData, $0) } }
    }

    public var tapInternalKey: [UInt8]? { value(PSBTInputType.tapInternalKey) }
    public var tapMerkleRoot: [UInt8]? { value(PSBTInputType.tapMerkleRoot) }
    public var tapKeySignature: [UInt8]? { value(PSBTInputType.tapKeySig) }
}
