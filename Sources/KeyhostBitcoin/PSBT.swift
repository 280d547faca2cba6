import KeyhostCrypto

/// A Partially Signed Bitcoin Transaction, version 0 (BIP174) or 2 (BIP370), with BIP371 taproot fields.
///
/// The maps keep every pair as read, in order, so `serialized()` of a parsed PSBT gives back its bytes
/// exactly (unknown and proprietary pairs included). Known pairs are checked on parse, as BIP174 asks
/// of every role; typed accessors (`PSBTMap+Input.swift`) read them on demand.
public struct PSBT: Equatable, Sendable {
    /// "psbt" followed by 0xff.
    public static let magic: [UInt8] = [0x70, 0x73, 0x62, 0x74, 0xff]
    /// Largest PSBT read by default: room for a full-block transaction and its previous transactions.
    public static let defaultMaxSize = 32 << 20

    public var version: UInt32
    public var global: PSBTMap
    public var inputs: [PSBTMap]
    public var outputs: [PSBTMap]

    public init(version: UInt32, global: PSBTMap, inputs: [PSBTMap], outputs: [PSBTMap]) {
        self.version = version
        self.global = global
        self.inputs = inputs
        self.outputs = outputs
    }

    /// A version 0 PSBT for an unsigned transaction (scriptSigs and witnesses must be empty).
    public init(unsignedTransaction tx: BitcoinTransaction) throws {
        guard tx.inputs.allSatisfy({ $0.scriptSig.isEmpty && $0.witness.isEmpty }) else {
            throw PSBTError.invalid("a PSBT's unsigned transaction must have empty scriptSigs and witnesses")
        }
        version = 0
        global = PSBTMap(fields: [PSBTField(type: PSBTGlobalType.unsignedTx, value: tx.serialized(witness: false))])
        inputs = Array(repeating: PSBTMap(), count: tx.inputs.count)
        outputs = Array(repeating: PSBTMap(), count: tx.outputs.count)
    }

    // MARK: - Reading

    /// Reads a PSBT given as binary (starting with the magic) or as base64 text (surrounding whitespace allowed).
    public static func parse(data: [UInt8], maxSize: Int = defaultMaxSize) throws -> PSBT {
        if data.starts(with: magic) { return try parse(data, maxSize: maxSize) }
        // Base64 takes 4 characters per 3 bytes; check the limit before decoding.
        guard data.count <= maxSize / 3 * 4 + 8 else {
            throw PSBTError.invalid("the PSBT text is \(data.count) bytes, above the \(maxSize)-byte limit; pass a smaller PSBT")
        }
        guard let bytes = Base64.decode(data) else {
            throw PSBTError.invalid("not a PSBT: neither binary (starting with 'psbt' 0xff) nor base64 text")
        }
        return try parse(bytes, maxSize: maxSize)
    }

    public static func parse(base64 text: String, maxSize: Int = defaultMaxSize) throws -> PSBT {
        try parse(data: Array(text.utf8), maxSize: maxSize)
    }

    /// Reads a binary PSBT, checking it against BIP174/370/371 before returning it.
    public static func parse(_ bytes: [UInt8], maxSize: Int = defaultMaxSize) throws -> PSBT {
        guard bytes.count <= maxSize else {
            throw PSBTError.invalid("the PSBT is \(bytes.count) bytes, above the \(maxSize)-byte limit")
        }
        guard bytes.starts(with: magic) else {
            throw PSBTError.invalid("not a PSBT: it does not start with the magic bytes 'psbt' 0xff", at: 0)
        }
        var reader = ByteReader(bytes, offset: magic.count, what: "PSBT", kind: .invalidPSBT)
        let (global, _) = try readMap(&reader, scope: .global, version: nil)
        let versionValue = global.value(PSBTGlobalType.version)
        let version = versionValue.flatMap(LE.uint32) ?? 0
        guard version == 0 || version == 2 else {
            throw PSBTError.invalid("PSBT version \(version) is not supported (0 and 2 are)")
        }
        try PSBTValidation.checkGlobal(global, version: version)
        let inputCount: Int, outputCount: Int
        if version == 0 {
            guard let txBytes = global.value(PSBTGlobalType.unsignedTx) else {
                throw PSBTError.invalid("a version 0 PSBT needs PSBT_GLOBAL_UNSIGNED_TX (type 0x00)")
            }
            let tx = try BitcoinTransaction.parse(txBytes, allowWitness: false)
            inputCount = tx.inputs.count
            outputCount = tx.outputs.count
        } else {
            inputCount = try PSBTValidation.count(global, PSBTGlobalType.inputCount, "PSBT_GLOBAL_INPUT_COUNT")
            outputCount = try PSBTValidation.count(global, PSBTGlobalType.outputCount, "PSBT_GLOBAL_OUTPUT_COUNT")
        }
        // Each map ends in at least one byte, which bounds the counts before anything is allocated.
        guard inputCount + outputCount <= reader.remaining else {
            throw reader.fail("the PSBT ends early: \(inputCount) input and \(outputCount) output maps announced, \(reader.remaining) bytes left")
        }
        var inputs = [PSBTMap]()
        inputs.reserveCapacity(inputCount)
        for i in 0..<inputCount {
            let start = reader.offset
            let (map, _) = try readMap(&reader, scope: .input, version: version, index: i)
            do { try PSBTValidation.checkInput(map, version: version) } catch let error as PSBTError {
                throw error.located(input: i).atOffset(start)
            }
            inputs.append(map)
        }
        var outputs = [PSBTMap]()
        outputs.reserveCapacity(outputCount)
        for i in 0..<outputCount {
            let start = reader.offset
            let (map, _) = try readMap(&reader, scope: .output, version: version, index: i)
            do { try PSBTValidation.checkOutput(map, version: version) } catch let error as PSBTError {
                throw error.located(output: i).atOffset(start)
            }
            outputs.append(map)
        }
        guard reader.isAtEnd else { throw reader.fail("\(reader.remaining) bytes follow the last output map") }
        let psbt = PSBT(version: version, global: global, inputs: inputs, outputs: outputs)
        if version == 0 { try psbt.checkUTXOsMatchOutpoints() }
        return psbt
    }

