/// Why bytes are not the CBOR the tap protocol allows.
public enum CKTapCBORError: Error, Equatable, CustomStringConvertible {
    /// The input ends inside an item.
    case truncated(offset: Int)
    /// Bytes are left after the one top-level item.
    case trailingBytes(offset: Int)
    /// Major type 6 (tags), 7 other than false/true/null, indefinite lengths or reserved additional info.
    case unsupported(offset: Int, initialByte: UInt8)
    /// Arrays and maps nested deeper than the limit.
    case tooDeep(limit: Int)
    /// More items, or a longer string, than the limit allows.
    case tooLarge(what: String, limit: Int)
    /// A text string that is not UTF-8.
    case invalidText(offset: Int)
    /// Input longer than the decoder accepts at all.
    case inputTooLong(Int, limit: Int)

    public var description: String {
        switch self {
        case .truncated(let o): return "CBOR ends inside an item at byte \(o)"
        case .trailingBytes(let o): return "CBOR has bytes after its item, from byte \(o)"
        case .unsupported(let o, let b): return "CBOR item at byte \(o) (initial byte 0x\(String(b, radix: 16))) is of a kind the tap protocol never uses"
        case .tooDeep(let limit): return "CBOR nests deeper than \(limit) levels"
        case .tooLarge(let what, let limit): return "CBOR \(what) exceeds the limit of \(limit)"
        case .invalidText(let o): return "CBOR text string at byte \(o) is not UTF-8"
        case .inputTooLong(let n, let limit): return "CBOR input of \(n) bytes exceeds the limit of \(limit)"
        }
    }
}
