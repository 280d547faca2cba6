import KeyhostCrypto

/// SeedKeeper's secret commands: same checks in the same order, same status words, same log records.
extension SoftSeedKeeper {
    static let importIns = SeedKeeperInstruction.importSecret.rawValue
    static let exportIns = SeedKeeperInstruction.exportSecret.rawValue

    /// The applet's resetLockThenThrow: logs the failure against the locked operation, drops the lock (an
    /// import's half-made object stays when `destroy` is false, as on the card), and gives the error to throw.
    func resetLock(_ sw: UInt16, destroy: Bool = false) -> CardStatus {
        if let lock {
            if destroy { state.secrets.removeAll { $0.id == lock.id } }
            updateLog(lock.ins, lock.id, -1, sw)
        }
        lock = nil
        return fail(sw)
    }

    /// Free memory as the applet's allocator reports it: the free block less its 2-byte size field.
    var freeMemory: Int {
        let used = state.secrets.reduce(0) { $0 + $1.size + Self.objectOverhead }
        return max(0, state.memorySize - used - 2)
    }

    /// Creates an object of `size` bytes under the next free id, or throws 9C01 when it does not fit.
    func createObject(header: [UInt8], secret: [UInt8], size: Int) throws -> Int {
        guard size + Self.objectOverhead <= freeMemory + 2 else { throw fail(0x9C01) }
        while state.secrets.contains(where: { $0.id == state.nextID }) { state.nextID = (state.nextID + 1) & 0x7FFF }
        let id = state.nextID
        state.secrets.append(SoftSeedKeeperSecret(id: id, header: header, secret: secret, size: size))
        state.nextID = (state.nextID + 1) & 0x7FFF
        return id
    }

    func index(of id: Int) -> Int? { state.secrets.firstIndex { $0.id == id } }

    static func fingerprint(_ secret: [UInt8]) -> [UInt8] { Array(Hash.sha256(secret).prefix(4)) }

