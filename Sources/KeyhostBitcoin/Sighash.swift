import KeyhostCrypto

/// A signature hash type: the byte (four in the preimage) that says which parts of the transaction a signature covers.
public struct SighashType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Taproot only: ALL, without a sighash byte on the signature.
    public static let `default` = SighashType(rawValue: 0)
    public static let all = SighashType(rawValue: 1)
    public static let none = SighashType(rawValue: 2)
    public static let single = SighashType(rawValue: 3)
    public static let anyoneCanPayFlag: UInt32 = 0x80
    public static let allAnyoneCanPay = SighashType(rawValue: 0x81)
    public static let noneAnyoneCanPay = SighashType(rawValue: 0x82)
    public static let singleAnyoneCanPay = SighashType(rawValue: 0x83)

    /// The standard types, as signers offer them (DEFAULT is added for taproot).
    public static let standard: [SighashType] = [.all, .none, .single, .allAnyoneCanPay, .noneAnyoneCanPay, .singleAnyoneCanPay]

    public var anyoneCanPay: Bool { rawValue & SighashType.anyoneCanPayFlag != 0 }
    /// ALL, NONE or SINGLE as the legacy and BIP143 algorithms read it (the low five bits).
    var legacyBase: UInt32 { rawValue & 0x1f }

    public init?(name: String) {
        let upper = name.uppercased().replacingUnderscores()
        let names: [String: UInt32] = ["DEFAULT": 0, "ALL": 1, "NONE": 2, "SINGLE": 3, "ALL|ANYONECANPAY": 0x81,
                                       "NONE|ANYONECANPAY": 0x82, "SINGLE|ANYONECANPAY": 0x83]
        guard let raw = names[upper] else { return nil }
        rawValue = raw
    }

    public var description: String {
        switch rawValue {
        case 0: return "DEFAULT"
        case 1: return "ALL"
        case 2: return "NONE"
        case 3: return "SINGLE"
        case 0x81: return "ALL|ANYONECANPAY"
        case 0x82: return "NONE|ANYONECANPAY"
        case 0x83: return "SINGLE|ANYONECANPAY"
        default: return "0x\(String(rawValue, radix: 16))"
        }
    }
}

private extension String {
    func replacingUnderscores() -> String {
        String(map { $0 == "_" || $0 == "+" ? "|" : $0 })
    }
}

/// Computes signature hashes for one transaction. The parts every input's BIP143 and BIP341 hash share
/// (hashPrevouts, hashSequence, hashOutputs and their single-SHA256 taproot forms) are computed once, on
/// first use, so signing n inputs costs O(n) hashing rather than O(n²).
public final class SighashCache {
    public let transaction: BitcoinTransaction
    /// The outputs each input spends, in input order; BIP341 needs all of them.
    public let spentOutputs: [TxOutput]?

    public init(transaction: BitcoinTransaction, spentOutputs: [TxOutput]? = nil) {
        self.transaction = transaction
        self.spentOutputs = spentOutputs
    }

    // MARK: Shared parts

    private lazy var prevoutsBytes: [UInt8] = {
        var out = [UInt8]()
        out.reserveCapacity(36 * transaction.inputs.count)
        for input in transaction.inputs { out.append(contentsOf: input.previousOutput.txid); out.appendUInt32(input.previousOutput.index) }
        return out
    }()
    private lazy var sequencesBytes: [UInt8] = {
        var out = [UInt8]()
        for input in transaction.inputs { out.appendUInt32(input.sequence) }
        return out
    }()
    private lazy var outputsBytes: [UInt8] = {
        var out = [UInt8]()
        for output in transaction.outputs { out.append(contentsOf: output.serialized) }
        return out
    }()
    private lazy var shaPrevouts = Hash.sha256(prevoutsBytes)
    private lazy var shaSequences = Hash.sha256(sequencesBytes)
    private lazy var shaOutputs = Hash.sha256(outputsBytes)
    // BIP143's are the double hashes of the same bytes.
    private lazy var hashPrevouts = Hash.sha256(shaPrevouts)
    private lazy var hashSequence = Hash.sha256(shaSequences)
    private lazy var hashOutputs = Hash.sha256(shaOutputs)
    private lazy var shaAmounts: [UInt8] = {
        var out = [UInt8]()
        for output in spentOutputs ?? [] { out.appendUInt64(output.value) }
        return Hash.sha256(out)
    }()
    private lazy var shaScriptPubKeys: [UInt8] = {
        var out = [UInt8]()
        for output in spentOutputs ?? [] { out.appendVarBytes(output.scriptPubKey) }
        return Hash.sha256(out)
    }()

