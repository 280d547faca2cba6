/// A transaction that cannot be built, signed or decoded; `field` uses the snake_case names of TX.json and Lua.
public enum TransactionError: Error, Equatable, CustomStringConvertible {
    case field(String, String)
    /// A name that is not a field, usually a typo (`gasLimit` for `gas`).
    case unknownField(String, known: [String])
    /// The transaction given is not an object (an array, a string…).
    case notAnObject(String)
    case unsigned
    case highS
    case badSignature(String)
    case decode(String)
    case rlp(RLPError)

    /// Machine-readable kind, as `--json` and Lua's structured errors report it.
    public var kind: String { "invalid_transaction" }

    /// The snake_case field the error is about, when there is one.
    public var fieldName: String? {
        switch self {
        case .field(let name, _), .unknownField(let name, _): return name
        default: return nil
        }
    }

    /// Where decoding stopped in a raw transaction, when RLP was the problem.
    public var offset: Int? { if case .rlp(let error) = self { return error.offset } else { return nil } }

    public var description: String {
        switch self {
        case .field(let name, let problem): return "transaction field '\(name)' \(problem)"
        case .unknownField(let name, let known):
            return "unknown transaction field '\(name)'; the fields are \(known.joined(separator: ", "))"
        case .notAnObject(let kind): return "a transaction is an object with named fields (chain_id, nonce, …), got \(kind)"
        case .unsigned: return "the transaction is not signed; sign it first"
        case .highS: return "the signature's s is in the upper half of the curve order, which Ethereum rejects since Homestead (EIP-2)"
        case .badSignature(let detail): return "the transaction's signature is invalid: \(detail)"
        case .decode(let detail): return "invalid raw transaction: \(detail)"
        case .rlp(let error): return "invalid raw transaction: \(error)"
        }
    }
}