    enum Scope: String { case global, input, output }

    private static func readMap(_ reader: inout ByteReader, scope: Scope, version: UInt32?, index: Int? = nil) throws -> (PSBTMap, Int) {
        var fields = [PSBTField]()
        var seen = Set<[UInt8]>()
        let place = index.map { "\(scope.rawValue) \($0)" } ?? "the global map"
        while true {
            let keyAt = reader.offset
            let keyLength = try reader.compactSize(limit: UInt64(reader.remaining))
            if keyLength == 0 { break }
            let key = try reader.bytes(Int(keyLength))
            let value = try reader.varBytes()
            guard seen.insert(key).inserted else {
                throw reader.fail("duplicate key \(Hex.encode(key)) in \(place); a key may appear once per map", at: keyAt)
            }
            do { fields.append(try PSBTField(key: key, value: value)) } catch let error as PSBTError {
                throw reader.fail("bad key type in \(place): \(error.message)", at: keyAt)
            }
        }
        return (PSBTMap(fields: fields), reader.offset)
    }

    // MARK: - Writing

    public func serialized() -> [UInt8] {
        var out = PSBT.magic
        global.serialize(into: &out)
        for map in inputs { map.serialize(into: &out) }
        for map in outputs { map.serialize(into: &out) }
        return out
    }

    public var base64: String { Base64.encode(serialized()) }

    // MARK: - The transaction

    /// The transaction being signed, without signatures: v0's global transaction, or v2's built from its fields.
    public func unsignedTransaction() throws -> BitcoinTransaction {
        if version == 0 {
            guard let bytes = global.value(PSBTGlobalType.unsignedTx) else { throw PSBTError.invalid("the PSBT has no unsigned transaction") }
            return try BitcoinTransaction.parse(bytes, allowWitness: false)
        }
        let txVersion = global.value(PSBTGlobalType.txVersion).flatMap(LE.uint32) ?? 2
        var tx = BitcoinTransaction(version: txVersion, lockTime: try lockTime())
        for (i, map) in inputs.enumerated() {
            guard let txid = map.value(PSBTInputType.previousTxid), let index = map.value(PSBTInputType.outputIndex).flatMap(LE.uint32) else {
                throw PSBTError(.invalidPSBT, "a version 2 input needs PSBT_IN_PREVIOUS_TXID and PSBT_IN_OUTPUT_INDEX", input: i)
            }
            let sequence = map.value(PSBTInputType.sequence).flatMap(LE.uint32) ?? 0xffff_ffff
            tx.inputs.append(TxInput(previousOutput: OutPoint(txid: txid, index: index), sequence: sequence))
        }
        for (i, map) in outputs.enumerated() {
            guard let amount = map.value(PSBTOutputType.amount).flatMap(LE.uint64), let script = map.value(PSBTOutputType.script) else {
                throw PSBTError(.invalidPSBT, "a version 2 output needs PSBT_OUT_AMOUNT and PSBT_OUT_SCRIPT", output: i)
            }
            tx.outputs.append(TxOutput(value: amount, scriptPubKey: script))
        }
        return tx
    }

    /// BIP370's lock time: the largest required height if every input with a requirement accepts heights,
    /// else the largest required time if all accept times, else the fallback (or 0) when none require one.
    public func lockTime() throws -> UInt32 {
        if version == 0 { return try unsignedTransaction().lockTime }
        var heightsPossible = true, timesPossible = true, anyRequirement = false
        var maxHeight: UInt32 = 0, maxTime: UInt32 = 0
        for map in inputs {
            let time = map.value(PSBTInputType.requiredTimeLocktime).flatMap(LE.uint32)
            let height = map.value(PSBTInputType.requiredHeightLocktime).flatMap(LE.uint32)
            if time == nil && height == nil { continue }
            anyRequirement = true
            if let time { maxTime = max(maxTime, time) } else { timesPossible = false }
            if let height { maxHeight = max(maxHeight, height) } else { heightsPossible = false }
        }
        if !anyRequirement { return global.value(PSBTGlobalType.fallbackLocktime).flatMap(LE.uint32) ?? 0 }
        if heightsPossible { return maxHeight }
        if timesPossible { return maxTime }
        throw PSBTError.invalid("no lock time satisfies every input: some require a block height and others a time")
    }

    /// BIP174: a non-witness UTXO must be the transaction the input spends from.
    func checkUTXOsMatchOutpoints() throws {
        let tx = try unsignedTransaction()
        for (i, map) in inputs.enumerated() {
            guard let utxo = map.value(PSBTInputType.nonWitnessUTXO) else { continue }
            let previous = try BitcoinTransaction.parse(utxo)
            guard previous.txid == tx.inputs[i].previousOutput.txid else {
                throw PSBTError(.invalidPSBT, "the non_witness_utxo is transaction \(previous.displayTxid), but the input spends from \(tx.inputs[i].previousOutput.displayTxid)", input: i)
            }
        }
    }
}

extension PSBTError {
    func atOffset(_ offset: Int) -> PSBTError {
        var copy = self
        if copy.offset == nil { copy.offset = offset }
        return copy
    }
}