    private func checkIndex(_ index: Int) throws {
        guard index >= 0, index < transaction.inputs.count else {
            throw PSBTError(.signing, "input index \(index) is outside the transaction's \(transaction.inputs.count) inputs")
        }
    }

    // MARK: Legacy

    /// The original algorithm (pre-segwit), with its quirks: SINGLE without a matching output signs the number 1.
    public func legacy(input index: Int, scriptCode: [UInt8], type: SighashType) throws -> [UInt8] {
        try checkIndex(index)
        let tx = transaction
        let base = type.legacyBase
        if base == SighashType.single.rawValue, index >= tx.outputs.count {
            return [1] + [UInt8](repeating: 0, count: 31)
        }
        var out = [UInt8]()
        out.appendUInt32(tx.version)
        let code = Script.removingCodeSeparators(scriptCode)
        let inputIndexes = type.anyoneCanPay ? [index] : Array(tx.inputs.indices)
        out.appendCompactSize(inputIndexes.count)
        for i in inputIndexes {
            let input = tx.inputs[i]
            out.append(contentsOf: input.previousOutput.txid)
            out.appendUInt32(input.previousOutput.index)
            out.appendVarBytes(i == index ? code : [])
            let zeroSequence = i != index && (base == SighashType.none.rawValue || base == SighashType.single.rawValue)
            out.appendUInt32(zeroSequence ? 0 : input.sequence)
        }
        switch base {
        case SighashType.none.rawValue:
            out.appendCompactSize(0)
        case SighashType.single.rawValue:
            out.appendCompactSize(index + 1)
            for _ in 0..<index { out.appendUInt64(UInt64.max); out.appendCompactSize(0) }
            out.append(contentsOf: tx.outputs[index].serialized)
        default:
            out.appendCompactSize(tx.outputs.count)
            out.append(contentsOf: outputsBytes)
        }
        out.appendUInt32(tx.lockTime)
        out.appendUInt32(type.rawValue)
        return Hash.sha256d(out)
    }

    // MARK: BIP143

    /// Segwit version 0: commits to the amount spent, and hashes shared parts once.
    public func segwitV0(input index: Int, scriptCode: [UInt8], amount: UInt64, type: SighashType) throws -> [UInt8] {
        try checkIndex(index)
        let tx = transaction
        let base = type.legacyBase
        let zero = [UInt8](repeating: 0, count: 32)
        var out = [UInt8]()
        out.reserveCapacity(160 + scriptCode.count)
        out.appendUInt32(tx.version)
        out.append(contentsOf: type.anyoneCanPay ? zero : hashPrevouts)
        let sequenceCommitted = !type.anyoneCanPay && base != SighashType.single.rawValue && base != SighashType.none.rawValue
        out.append(contentsOf: sequenceCommitted ? hashSequence : zero)
        let input = tx.inputs[index]
        out.append(contentsOf: input.previousOutput.txid)
        out.appendUInt32(input.previousOutput.index)
        out.appendVarBytes(scriptCode)
        out.appendUInt64(amount)
        out.appendUInt32(input.sequence)
        if base != SighashType.single.rawValue && base != SighashType.none.rawValue {
            out.append(contentsOf: hashOutputs)
        } else if base == SighashType.single.rawValue && index < tx.outputs.count {
            out.append(contentsOf: Hash.sha256d(tx.outputs[index].serialized))
        } else {
            out.append(contentsOf: zero)
        }
        out.appendUInt32(tx.lockTime)
        out.appendUInt32(type.rawValue)
        return Hash.sha256d(out)
    }