    func seedKeeperStatus() throws -> [UInt8] {
        try requirePIN()
        func short(_ v: Int) -> [UInt8] { [UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }
        let last = SoftSeedKeeperLog.record(state, at: SoftSeedKeeperLog.previous(state.logHead))
        return short(state.secrets.count) + short(state.memorySize) + short(freeMemory)
            + short(state.logsTotal) + short(SoftSeedKeeperLog.records) + last
    }

    func generateMasterSeed(_ apdu: CommandAPDU) throws -> [UInt8] {
        try requirePIN()
        log(apdu.ins, 0x0000)
        let size = Int(Int8(bitPattern: apdu.p1))
        guard SeedKeeper.masterSeedSizes.contains(size) else { throw fail(0x9C10) }
        let rights = apdu.p2 & 0x03
        guard let labelSize = apdu.data.first.map(Int.init), labelSize <= SeedKeeper.maxLabelLength else { throw fail(0x9C0F) }
        guard 1 + labelSize <= apdu.data.count else { throw fail(0x9C0F) }
        let seed = [UInt8(size)] + random.bytes(size)
        let header: [UInt8] = [0x10, 0x03, rights, 0, 0, 0] + Self.fingerprint(seed) + [0, 0, UInt8(labelSize)] + Array(apdu.data[1..<(1 + labelSize)])
        let id = try createObject(header: header, secret: seed, size: SoftSeedKeeperSecret.objectSize(header: header.count, secret: seed.count))
        updateLog(apdu.ins, id, -1, 0x9000)
        return [UInt8(id >> 8), UInt8(id & 0xFF)] + Array(header[6..<10])
    }

    func importSecret(_ apdu: CommandAPDU) throws -> [UInt8] {
        try requirePIN()
        let mode = apdu.p1
        guard mode == 0x01 || mode == 0x02 else { throw fail(0x9C0F) }
        let data = apdu.data
        switch apdu.p2 {
        case SeedKeeper.opInit:
            lock = nil
            log(apdu.ins, 0x0000)
            guard data.count >= SeedKeeper.headerSize else { throw fail(0x9C0F) }
            let labelSize = Int(data[12])
            guard labelSize <= SeedKeeper.maxLabelLength else { throw fail(0x9C0F) }
            guard data.count - SeedKeeper.headerSize >= labelSize else { throw fail(0x9C0F) }
            if mode == 0x02 { throw fail(0x9C05) }  // secure import is not emulated
            let rest = data.count - SeedKeeper.headerSize - labelSize
            guard rest >= 2 else { throw fail(0x9C0F) }
            let paddedSize = Int(data[SeedKeeper.headerSize + labelSize]) << 8 | Int(data[SeedKeeper.headerSize + labelSize + 1])
            guard paddedSize <= 0x7FFF - SeedKeeper.headerSize - labelSize else { throw fail(0x9C01) }
            // origin from the transport mode, counters and fingerprint zero until the secret is in.
            let header: [UInt8] = [data[0], mode, data[2] & 0x03, 0, 0, 0, 0, 0, 0, 0, data[10], data[11], UInt8(labelSize)]
                + Array(data[SeedKeeper.headerSize..<(SeedKeeper.headerSize + labelSize)])
            let allocated = header.count + paddedSize
            let id = try createObject(header: header, secret: [], size: allocated)
            lock = Lock(ins: apdu.ins, lastOp: SeedKeeper.opInit, id: id, data: [], allocated: allocated, exportedSoFar: [])
            return []
        case SeedKeeper.opProcess, SeedKeeper.opFinal:
            guard var current = lock, current.ins == Self.importIns,
                  current.lastOp == SeedKeeper.opInit || current.lastOp == SeedKeeper.opProcess else { throw resetLock(0x9C30, destroy: true) }
            var chunk: [UInt8] = []
            if data.count >= 2 || apdu.p2 == SeedKeeper.opProcess {
                guard data.count >= 2 else { throw resetLock(0x9C0F, destroy: true) }
                let size = Int(data[0]) << 8 | Int(data[1])
                guard data.count - 2 >= size else { throw resetLock(0x9C0F, destroy: true) }
                chunk = Array(data[2..<(2 + size)])
            }
            current.data += chunk
            guard let slot = index(of: current.id) else { throw resetLock(0x9C08, destroy: true) }
            let headerSize = state.secrets[slot].header.count
            if apdu.p2 == SeedKeeper.opProcess {
                // The card encrypts whole blocks as they come; what is stored so far must fit the allocation.
                guard headerSize + current.data.count - current.data.count % 16 <= current.allocated else { throw resetLock(0x9C32, destroy: true) }
                current.lastOp = SeedKeeper.opProcess
                state.secrets[slot].secret = current.data
                lock = current
                return []
            }
            let size = SoftSeedKeeperSecret.objectSize(header: headerSize, secret: current.data.count)
            guard size <= current.allocated else { throw resetLock(0x9C32, destroy: true) }
            let fingerprint = Self.fingerprint(current.data)
            state.secrets[slot].secret = current.data
            state.secrets[slot].size = size  // clampObject: the unused part goes back to the free memory
            state.secrets[slot].header.replaceSubrange(6..<10, with: fingerprint)
            updateLog(apdu.ins, current.id, -1, 0x9000)
            lock = nil
            return [UInt8(current.id >> 8), UInt8(current.id & 0xFF)] + fingerprint
        default:
            throw fail(0x9C11)
        }
    }

    func exportSecret(_ apdu: CommandAPDU) throws -> [UInt8] {
        try requirePIN()
        let mode = apdu.p1
        guard mode == 0x01 || mode == 0x02 else { throw fail(0x9C0F) }
        switch apdu.p2 {
        case SeedKeeper.opInit:
            lock = Lock(ins: apdu.ins, lastOp: SeedKeeper.opInit, id: -1, data: [], allocated: 0, exportedSoFar: [])
            log(apdu.ins, 0x0000)
            guard apdu.data.count >= 2 else { throw resetLock(0x9C0F) }
            let id = Int(apdu.data[0]) << 8 | Int(apdu.data[1])
            lock?.id = id
            if mode == 0x02 { throw resetLock(0x9C05) }  // secure export is not emulated
            guard let slot = index(of: id) else { throw resetLock(0x9C08) }
            guard state.secrets[slot].header[2] & 0x03 == 0x01 else { throw resetLock(0x9C31) }
            state.secrets[slot].header[3] &+= 1  // plain exports counter
            let secret = state.secrets[slot]
            lock?.data = secret.secret
            let answer = [UInt8(id >> 8), UInt8(id & 0xFF)] + secret.header
            lock?.exportedSoFar = answer  // what the signature covers, with the secret
            return answer
        case SeedKeeper.opProcess:
            guard var current = lock, current.ins == Self.exportIns,
                  current.lastOp == SeedKeeper.opInit || current.lastOp == SeedKeeper.opProcess else { throw resetLock(0x9C30) }
            guard index(of: current.id) != nil else { throw resetLock(0x9C08) }
            // The card stores the secret padded; it sends 128 stored bytes while more than 128 remain.
            let padded = current.data.count + 16 - current.data.count % 16
            if padded > SeedKeeper.chunkSize {
                let chunk = Array(current.data.prefix(SeedKeeper.chunkSize))
                current.data.removeFirst(SeedKeeper.chunkSize)
                current.exportedSoFar += chunk
                current.lastOp = SeedKeeper.opProcess
                lock = current
                return [UInt8(chunk.count >> 8), UInt8(chunk.count & 0xFF)] + chunk
            }
            let chunk = current.data
            let signature = try authentikeyPrivate().sign(digest: Hash.sha256(current.exportedSoFar + chunk)).der
            updateLog(apdu.ins, current.id, -1, 0x9000)
            lock = nil
            return [UInt8(chunk.count >> 8), UInt8(chunk.count & 0xFF)] + chunk + [0x00, UInt8(signature.count)] + signature
        default:
            throw fail(0x9C11)
        }
    }

    func resetSecret(_ apdu: CommandAPDU) throws -> [UInt8] {
        try requirePIN()
        log(apdu.ins, 0x0000)
        guard apdu.data.count >= 2 else { throw fail(0x9C0F) }
        let id = Int(apdu.data[0]) << 8 | Int(apdu.data[1])
        guard let slot = index(of: id) else {
            updateLog(apdu.ins, id, -1, 0x9C08)
            throw fail(0x9C08)
        }
        state.secrets.remove(at: slot)
        listCursor = nil
        updateLog(apdu.ins, id, -1, 0x9000)
        return []
    }

    func listSecretHeaders(_ apdu: CommandAPDU) throws -> [UInt8] {
        try requirePIN()
        let next: Int
        switch apdu.p2 {
        case SeedKeeper.opInit: next = state.secrets.count - 1
        case SeedKeeper.opProcess: next = (listCursor ?? state.secrets.count) - 1
        default: throw fail(0x9C11)
        }
        guard next >= 0, next < state.secrets.count else { listCursor = -1; throw fail(0x9C12) }
        listCursor = next
        let secret = state.secrets[next]
        return [UInt8(secret.id >> 8), UInt8(secret.id & 0xFF)] + secret.header
    }

    /// PRINT LOGS as the applet's Logger reads its ring: the first answer always carries the latest slot; the
    /// next ones walk back through the whole ring (empty slots included) up to the write head, 19 records at most.
    func printLogs(_ apdu: CommandAPDU) throws -> [UInt8] {
        try requirePIN()
        switch apdu.p2 {
        case SeedKeeper.opInit:
            var cursor = SoftSeedKeeperLog.previous(state.logHead)
            let record = SoftSeedKeeperLog.record(state, at: cursor)
            cursor = SoftSeedKeeperLog.previous(cursor)
            logCursor = cursor
            let counts: [UInt8] = [UInt8(state.logsTotal >> 8), UInt8(state.logsTotal & 0xFF), 0x00, UInt8(SoftSeedKeeperLog.records)]
            return counts + record
        case SeedKeeper.opProcess:
            var answer: [UInt8] = []
            var cursor = logCursor ?? state.logHead
            while cursor != state.logHead {
                answer += SoftSeedKeeperLog.record(state, at: cursor)
                cursor = SoftSeedKeeperLog.previous(cursor)
                if answer.count >= 128 { break }
            }
            logCursor = cursor
            return answer
        default:
            throw fail(0x9C11)
        }
    }
}
