import KeyhostCrypto

/// The SeedKeeper client: the session Satochip shares with it (SELECT, GET STATUS, secure channel, PIN, label,
/// authenticity, through `session`) and SeedKeeper's own commands, over any `CardChannel`.
public final class SeedKeeperCommandSet {
    /// The shared Satochip-family session, selecting the SeedKeeper AID.
    public let session: SatochipCommandSet

    /// Most headers a listing reads (the applet's 4 KiB of memory holds far fewer) and most log answers read.
    static let maxListed = 512
    static let maxLogAnswers = 100
    /// Largest secret an export accepts (the applet's whole secret memory is 4 KiB).
    static let maxSecretSize = 4096

    public init(channel: CardChannel, random: RandomSource = SystemRandom()) {
        session = SatochipCommandSet(channel: channel, random: random, aid: SeedKeeper.aid)
    }

    /// SELECT the SeedKeeper applet, then GET STATUS.
    @discardableResult
    public func select() throws -> SatochipStatus {
        do { return try session.select() } catch SatochipError.notSatochip(let sw) { throw SeedKeeperError.notSeedKeeper(sw) }
    }

    /// Sends a SeedKeeper instruction; any status but 9000 throws the mapped error (`id` names the secret in it).
    @discardableResult
    func send(_ ins: SeedKeeperInstruction, p1: UInt8 = 0, p2: UInt8 = 0, data: [UInt8] = [], id: UInt16 = 0) throws -> [UInt8] {
        let response = try session.exchange(ins.rawValue, p1: p1, p2: p2, data: data)
        if let error = SeedKeeperError.from(response.statusWord, instruction: ins, id: id) { throw error }
        return response.data
    }

    static func checkLabel(_ label: String) throws -> [UInt8] {
        let bytes = Array(label.utf8)
        guard bytes.count <= SeedKeeper.maxLabelLength else {
            throw SeedKeeperError.invalidArgument("a secret label is at most \(SeedKeeper.maxLabelLength) bytes of UTF-8, this one has \(bytes.count)")
        }
        return bytes
    }

    /// GET SEEDKEEPER STATUS (needs the PIN).
    public func seedKeeperStatus() throws -> SeedKeeperStatus {
        try SeedKeeperStatus(parsing: try send(.getSeedKeeperStatus))
    }

    /// LIST SECRET HEADERS (needs the PIN): every secret's header, in the card's order (newest first).
    public func listSecretHeaders() throws -> [SeedKeeperSecretHeader] {
        var headers: [SeedKeeperSecretHeader] = []
        var p2 = SeedKeeper.opInit
        while true {
            let response = try session.exchange(SeedKeeperInstruction.listSecretHeaders.rawValue, p2: p2)
            if response.statusWord.rawValue == 0x9C12 { return headers }  // no more secrets
            if let error = SeedKeeperError.from(response.statusWord, instruction: .listSecretHeaders) { throw error }
            headers.append(try SeedKeeperSecretHeader(parsing: response.data, instruction: .listSecretHeaders, exact: true))
            guard headers.count <= Self.maxListed else {
                throw SeedKeeperError.invalidResponse(.listSecretHeaders, "more than \(Self.maxListed) secrets listed")
            }
            p2 = SeedKeeper.opProcess
        }
    }

    /// GENERATE MASTERSEED (needs the PIN): a random seed of `size` bytes made on the card; returns its id and
    /// fingerprint (of `[size | seed]`, the secret's stored form).
    public func generateMasterSeed(size: Int, exportRights: SeedKeeperExportRights, label: String) throws -> (id: UInt16, fingerprint: [UInt8]) {
        guard SeedKeeper.masterSeedSizes.contains(size) else {
            throw SeedKeeperError.invalidArgument("a master seed is 16 to 64 bytes, not \(size)")
        }
        let labelBytes = try Self.checkLabel(label)
        let data = try send(.generateMasterSeed, p1: UInt8(size), p2: exportRights.rawValue, data: [UInt8(labelBytes.count)] + labelBytes)
        guard data.count == 6 else { throw SeedKeeperError.invalidResponse(.generateMasterSeed, "\(data.count) bytes, 6 expected") }
        return (UInt16(data[0]) << 8 | UInt16(data[1]), Array(data[2..<6]))
    }

    /// RESET SECRET (needs the PIN): deletes the secret `id`; `.secretNotFound` when there is none.
    public func resetSecret(id: UInt16) throws {
        try send(.resetSecret, data: [UInt8(id >> 8), UInt8(id & 0xFF)], id: id)
    }

    /// PRINT LOGS (needs the PIN): the card's log records, newest first, read as pysatochip does; the applet walks
    /// its whole ring, so only the first min(total, available) records are kept (the rest were never written).
    public func logs() throws -> SeedKeeperLogs {
        let first = try send(.printLogs, p2: SeedKeeper.opInit)
        guard first.count == 4 || first.count == 4 + SeedKeeperLogEntry.size else {
            throw SeedKeeperError.invalidResponse(.printLogs, "first answer of \(first.count) bytes, 4 or 11 expected")
        }
        let total = Int(first[0]) << 8 | Int(first[1]), available = Int(first[2]) << 8 | Int(first[3])
        var entries: [SeedKeeperLogEntry] = first.count > 4 ? [SeedKeeperLogEntry(first[4...])] : []
        for _ in 0..<Self.maxLogAnswers {
            let data = try send(.printLogs, p2: SeedKeeper.opProcess)
            if data.isEmpty {
                return SeedKeeperLogs(total: total, available: available, entries: Array(entries.prefix(min(total, available))))
            }
            guard data.count % SeedKeeperLogEntry.size == 0, data.count <= 256 else {
                throw SeedKeeperError.invalidResponse(.printLogs, "\(data.count) bytes is not a whole number of 7-byte records")
            }
            for start in stride(from: 0, to: data.count, by: SeedKeeperLogEntry.size) {
                entries.append(SeedKeeperLogEntry(data[start..<(start + SeedKeeperLogEntry.size)]))
            }
        }
        throw SeedKeeperError.invalidResponse(.printLogs, "the log did not end after \(Self.maxLogAnswers) answers")
    }
}
