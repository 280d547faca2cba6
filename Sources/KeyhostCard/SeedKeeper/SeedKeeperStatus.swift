/// One record of the card's log: the instruction, up to two secret ids, and the status word it ended with
/// (0000 while it had not ended).
public struct SeedKeeperLogEntry: Equatable, Sendable {
    public let instruction: UInt8
    /// FFFF: none.
    public let id1: UInt16
    public let id2: UInt16
    public let result: UInt16

    static let size = 7

    init(_ bytes: ArraySlice<UInt8>) {
        let b = Array(bytes)
        instruction = b[0]
        id1 = UInt16(b[1]) << 8 | UInt16(b[2])
        id2 = UInt16(b[3]) << 8 | UInt16(b[4])
        result = UInt16(b[5]) << 8 | UInt16(b[6])
    }

    var bytes: [UInt8] {
        [instruction, UInt8(id1 >> 8), UInt8(id1 & 0xFF), UInt8(id2 >> 8), UInt8(id2 & 0xFF), UInt8(result >> 8), UInt8(result & 0xFF)]
    }

    public init(instruction: UInt8, id1: UInt16, id2: UInt16, result: UInt16) {
        self.instruction = instruction; self.id1 = id1; self.id2 = id2; self.result = result
    }
}

/// GET SEEDKEEPER STATUS: secrets stored, memory, log counters and the latest log record.
public struct SeedKeeperStatus: Equatable, Sendable {
    public let secretCount: Int
    public let totalMemory: Int
    public let freeMemory: Int
    public let logsTotal: Int
    public let logsAvailable: Int
    public let lastLog: SeedKeeperLogEntry

    /// Parses `[nb_secrets(2) | total(2) | free(2) | nb_logs_total(2) | nb_logs_avail(2) | last_log(7)]`.
    public init(parsing data: [UInt8]) throws {
        guard data.count >= 17, data.count <= 64 else {
            throw SeedKeeperError.invalidResponse(.getSeedKeeperStatus, "\(data.count) bytes, 17 expected")
        }
        func short(_ i: Int) -> Int { Int(data[i]) << 8 | Int(data[i + 1]) }
        secretCount = short(0); totalMemory = short(2); freeMemory = short(4)
        logsTotal = short(6); logsAvailable = short(8)
        lastLog = SeedKeeperLogEntry(data[10..<17])
    }
}

/// PRINT LOGS: the counters and the records, newest first.
public struct SeedKeeperLogs: Equatable, Sendable {
    public let total: Int
    public let available: Int
    public let entries: [SeedKeeperLogEntry]
}
