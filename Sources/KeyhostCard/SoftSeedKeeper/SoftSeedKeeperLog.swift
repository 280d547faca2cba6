/// The applet's Logger: a ring of 100 seven-byte records. An operation writes a record when it starts and
/// rewrites that same (latest) record with its ids and result when it ends.
enum SoftSeedKeeperLog {
    static let records = 100
    static let ringSize = records * SeedKeeperLogEntry.size

    static func create(_ state: inout SoftSeedKeeperState, _ entry: SeedKeeperLogEntry) {
        write(&state, at: state.logHead, entry)
        state.logHead = (state.logHead + SeedKeeperLogEntry.size) % ringSize
        if state.logsTotal < 0x7FFF { state.logsTotal += 1 }
    }

    static func update(_ state: inout SoftSeedKeeperState, _ entry: SeedKeeperLogEntry) {
        write(&state, at: previous(state.logHead), entry)
    }

    static func previous(_ offset: Int) -> Int { offset >= SeedKeeperLogEntry.size ? offset - SeedKeeperLogEntry.size : ringSize - SeedKeeperLogEntry.size }

    static func write(_ state: inout SoftSeedKeeperState, at offset: Int, _ entry: SeedKeeperLogEntry) {
        state.logs.replaceSubrange(offset..<(offset + SeedKeeperLogEntry.size), with: entry.bytes)
    }

    static func record(_ state: SoftSeedKeeperState, at offset: Int) -> [UInt8] {
        Array(state.logs[offset..<(offset + SeedKeeperLogEntry.size)])
    }
}
