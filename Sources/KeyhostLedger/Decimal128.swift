/// Decimal text of `high · 2^32 + low` for non-negative 64-bit sums: SQLite sums the two halves
/// of each value separately (its integers are signed 64-bit, a token value is unsigned 64-bit),
/// and the total can exceed 64 bits.
enum SplitSum {
    static func decimal(high: UInt64, low: UInt64) -> String {
        // (hi, lo) as a 128-bit number: high << 32 + low.
        var hi = high >> 32
        var lo = high << 32
        let (sum, carry) = lo.addingReportingOverflow(low)
        lo = sum
        if carry { hi += 1 }
        if hi == 0 { return String(lo) }
        var digits: [Character] = []
        while hi != 0 || lo != 0 {
            // Long division of the two words by 10.
            let qHi = hi / 10
            let rHi = hi % 10
            let (qLo, r) = UInt64(10).dividingFullWidth((rHi, lo))
            digits.append(Character(String(r)))
            hi = qHi
            lo = qLo
        }
        return String(digits.reversed())
    }
}