    // MARK: BIP341

    /// Taproot key-path signature hash (no annex, no script path).
    public func taproot(input index: Int, type: SighashType) throws -> [UInt8] {
        try checkIndex(index)
        let tx = transaction
        guard [0x00, 0x01, 0x02, 0x03, 0x81, 0x82, 0x83].contains(type.rawValue) else {
            throw PSBTError(.signing, "sighash type \(type) is not valid for taproot (DEFAULT, ALL, NONE, SINGLE, optionally |ANYONECANPAY)", input: index)
        }
        guard let spent = spentOutputs, spent.count == tx.inputs.count else {
            throw PSBTError(.signing, "a taproot signature hash needs the output every input spends (witness_utxo or non_witness_utxo on each input)", input: index)
        }
        let outputType = type.rawValue & 3
        var msg: [UInt8] = [0x00, UInt8(type.rawValue)]
        msg.reserveCapacity(210)
        msg.appendUInt32(tx.version)
        msg.appendUInt32(tx.lockTime)
        if !type.anyoneCanPay {
            msg.append(contentsOf: shaPrevouts)
            msg.append(contentsOf: shaAmounts)
            msg.append(contentsOf: shaScriptPubKeys)
            msg.append(contentsOf: shaSequences)
        }
        if outputType != SighashType.none.rawValue && outputType != SighashType.single.rawValue {
            msg.append(contentsOf: shaOutputs)
        }
        msg.append(0x00)  // spend type: key path, no annex
        if type.anyoneCanPay {
            let input = tx.inputs[index]
            msg.append(contentsOf: input.previousOutput.txid)
            msg.appendUInt32(input.previousOutput.index)
            msg.appendUInt64(spent[index].value)
            msg.appendVarBytes(spent[index].scriptPubKey)
            msg.appendUInt32(input.sequence)
        } else {
            msg.appendUInt32(UInt32(index))
        }
        if outputType == SighashType.single.rawValue {
            guard index < tx.outputs.count else {
                throw PSBTError(.signing, "SIGHASH_SINGLE needs an output at the input's index \(index); the transaction has \(tx.outputs.count)", input: index)
            }
            msg.append(contentsOf: Hash.sha256(tx.outputs[index].serialized))
        }
        return Hash.tagged("TapSighash", msg)
    }
}

extension Script {
    /// The script without its OP_CODESEPARATORs, as legacy signature hashes serialize the script code.
    /// Reading stops at a truncated push, and what follows is kept as it is (Bitcoin Core does the same).
    static func removingCodeSeparators(_ script: [UInt8]) -> [UInt8] {
        guard script.contains(0xab) else { return script }
        var out = [UInt8]()
        var i = 0
        while i < script.count {
            let opcode = script[i]
            var size = 1
            var dataLength = 0
            switch opcode {
            case 0x01...0x4b: dataLength = Int(opcode)
            case 0x4c: guard i + 1 < script.count else { out.append(contentsOf: script[i...]); return out }
                dataLength = Int(script[i + 1]); size = 2
            case 0x4d: guard i + 2 < script.count else { out.append(contentsOf: script[i...]); return out }
                dataLength = Int(script[i + 1]) | Int(script[i + 2]) << 8; size = 3
            case 0x4e: guard i + 4 < script.count else { out.append(contentsOf: script[i...]); return out }
                dataLength = Int(script[i + 1]) | Int(script[i + 2]) << 8 | Int(script[i + 3]) << 16 | Int(script[i + 4]) << 24; size = 5
            default: break
            }
            let end = i + size + dataLength
            guard end <= script.count else { out.append(contentsOf: script[i...]); return out }
            if opcode != 0xab { out.append(contentsOf: script[i..<end]) }
            i = end
        }
        return out
    }
}
