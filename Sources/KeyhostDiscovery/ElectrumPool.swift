import Dispatch
import KeyhostHTTP

/// The connections of one source: slot i holds connection i, opened on first use, reopened after a failure,
/// pinged while idle. Shared with the keep-alive thread, so every slot has its own lock.
final class ElectrumPool: @unchecked Sendable {
    struct Statistics {
        var roundTrips = 0
        var connections = 0
    }

    let size: Int
    private let server: ElectrumServer
    private let tls: TLSContext?
    private let proxy: Proxy?
    private let rateLimiter: RateLimiter?
    private let timeout: Double
    private let clientName: String
    private let maxLineLength: Int
    private let keepAlive: Double
    private let slots: [Slot]
    /// Guards the fields below (a serial queue is the lock, as elsewhere in this module).
    private let queue = DispatchQueue(label: "keyhost.discovery.electrum")
    private var _batchesRefused = false
    private var batchCloses = 0
    private var _statistics = Statistics()
    private var pinger: WorkerThread?
    private var pingerStarted = false
    private let stop = DispatchSemaphore(value: 0)
    private var stopped = false

    final class Slot {
        let lock = ThreadLock()
        var connection: ElectrumConnection?
        /// Request messages already counted in the statistics from this connection.
        var counted = 0
    }

    init(server: ElectrumServer, tls: TLSContext?, proxy: Proxy?, rateLimiter: RateLimiter?, size: Int, timeout: Double, clientName: String,
         maxLineLength: Int, keepAlive: Double) {
        self.rateLimiter = rateLimiter
        self.server = server
        self.tls = tls
        self.proxy = proxy
        self.size = max(1, size)
        self.timeout = timeout
        self.clientName = clientName
        self.maxLineLength = maxLineLength
        self.keepAlive = keepAlive
        slots = (0..<max(1, size)).map { _ in Slot() }
    }

    var batchesRefused: Bool { queue.sync { _batchesRefused } }
    var statistics: Statistics { queue.sync { _statistics } }

    func refuseBatches() { queue.sync { _batchesRefused = true } }
    func batchAnswered() { queue.sync { batchCloses = 0 } }
    /// Twice in a row a connection closed on a batch with nothing answered: this server does not take batches.
    func batchClosed() {
        queue.sync {
            batchCloses += 1
            if batchCloses >= 2 { _batchesRefused = true }
        }
    }

    /// Runs `body` on slot `index`'s connection, opening it first if there is none (or the server hung up on it
    /// while idle). A failure closes the connection, so the next attempt starts on a fresh one.
    func withConnection<R>(_ index: Int, _ body: (ElectrumConnection) throws -> R) throws -> R {
        let slot = slots[index]
        slot.lock.lock()
        defer { slot.lock.unlock() }
        if let existing = slot.connection, existing.isClosed {
            existing.close()
            slot.connection = nil
        }
        let connection: ElectrumConnection
        if let existing = slot.connection {
            connection = existing
        } else {
            queue.sync { _statistics.connections += 1 }
            connection = try ElectrumConnection(server: server, tls: tls, proxy: proxy, timeout: timeout, clientName: clientName,
                                                maxLineLength: maxLineLength, rateLimiter: rateLimiter)
            slot.connection = connection
            slot.counted = 0
            startPinger()
        }
        defer { count(slot, connection) }
        do {
            return try body(connection)
        } catch {
            connection.close()
            slot.connection = nil
            throw error
        }
    }

    private func count(_ slot: Slot, _ connection: ElectrumConnection) {
        let sent = connection.requestsSent
        queue.sync { _statistics.roundTrips += sent - slot.counted }
        slot.counted = sent
    }

    // MARK: - Keep-alive

    private func startPinger() {
        let start: Bool = queue.sync {
            guard !pingerStarted, !stopped else { return false }
            pingerStarted = true
            return true
        }
        guard start else { return }
        // Without a thread (a process limit) there is no keep-alive; a connection the server drops is reopened.
        let thread = startBackgroundThread { [self] in pingWhileIdle() }
        queue.sync { pinger = thread }
    }

    private var isStopped: Bool { queue.sync { stopped } }

    /// Every quarter of the keep-alive interval, pings each connection idle for the whole interval. A slot in use
    /// is skipped (its exchange keeps it alive); a ping that fails closes the connection, to be reopened on use.
    private func pingWhileIdle() {
        let period = max(0.01, keepAlive / 4)
        while stop.wait(timeout: .now() + period) == .timedOut && !isStopped {
            for slot in slots where slot.lock.tryLock() {
                defer { slot.lock.unlock() }
                guard let connection = slot.connection,
                      monotonicClock() &- connection.lastUsed >= UInt64(keepAlive * 1_000_000_000) else { continue }
                do {
                    _ = try connection.pipelined([ElectrumCall(method: "server.ping", params: [])])
                    count(slot, connection)
                } catch {
                    count(slot, connection)
                    connection.close()
                    slot.connection = nil
                }
            }
        }
    }

    /// Stops the keep-alive thread and closes every connection.
    func shutDown() {
        let thread: WorkerThread? = queue.sync {
            stopped = true
            return pinger
        }
        stop.signal()  // also ends a pinger that is starting just now: it sees `stopped`
        thread?.join()
        for slot in slots {
            slot.lock.lock()
            slot.connection?.close()
            slot.connection = nil
            slot.lock.unlock()
        }
    }
}
