import KeyhostRecord

/// The value forms card results use.
extension Record {
    /// A list of integers (slot numbers, word indexes).
    public static func integers(_ numbers: [Int]) -> Record { .array(numbers.map { .integer(Int64($0)) }) }
}
