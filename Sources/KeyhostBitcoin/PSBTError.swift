import KeyhostRecord
/// Why a PSBT or transaction could not be read, signed, finalized or extracted.
///
/// `offset` is where in the binary PSBT (or transaction) reading stopped; `input`/`output` name the
/// map the problem is in, so a message can say "input 2's witness_utxo …".
public struct PSBTError: Error, Equatable, CustomStringConvertible, Sendable {
    public enum Kind: String, Sendable {
        /// Not a PSBT at all, or its bytes break BIP174/370/371 framing or field rules.
        case invalidPSBT = "invalid_psbt"
        /// A transaction inside (or extracted) does not parse.
        case invalidTransaction = "invalid_transaction"
        /// Signing refused: missing UTXO proof, mismatched key, forbidden sighash, unsupported script.
        case signing = "psbt_signing"
        /// Finalizing or extracting refused: signatures missing, script not understood.
        case finalize = "psbt_finalize"
    }

    public let kind: Kind
    public let message: String
    public var offset: Int?
    public var input: Int?
    public var output: Int?

    public init(_ kind: Kind, _ message: String, offset: Int? = nil, input: Int? = nil, output: Int? = nil) {
        self.kind = kind
        self.message = message
        self.offset = offset
        self.input = input
        self.output = output
    }

    static func invalid(_ message: String, at offset: Int? = nil) -> PSBTError { PSBTError(.invalidPSBT, message, offset: offset) }

    public var description: String {
        var where_ = [String]()
        if let input { where_.append("input \(input)") }
        if let output { where_.append("output \(output)") }
        var text = where_.isEmpty ? message : "\(where_.joined(separator: ", ")): \(message)"
        if let offset { text += " (at byte \(offset))" }
        return text
    }

    /// The same error located in input or output `index` (kept if already located).
    func located(input index: Int? = nil, output outIndex: Int? = nil) -> PSBTError {
        var copy = self
        if copy.input == nil { copy.input = index }
        if copy.output == nil { copy.output = outIndex }
        return copy
    }
}

extension PSBTError: StructuredError {
    public var errorKind: String { kind.rawValue }
    /// Where the problem is: `input` and `output` counted from 0 as in BIP174, `offset` into the PSBT's bytes.
    public var errorFields: [(String, Record)] {
        [("input", .integer(input)), ("output", .integer(output)), ("offset", .integer(offset))]
    }
}
