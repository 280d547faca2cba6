import Dispatch
import Synchronization
import KeyhostFiles
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
    /// The pool's shared fields, behind one Mutex.
    private struct Shared {
        var batchesRefused = false
        var batchCloses = 0
        var statistics = Statistics()
        var pinger: WorkerThread?
        var pingerStarted = false
        var stopped = false
    }
    private let shared = Mutex(Shared())
    private let stop = DispatchSemaphore(value: 0)

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

    var batchesRefused: Bool { shared.withLock { $0.batchesRefused } }
    var statistics: Statistics { shared.withLock { $0.statistics } }

    func refuseBatches() { shared.withLock { $0.batchesRefused = true } }
    func batchAnswered() { shared.withLock { $0.batchCloses = 0 } }
    /// Twice in a row a connection closed on a batch with nothing answered: this server does not take batches.
    func batchClosed() {
        shared.withLock { shared in
            shared.batchCloses += 1
            if shared.batchCloses >= 2 { shared.batchesRefused = true }
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
            shared.withLock { $0.statistics.connections += 1 }
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
        let counted = slot.counted
        shared.withLock { $0.statistics.roundTrips += sent - counted }
        slot.counted = sent
    }

    // MARK: - Keep-alive

    private func startPinger() {
        let start: Bool = shared.withLock { shared in
            guard !shared.pingerStarted, !shared.stopped else { return false }
            shared.pingerStarted = true
            return true
        }
        guard start else { return }
        // Without a thread (a process limit) there is no keep-alive; a connection the server drops is reopened.
        let thread = startBackgroundThread { [self] in pingWhileIdle() }
        shared.withLock { $0.pinger = thread }
    }

    private var isStopped: Bool { shared.withLock { $0.stopped } }

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
        let thread: WorkerThread? = shared.withLock { shared in
            shared.stopped = true
            return shared.pinger
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
