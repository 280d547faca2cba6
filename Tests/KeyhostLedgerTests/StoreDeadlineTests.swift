import Foundation
import KeyhostCrypto
import KeyhostLedger
import KeyhostLedgerPostgres
import KeyhostLedgerServer
import KeyhostTokens
import Testing

/// A PostgreSQL ledger that is open when its server goes away or goes silent: each call is a
/// clear `store` error (never a hang, never part of a batch), and the next one works once the
/// server is back.
@Suite(.serialized, .timeLimit(.minutes(10))) struct StoreDeadlineTests {
    /// How long a call waits here while the server is silent (KEYHOST_LEDGER_TIMEOUT's default is 60 s).
    static let limit: Duration = .seconds(2)

    /// The backend of a deposit waiting on a row lock is terminated (`pg_terminate_backend`):
    /// that deposit fails saying nothing was recorded, and the next one goes through.
    @Test func terminatedBackendMidDeposit() async throws {
        let pg = try PostgresHarness.get()
        let db = try pg.newDatabase()
        let store = try await PostgresHarness.store(db)
        let ledger = try TokenLedger(store: store, issuers: [Fixtures.issuer.publicKey.xOnly], programs: Fixtures.programs.run)
        defer { Task { await store.close() } }
        // Deposits go in token-id order: the first two are inserted before the third waits.
        let chains = try [0x00, 0x01, 0xff].map { first -> TokenChain in
            var id = Fixtures.randomID()
            id[0] = UInt8(first)
            return try Fixtures.deposit(try Fixtures.token(id: id))
        }
        let holder = try pg.holdRow(chains[2].token.token.id, in: db, name: "keyhost-test-terminate")
        defer { _ = try? pg.query(db, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'keyhost-test-terminate'"); holder.wait() }

        let deposit = Task { try await ledger.deposit([chains[1], chains[2], chains[0]]) }
        let waiting = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'INSERT INTO deposits%'"
        try #require(try await pg.waitFor(db, waiting, toBe: "1"))
        #expect(try pg.query(db, "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'INSERT INTO deposits%'") == "1")
        await #expect {
            _ = try await deposit.value
        } throws: { error in
            guard let error = error as? LedgerError else { return false }
            return error.kind == "store" && error.message.hasPrefix("\(db.display): cannot record the deposit: ")
                && error.message.contains("nothing of the batch was recorded") && error.message.contains("deposit it again")
        }
        // Seen from another connection: none of the batch (the holder's row is not committed).
        #expect(try pg.query(db, "SELECT count(*) FROM deposits") == "0")
        _ = try pg.query(db, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'keyhost-test-terminate'")
        #expect(try await ledger.deposit([chains[0], chains[1], chains[2]]).map(\.name) == ["accepted", "accepted", "accepted"])
        #expect(try pg.query(db, "SELECT count(*) FROM deposits") == "3")
    }

    /// The server stops answering after the ledger is open (a proxy in between stops forwarding):
    /// deposit and stats fail at the limit, naming host:port/db and what to do, not the password;
    /// nothing of the batch is recorded; once it answers again the next calls work.
    @Test func silentServerAfterOpen() async throws {
        let pg = try PostgresHarness.get()
        let db = try pg.newDatabase()
        let proxy = try PausingProxy(to: pg.port)
        var location = db
        location.port = proxy.port
        location.password = "hunter22"
        let store = try await PostgresHarness.store(location)
        let ledger = try TokenLedger(store: store, issuers: [Fixtures.issuer.publicKey.xOnly], programs: Fixtures.programs.run)
        defer { Task { await store.close() } }
        #expect(try await ledger.deposit([try Fixtures.deposit(try Fixtures.token())]).map(\.name) == ["accepted"])

        proxy.pause()
        #expect(proxy.paused)
        store.callLimit = Self.limit
        let display = "postgres://keyhost@127.0.0.1:\(proxy.port)/\(db.database)"
        func silent(_ error: Error, _ operation: String) -> Bool {
            guard let error = error as? LedgerError else { return false }
            return error.kind == "store" && error.message.hasPrefix("\(display): cannot \(operation): no answer from the server at 127.0.0.1:\(proxy.port) within 2 s")
                && error.message.contains("KEYHOST_LEDGER_TIMEOUT") && !error.message.contains("hunter22")
        }
        var start = Date()
        // The first call a deposit makes is the look-up of chains recorded before (answered from the record).
        await #expect { _ = try await ledger.deposit([try Fixtures.deposit(try Fixtures.token())]) } throws: {
            silent($0, "look up deposited chains")
        }
        #expect(Date().timeIntervalSince(start) < 60)
        start = Date()
        await #expect { _ = try await ledger.stats() } throws: { silent($0, "read the ledger's totals") }
        #expect(Date().timeIntervalSince(start) < 60)

        proxy.resume()
        store.callLimit = PostgresHarness.patience
        // The closed connections reach the server; it ends them, and holds only the first deposit.
        let others = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND state <> 'idle'"
        #expect(try await pg.waitFor(db, others, toBe: "0"))
        #expect(try pg.query(db, "SELECT count(*) FROM deposits") == "1")
        #expect(try await ledger.deposit([try Fixtures.deposit(try Fixtures.token())]).map(\.name) == ["accepted"])
        #expect(try await ledger.stats().tokens == 2)
    }

    /// `keyhost-ledger serve`'s service over a server that went silent: its JSON error (503) at
    /// the store's limit, not a request that hangs; deposits and stats.
    @Test func httpAnswersWhenTheServerIsSilent() async throws {
        let pg = try PostgresHarness.get()
        let db = try pg.newDatabase()
        let proxy = try PausingProxy(to: pg.port)
        var location = db
        location.port = proxy.port
        let store = try await PostgresHarness.store(location)
        var server = LedgerServer(ledger: try TokenLedger(store: store, issuers: [Fixtures.issuer.publicKey.xOnly], programs: Fixtures.programs.run))
        // The service's own backstop stays out of the way of the store's limit.
        server.depositTimeout = PostgresHarness.patience + .seconds(5)
        let configured = server
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let task = Task { try await configured.run(host: "127.0.0.1", port: 0) { continuation.yield($0) } }
        defer { task.cancel(); Task { await store.close() } }
        var base = ""
        for await port in ports { base = "http://127.0.0.1:\(port)"; break }
        let chain = try Fixtures.deposit(try Fixtures.token()).armored
        let (ok, _) = try await HTTPTests.call(base, "GET", "/v1/stats")
        #expect(ok == 200)

        proxy.pause()
        store.callLimit = Self.limit
        for (method, path, body) in [("POST", "/v1/deposit", HTTPTests.body([chain])), ("GET", "/v1/stats", nil)] {
            let start = Date()
            let (status, object) = try await HTTPTests.call(base, method, path, body: body)
            #expect(status == 503 && HTTPTests.error(object).kind == "store", "\(path): \(status) \(object)")
            #expect(Date().timeIntervalSince(start) < 60, "\(path)")
        }
        proxy.resume()
        store.callLimit = PostgresHarness.patience
        let (status, object) = try await HTTPTests.call(base, "POST", "/v1/deposit", body: HTTPTests.body([chain]))
        #expect(status == 200 && (object["results"] as? [[String: Any]])?.first?["result"] as? String == "accepted", "\(object)")
    }
}

/// A TCP proxy to a local port that stops forwarding (both ways) when paused: a server that
/// keeps its connections but answers nothing, like one behind a network black hole.
final class PausingProxy: @unchecked Sendable {
    let port: Int
    private let listener: Int32
    /// Guards `isPaused` and the counts; signalled whenever one changes.
    private let state = NSCondition()
    private var isPaused = false
    /// Pumps running, and those of them stopped at a pause.
    private var pumps = 0, parked = 0

    /// Paused, with every pump stopped: nothing is on its way through.
    var paused: Bool { state.withLock { isPaused && parked == pumps } }

    /// Stops forwarding; returns once no pump is in the middle of passing bytes on, so from
    /// here on the server hears nothing and says nothing.
    func pause() {
        state.withLock {
            isPaused = true
            state.broadcast()
            while parked < pumps { state.wait() }
        }
    }

    func resume() {
        state.withLock {
            isPaused = false
            state.broadcast()
        }
    }

    init(to target: Int) throws {
        (listener, port) = try PostgresHarness.boundSocket(listening: 16)
        let listener = self.listener
        Thread.detachNewThread { [self] in
            while true {
                let client = accept(listener, nil, nil)
                if client < 0 { if errno == EINTR { continue } else { return } }
                guard let server = Self.connect(target) else { close(client); continue }
                let open = Counter(2)
                for (from, to) in [(client, server), (server, client)] {
                    // Counted before the thread starts, so that a pause() right after accept waits for it.
                    state.withLock { pumps += 1 }
                    Thread.detachNewThread {
                        self.pump(from, to)
                        self.state.withLock {
                            self.pumps -= 1
                            self.state.broadcast()
                        }
                        shutdown(to, Int32(SHUT_WR))
                        if open.decrement() == 0 { close(client); close(server) }
                    }
                }
            }
        }
    }

    /// Waits out a pause, counted as parked so that `pause()` knows this pump is still.
    private func holdWhilePaused() {
        state.withLock {
            guard isPaused else { return }
            parked += 1
            state.broadcast()
            while isPaused { state.wait() }
            parked -= 1
        }
    }

    private func pump(_ from: Int32, _ to: Int32) {
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            holdWhilePaused()
            var watch = pollfd(fd: from, events: Int16(POLLIN), revents: 0)
            let ready = poll(&watch, 1, 20)
            if ready < 0 && errno != EINTR { return }
            // A pause that came during poll: the bytes wait, unread, until it ends.
            if ready <= 0 || state.withLock({ isPaused }) { continue }
            let n = read(from, &buffer, buffer.count)
            if n <= 0 { return }
            var sent = 0
            while sent < n {
                let w = buffer[sent..<n].withUnsafeBytes { send(to, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if w < 0 { if errno == EINTR { continue } else { return } }
                sent += w
            }
        }
    }

    private static func connect(_ port: Int) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        if !connected { close(fd); return nil }
        return fd
    }

    private final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var value: Int
        init(_ value: Int) { self.value = value }
        func decrement() -> Int { lock.withLock { value -= 1; return value } }
    }
}
