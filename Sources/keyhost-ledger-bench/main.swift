// Deposit rates for scripts/bench: one chain per deposit (one transaction each), chains made and
// signed before the clock starts; verification and the store's transaction are what is timed.
//
//   keyhost-ledger-bench issuer                       the issuer's x-only key, for `ledger serve`
//   keyhost-ledger-bench sqlite FILE COUNT            sequential deposits into a new SQLite ledger
//   keyhost-ledger-bench postgres URL COUNT CLIENTS   CLIENTS concurrent depositors, direct
//   keyhost-ledger-bench http BASE COUNT CLIENTS      CLIENTS concurrent POST /v1/deposit
//   keyhost-ledger-bench floor COUNT                  the checks alone, on one thread: signatures
//                                                     and the program re-runs each deposit needs
//   keyhost-ledger-bench crypto-floor COUNT           the same with the programs run in this process
//                                                     (no worker): what a deposit cannot go under
//   keyhost-ledger-bench http-batch BASE COUNT SIZE   COUNT chains posted SIZE per request, one client
// Each chain has three links, each made by a run of its program, which the ledger re-runs (in the
// keyhost worker next to this program, or KEYHOST_WORKER). `--signatures-only` after the mode's
// arguments skips the re-runs, as ledgers did before they checked them (for the before/after figure).
// Prints `deposit_ns <wall ns per deposit>`.

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import KeyhostCrypto
import KeyhostLedger
import KeyhostLedgerPostgres
import KeyhostTokens
import KeyhostWorkerProcess
import KeyhostPlayer

let issuer = try! PrivateKey(bytes: Array(repeating: 0x51, count: 32))
let holders = (0..<3).map { try! PrivateKey(bytes: Array(repeating: UInt8(0x61 + $0), count: 32)) }

func chains(_ count: Int) throws -> [TokenChain] {
    let now = Int64(Date().timeIntervalSince1970) - 60
    return try (0..<count).map { _ in
        let token = try SignedToken.issue(Token(
            id: (0..<32).map { _ in UInt8.random(in: 0...255) }, issuer: issuer.publicKey.xOnly, value: 100, unit: "EUR-cent",
            program: TokenProgram(kind: .luaSource, code: Array("local t = ... t.transfer(t.transfer_to)".utf8)), holder: holders[0].publicKey),
            issuerKey: issuer)
        var chain = TokenChain(token: token)
        let path = [holders[1].publicKey, holders[2].publicKey, TokenChain.depositKey(issuer: issuer.publicKey.xOnly)]
        for (i, next) in path.enumerated() {
            chain = try chain.appending(to: next, time: now, effects: []) { try ProtocolSignature.sign($0, with: holders[i]) }
        }
        return chain
    }
}

/// Re-runs in `pool` (a chain's links in one exchange, as `keyhost-ledger serve` does), or (before
/// issue 19's rule) takes every link as made by its program.
func programRunner(_ pool: WorkerPool, skippingRuns: Bool) -> @Sendable (LinkRunsRequest) -> [RunOutcome] {
    if skippingRuns { return { Array(repeating: .completed(effects: [], transferred: true), count: $0.links.count) } }
    return { pool.runLinks($0) }
}

/// Runs `clients` workers over `items`, each taking the next item; the wall time in ns per item.
func timed<T: Sendable>(_ items: [T], clients: Int, _ work: @escaping @Sendable (T) async throws -> Void) async throws -> Double {
    let next = Counter()
    let start = ContinuousClock.now
    try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<clients {
            group.addTask {
                while let i = next.take(below: items.count) { try await work(items[i]) }
            }
        }
        try await group.waitForAll()
    }
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) * 1e9 / Double(items.count) + Double(elapsed.components.attoseconds) / 1e9 / Double(items.count)
}

final class Counter: @unchecked Sendable {
    private var value = 0
    private let lock = NSLock()
    func take(below limit: Int) -> Int? {
        lock.lock(); defer { lock.unlock() }
        guard value < limit else { return nil }
        value += 1
        return value - 1
    }
}

func fail(_ text: String) -> Never {
    FileHandle.standardError.write(Data("keyhost-ledger-bench: \(text)\n".utf8))
    exit(1)
}

