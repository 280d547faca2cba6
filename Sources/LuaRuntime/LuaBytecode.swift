/// The header of a Lua 5.4 binary chunk as this build writes it (lundump.c's `checkHeader`).
/// Checked before Lua sees the bytes, so a chunk for another Lua version, word size or float
/// format is refused with a message that says which, not with a loader error or worse.
public enum LuaBytecode {
    /// ESC "Lua", version 5.4, official format, the conversion-check bytes.
    static let signature: [UInt8] = [0x1B, 0x4C, 0x75, 0x61]
    static let data: [UInt8] = [0x19, 0x93, 0x0D, 0x0A, 0x1A, 0x0A]
    /// Bytes before the chunk's first function.
    public static let headerSize = 31

    /// Throws unless `bytes` starts with the exact header of a Lua 5.4 chunk for this machine.
    public static func checkHeader(_ bytes: [UInt8]) throws {
        func fail(_ problem: String) -> LuaError { .syntax("bytecode: \(problem)") }
        guard bytes.count > headerSize else { throw fail("truncated: \(bytes.count) bytes is shorter than a Lua 5.4 chunk header") }
        guard Array(bytes[0..<4]) == signature else { throw fail("not a Lua binary chunk (it must start with ESC 'Lua')") }
        guard bytes[4] == 0x54 else {
            throw fail("made for Lua \(bytes[4] >> 4).\(bytes[4] & 0xF), not 5.4")
        }
        guard bytes[5] == 0 else { throw fail("not in the official Lua format (format byte \(bytes[5]))") }
        guard Array(bytes[6..<12]) == data else { throw fail("corrupted (the conversion check bytes differ)") }
        guard bytes[12] == 4, bytes[13] == 8, bytes[14] == 8 else {
            throw fail("made for other sizes (instruction \(bytes[12]), integer \(bytes[13]), float \(bytes[14]) bytes; this Lua uses 4, 8, 8)")
        }
        var integer: UInt64 = 0
        for i in 0..<8 { integer |= UInt64(bytes[15 + i]) << (8 * UInt64(i)) }
        guard integer == 0x5678 else { throw fail("made for a machine with another byte order") }
        var bits: UInt64 = 0
        for i in 0..<8 { bits |= UInt64(bytes[23 + i]) << (8 * UInt64(i)) }
        guard Double(bitPattern: bits) == 370.5 else { throw fail("made for a machine with another float format") }
    }
}
