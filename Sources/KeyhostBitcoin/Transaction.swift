import KeyhostCrypto

/// A previous output being spent: the funding transaction's id (internal byte order, as hashed) and index.
public struct OutPoint: Hashable, Sendable {
    /// 32 bytes in the order the transaction hash comes out of SHA-256d (the reverse of how explorers show it).
    public var txid: [UInt8]
    public var index: UInt32

    public init(txid: [UInt8], index: UInt32) {
        self.txid = txid
        self.index = index
    }

    /// The id as explorers and Bitcoin Core print it (byte-reversed hex).
    public var displayTxid: String { Hex.encode(txid.reversed()) }
}

public struct TxInput: Equatable, Sendable {
    public var previousOutput: OutPoint
    public var scriptSig: [UInt8]
    public var sequence: UInt32
    /// Witness stack items; empty for an input without witness.
    public var witness: [[UInt8]]

    public init(previousOutput: OutPoint, scriptSig: [UInt8] = [], sequence: UInt32 = 0xffff_ffff, witness: [[UInt8]] = []) {
        self.previousOutput = previousOutput
        self.scriptSig = scriptSig
        self.sequence = sequence
        self.witness = witness
    }
}

public struct TxOutput: Equatable, Sendable {
    /// Satoshis.
    public var value: UInt64
    public var scriptPubKey: [UInt8]

    public init(value: UInt64, scriptPubKey: [UInt8]) {
        self.value = value
        self.scriptPubKey = scriptPubKey
    }

    public var serialized: [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(9 + scriptPubKey.count)
        out.appendUInt64(value)
        out.appendVarBytes(scriptPubKey)
        return out
    }
}

/// A Bitcoin transaction in the network serialization (BIP144 for witnesses).
public struct BitcoinTransaction: Equatable, Sendable {
    /// Largest transaction parsed: the 4 MWU block weight bounds any valid transaction's size.
    public static let maxSize = 4_000_000
    /// Satoshis that exist at most (21 million BTC); an amount above it is not Bitcoin.
    public static let maxMoney: UInt64 = 21_000_000 * 100_000_000

    public var version: UInt32
    public var inputs: [TxInput]
    public var outputs: [TxOutput]
    public var lockTime: UInt32

    public init(version: UInt32 = 2, inputs: [TxInput] = [], outputs: [TxOutput] = [], lockTime: UInt32 = 0) {
        self.version = version
        self.inputs = inputs
        self.outputs = outputs
        self.lockTime = lockTime
    }

    public var hasWitness: Bool { inputs.contains { !$0.witness.isEmpty } }

    /// The network serialization; with witnesses in BIP144 form when `witness` is true and any input has one.
    public func serialized(witness: Bool = true) -> [UInt8] {
        let segwit = witness && hasWitness
        var out = [UInt8]()
        out.appendUInt32(version)
        if segwit { out.append(contentsOf: [0x00, 0x01]) }
        out.appendCompactSize(inputs.count)
        for input in inputs {
            out.append(contentsOf: input.previousOutput.txid)
            out.appendUInt32(input.previousOutput.index)
            out.appendVarBytes(input.scriptSig)
            out.appendUInt32(input.sequence)
        }
        out.appendCompactSize(outputs.count)
        for output in outputs { out.append(contentsOf: output.serialized) }
        if segwit {
            for input in inputs {
                out.appendCompactSize(input.witness.count)
                for item in input.witness { out.appendVarBytes(item) }
            }
        }
        out.appendUInt32(lockTime)
        return out
    }

    /// The transaction id in internal byte order (SHA-256d of the serialization without witnesses).
    public var txid: [UInt8] { Hash.sha256d(serialized(witness: false)) }

    /// The id as explorers print it.
    public var displayTxid: String { Hex.encode(txid.reversed()) }

    /// Virtual size in vbytes (BIP141 weight / 4, rounded up).
    public var virtualSize: Int {
        let base = serialized(witness: false).count
        let total = serialized(witness: true).count
        return (base * 3 + total + 3) / 4
    }

    /// Parses exactly one transaction filling `bytes`. `allowWitness` false reads the legacy form only,
    /// as BIP174 requires for PSBT_GLOBAL_UNSIGNED_TX (a 0x00 marker is then an input count of zero).
    public static func parse(_ bytes: [UInt8], allowWitness: Bool = true) throws -> BitcoinTransaction {
        guard bytes.count <= maxSize else {
            throw PSBTError(.invalidTransaction, "the transaction is \(bytes.count) bytes, above the \(maxSize)-byte limit")
        }
        var reader = ByteReader(bytes, what: "transaction", kind: .invalidTransaction)
        let tx = try parse(from: &reader, allowWitness: allowWitness)
        guard reader.isAtEnd else { throw reader.fail("\(reader.remaining) bytes follow the transaction") }
        return tx
    }

    static func parse(from reader: inout ByteReader, allowWitness: Bool) throws -> BitcoinTransaction {
        let version = try reader.uint32()
        var segwit = false
        // Each input takes at least 41 bytes and each output 9, which bounds the counts before allocating.
        var inputCount = try reader.compactSize(limit: UInt64(reader.remaining / 41 + 1))
        if allowWitness && inputCount == 0 {
            let flagAt = reader.offset
            let flag = try reader.byte()
            guard flag == 1 else { throw reader.fail("segwit marker 0x00 followed by flag \(flag), not 0x01", at: flagAt) }
            segwit = true
            inputCount = try reader.compactSize(limit: UInt64(reader.remaining / 41 + 1))
        }
        var inputs = [TxInput]()
        inputs.reserveCapacity(Int(inputCount))
        for _ in 0..<inputCount {
            let txid = try reader.bytes(32)
            let index = try reader.uint32()
            let script = try reader.varBytes()
            let sequence = try reader.uint32()
            inputs.append(TxInput(previousOutput: OutPoint(txid: txid, index: index), scriptSig: script, sequence: sequence))
        }
        let outputCount = try reader.compactSize(limit: UInt64(reader.remaining / 9 + 1))
        var outputs = [TxOutput]()
        outputs.reserveCapacity(Int(outputCount))
        for _ in 0..<outputCount {
            let valueAt = reader.offset
            let value = try reader.uint64()
            guard value <= maxMoney else { throw reader.fail("output amount \(value) sat is above 21 million BTC", at: valueAt) }
            outputs.append(TxOutput(value: value, scriptPubKey: try reader.varBytes()))
        }
        if segwit {
            for i in inputs.indices {
                let count = try reader.compactSize(limit: UInt64(reader.remaining))
                var stack = [[UInt8]]()
                for _ in 0..<count { stack.append(try reader.varBytes()) }
                inputs[i].witness = stack
            }
            guard inputs.contains(where: { !$0.witness.isEmpty }) else {
                throw reader.fail("segwit serialization with no witness data (BIP144 forbids the marker then)")
            }
        }
        let lockTime = try reader.uint32()
        return BitcoinTransaction(version: version, inputs: inputs, outputs: outputs, lockTime: lockTime)
    }
}