let signaturesOnly = CommandLine.arguments.contains("--signatures-only")
let args = CommandLine.arguments.filter { $0 != "--signatures-only" }
guard args.count >= 2 else { fail("usage: issuer | sqlite FILE COUNT | postgres URL COUNT CLIENTS | http BASE COUNT CLIENTS") }
if args[1] == "issuer" {
    print(Hex.encode(issuer.publicKey.xOnly.bytes))
    exit(0)
}
let pool = WorkerPool(executable: (try? WorkerProgram.path()) ?? "keyhost", maxWorkers: 4)
let programs = programRunner(pool, skippingRuns: signaturesOnly)
if args[1] == "crypto-floor" {
    // Signature checks and program re-runs on one thread, the player in this process: CPU time.
    guard args.count >= 3, let count = Int(args[2]) else { fail("missing COUNT") }
    let work = try chains(count)
    let player = TokenPlayer(helperModules: [:])
    var start = rusage(), end = rusage()
    getrusage(__rusage_who_t(1), &start)
    for chain in work {
        try chain.verify()
        try TransferRuns.verify(chain, bytecodeAllowed: true, runner: player.run)
    }
    getrusage(__rusage_who_t(1), &end)
    func micros(_ t: timeval) -> Double { Double(t.tv_sec) * 1e6 + Double(t.tv_usec) }
    let used = micros(end.ru_utime) + micros(end.ru_stime) - micros(start.ru_utime) - micros(start.ru_stime)
    print("check_ns \(used * 1000 / Double(count))")
    exit(0)
}
if args[1] == "floor" {
    guard args.count >= 3, let count = Int(args[2]) else { fail("missing COUNT") }
    let work = try chains(count)
    let runner = WorkerRunner(executable: pool.executable, runsPerWorker: 1000)
    let start = ContinuousClock.now
    let check: (LinkRunsRequest) -> [RunOutcome] = signaturesOnly ? programs : runner.runLinks
    for chain in work {
        try chain.verify()
        try TransferRuns.verify(chain, bytecodeAllowed: true, linkRunner: check)
    }
    let elapsed = ContinuousClock.now - start
    print("check_ns \(Double(elapsed.components.seconds) * 1e9 / Double(count) + Double(elapsed.components.attoseconds) / 1e9 / Double(count))")
    exit(0)
}
guard args.count >= 4, let count = Int(args[3]) else { fail("missing COUNT") }
let clients = args.count >= 5 ? Int(args[4]) ?? 1 : 1
let work = try chains(count)

do {
    let ns: Double
    switch args[1] {
    case "sqlite", "postgres":
        let location = try LedgerLocation(args[1] == "sqlite" ? "sqlite:" + args[2] : args[2])
        let store: any LedgerStore = try await {
            if case .postgres(let pg) = location { return try await PostgresLedgerStore(location: pg, maxConnections: clients) }
            return try await location.open()
        }()
        let ledger = try TokenLedger(store: store, issuers: [issuer.publicKey.xOnly], linkPrograms: programs)
        ns = try await timed(work, clients: clients) { chain in
            guard try await ledger.deposit([chain]).first?.name == "accepted" else { fail("a deposit was not accepted") }
        }
        await store.close()
    case "http-batch":
        let size = max(1, clients)
        let session = URLSession(configuration: .ephemeral)
        let url = URL(string: args[2] + "/v1/deposit")!
        let groups = stride(from: 0, to: work.count, by: size).map { Array(work[$0..<min($0 + size, work.count)]) }
        let perRequest = try await timed(groups, clients: 1) { group in
            var request = URLRequest(url: url)
            request.httpMethod = "POST"
            request.httpBody = try JSONSerialization.data(withJSONObject: ["chains": group.map(\.armored)])
            let (data, response) = try await session.data(for: request)
            let text = String(decoding: data, as: UTF8.self)
            guard (response as? HTTPURLResponse)?.statusCode == 200, text.components(separatedBy: "\"accepted\"").count - 1 == group.count else {
                fail("HTTP batch deposit failed: \(String(text.prefix(300)))")
            }
        }
        ns = perRequest / Double(size)
    case "http":
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = clients
        let session = URLSession(configuration: configuration)
        let url = URL(string: args[2] + "/v1/deposit")!
        ns = try await timed(work, clients: clients) { chain in
            var request = URLRequest(url: url)
            request.httpMethod = "POST"
            request.httpBody = try JSONSerialization.data(withJSONObject: ["chains": [chain.armored]])
            let (data, response) = try await session.data(for: request)
            guard (response as? HTTPURLResponse)?.statusCode == 200, String(decoding: data, as: UTF8.self).contains("\"accepted\"") else {
                fail("HTTP deposit failed: \(String(decoding: data.prefix(300), as: UTF8.self))")
            }
        }
    default:
        fail("unknown mode \(args[1])")
    }
    print("deposit_ns \(ns)")
} catch {
    fail("\(error)")
}
