import KeyhostRecord

/// The value forms card results use.
extension Record {
    /// Bytes, or null when absent.
    static func optional(_ bytes: [UInt8]?) -> Record { bytes.map { .bytes($0) } ?? .null }
    /// An integer, or null when absent.
    static func optional(_ number: Int?) -> Record { number.map { .integer(Int64($0)) } ?? .null }
    /// A list of integers (slot numbers, word indexes).
    static func integers(_ numbers: [Int]) -> Record { .array(numbers.map { .integer(Int64($0)) }) }
}
