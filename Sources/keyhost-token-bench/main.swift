// keyhost-token-bench: durable token runs against the raw rate of durable SQLite commits on the same
// disk, in the same run (scripts/bench prints the ratios).
//
//   keyhost-token-bench KEYHOST_BINARY DIRECTORY [runs]
//   keyhost-token-bench --loop KEYHOST_BINARY WALLET FIRST COUNT   (one of the 4 processes)
//
// Prints "<name> <value> <unit>" lines:
//   raw_commit_us       one INSERT + COMMIT with WAL and synchronous=FULL (KeyhostSQLite), median of batches
//   run_worker_us       TokenWallet.run of a trivial program, a fresh worker process per run
//   run_warm_us         the same with a warm worker (64 runs per process, a fresh Lua state each)
//   run_fork_us         the same with each run in a child forked from a fork server (what keyhost uses)
//   run_inprocess_us    the same with the player in this process (what isolation costs is the difference)
//   player_only_us      TokenPlayer.run alone (deterministic sandbox set up, program run), no store
//   runner_*_us         one request through each runner alone (fresh, warm, fork, in process), no store
//   batch_*_us          runMany in 100-token batches, one lane per CPU: forked children, warm workers, in process
//   run_10kb_us         verify + run of a token with a 10 KB program (worker), median latency
//   pay_receive_10_us   request + pay (10 tokens, warm worker) + receive, median
//   run_4proc_per_s     runs per second with 4 processes on one wallet
import CKeyhostProcess
import KeyhostCrypto
import KeyhostPlayer
import KeyhostSQLite
import KeyhostTokens
import KeyhostWallet
import KeyhostWorkerProcess

#if canImport(Glibc)
import Glibc
#endif

func wallSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

func median(_ xs: [Double]) -> Double {
    let s = xs.sorted()
    return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
}

let issuer = try PrivateKey(bytes: Array(repeating: 0x41, count: 32))

func issue(_ count: Int, to holder: PublicKey, program: String) throws -> [SignedToken] {
    try (0..<count).map { i in
        var id = Array(repeating: UInt8(0), count: 32)
        for (k, byte) in withUnsafeBytes(of: UInt64(i).bigEndian, Array.init).enumerated() { id[24 + k] = byte }
        id[0] = UInt8.random(in: 0...255)
        id[1] = UInt8.random(in: 0...255)
        let token = Token(id: id, issuer: issuer.publicKey.xOnly, value: 1, unit: "pt",
                          program: TokenProgram(kind: .luaSource, code: Array(program.utf8)), holder: holder)
        return try SignedToken.issue(token, issuerKey: issuer)
    }
}

let trivial = "local t = ... t.emit(t.token.value)"

func helperModules(_ keyhost: String) -> [String: [UInt8]] {
    // The stdlib sits at the repository root; the binary is in .build-*/…/release.
    var dir = keyhost
    for _ in 0..<6 {
        dir = String(dir[..<(dir.lastIndex(of: "/") ?? dir.startIndex)])
        if let hex = read(dir + "/stdlib/keyhost/hex.lua"), let json = read(dir + "/stdlib/keyhost/json.lua") {
            return ["hex": hex, "json": json]
        }
    }
    return [:]
}

func read(_ path: String) -> [UInt8]? {
    guard let f = fopen(path, "rb") else { return nil }
    defer { fclose(f) }
    var out: [UInt8] = []
    var buf = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = fread(&buf, 1, buf.count, f)
        if n <= 0 { break }
        out += buf[0..<n]
    }
    return out
}

func runAll(_ wallet: TokenWallet, _ tokens: [SignedToken], runner: (RunRequest) -> RunOutcome) throws -> [Double] {
    let signer = try wallet.softwareSigner()!
    var times: [Double] = []
    for t in tokens {
        let t0 = wallSeconds()
        _ = try wallet.run(id: t.token.id, arguments: .map([]), now: 1_900_000_000, signer: signer, runner: runner)
        times.append(wallSeconds() - t0)
    }
    return times
}

let args = CommandLine.arguments
if args.count >= 6, args[1] == "--loop" {
    let wallet = try TokenWallet(path: args[3])
    let tokens = try wallet.store.tokens().map(\.token)
    let first = Int(args[4])!, count = Int(args[5])!
    _ = try runAll(wallet, Array(tokens[first..<(first + count)]), runner: WorkerRunner(executable: args[2]).run)
    exit(0)
}
guard args.count >= 3 else {
    fputs("usage: keyhost-token-bench KEYHOST_BINARY DIRECTORY [runs]\n", stderr)
    exit(2)
}
let keyhost = args[1], directory = args[2]
let runs = args.count > 3 ? Int(args[3]) ?? 300 : 300

/// KEYHOST_BENCH_ONLY=name runs one figure (for profiling).
let only = getenv("KEYHOST_BENCH_ONLY").map { String(cString: $0) }
func wanted(_ name: String) -> Bool { only == nil || only == name }

func fresh(_ name: String) -> String {
    let path = directory + "/" + name
    for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) }
    return path
}

// Raw durable commits: the floor every run pays once.
if wanted("raw_commit_us") {
    let path = fresh("raw.db")
    let database = try Database(path: path) { db in
        _ = try db.fetchValue("PRAGMA journal_mode = WAL", as: String.self)
        try db.execute("PRAGMA synchronous = FULL")
    }
    try database.access { try $0.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB)") }
    var batches: [Double] = []
    for _ in 0..<5 {
        let t0 = wallSeconds()
        for _ in 0..<runs {
            try database.transaction(.immediate) { db in
                try db.execute("INSERT INTO t (v) VALUES (?)", [String(repeating: "x", count: 300)])
            }
        }
        batches.append((wallSeconds() - t0) / Double(runs))
    }
    print("raw_commit_us \(median(batches) * 1e6) us")
}

let program10k = "local t = ...\nlocal s = 0\n" + String(repeating: "s = s + 1 -- padding to make the program ten kilobytes long......\n", count: 150) + "t.emit(s)\n"

for (name, program, mode) in [("run_worker_us", trivial, 1), ("run_warm_us", trivial, 64), ("run_fork_us", trivial, -1), ("run_inprocess_us", trivial, 0),
                               ("run_10kb_us", program10k, 1)] where wanted(name) {
    let path = fresh("\(name).db")
    let wallet = try TokenWallet.create(path: path)
    let tokens = try issue(runs, to: try wallet.holder().publicKey, program: program)
    _ = try wallet.importTokens(tokens, now: 0)
    let player = TokenPlayer(helperModules: helperModules(keyhost))
    let runner: (RunRequest) -> RunOutcome = mode < 0 ? WorkerRunner(forkingFrom: keyhost).run
        : mode > 0 ? WorkerRunner(executable: keyhost, runsPerWorker: mode).run : player.run
    let times = try runAll(wallet, tokens, runner: runner)
    print("\(name) \(median(times) * 1e6) us")
}

// Batches: TokenWallet.runMany over 100-token batches in 2 lanes, per run: forked children (what
// keyhost uses), warm workers (the design keyhost did not choose: runs share a process), and the
// player in this process (no isolation at all).
for (name, mode) in [("batch_fork_us", -1), ("batch_warm_us", 1000), ("batch_inprocess_us", 0)] where wanted(name) {
    let wallet = try TokenWallet.create(path: fresh("\(name).db"))
    let tokens = try issue(runs, to: try wallet.holder().publicKey, program: trivial)
    _ = try wallet.importTokens(tokens, now: 0)
    let signer = try wallet.softwareSigner()!
    let lanes = BatchLanes.count(for: runs)
    let runners: [(RunRequest) -> RunOutcome] = (0..<lanes).map { _ in
        if mode < 0 { return WorkerRunner(forkingFrom: keyhost).run }
        if mode > 0 { return WorkerRunner(executable: keyhost, runsPerWorker: mode).run }
        return TokenPlayer(helperModules: helperModules(keyhost)).run
    }
    let t0 = wallSeconds()
    for first in stride(from: 0, to: tokens.count, by: 100) {
        let batch = tokens[first..<min(first + 100, tokens.count)].map { TokenWallet.RunItem(id: $0.token.id, arguments: .map([])) }
        for result in try wallet.runMany(batch, now: 1_900_000_000, signer: signer, runners: runners) {
            guard case .success = result else { fatalError("\(name): a run failed: \(result)") }
        }
    }
    print("\(name) \((wallSeconds() - t0) / Double(tokens.count) * 1e6) us")
}

// Where an in-process run's time goes: the player alone (sandbox set-up + program), no wallet.
if wanted("player_only_us") {
    let wallet = try TokenWallet.create(path: fresh("player.db"))
    let token = try issue(1, to: try wallet.holder().publicKey, program: trivial)[0]
    let player = TokenPlayer(helperModules: helperModules(keyhost))
    let request = RunRequest(token: token, arguments: .map([]), now: 0, limits: .walletDefault, bytecodeAllowed: false)
    var times: [Double] = []
    for _ in 0..<runs {
        let t0 = wallSeconds()
        _ = player.run(request)
        times.append(wallSeconds() - t0)
    }
    print("player_only_us \(median(times) * 1e6) us")
}

// The runners alone on one request, no wallet: what starting a run in its own process costs.
for (name, mode) in [("runner_fresh_us", 1), ("runner_warm_us", 64), ("runner_fork_us", -1), ("runner_inprocess_us", 0)] where wanted(name) {
    let token = try issue(1, to: issuer.publicKey, program: trivial)[0]
    let request = RunRequest(token: token, arguments: .map([]), now: 0, limits: .walletDefault, bytecodeAllowed: false)
    let player = TokenPlayer(helperModules: helperModules(keyhost))
    let runner: (RunRequest) -> RunOutcome = mode < 0 ? WorkerRunner(forkingFrom: keyhost).run
        : mode > 0 ? WorkerRunner(executable: keyhost, runsPerWorker: mode).run : player.run
    _ = runner(request)
    var times: [Double] = []
    for _ in 0..<runs {
        let t0 = wallSeconds()
        guard case .completed = runner(request) else { fatalError("\(name): the run failed") }
        times.append(wallSeconds() - t0)
    }
    print("\(name) \(median(times) * 1e6) us")
}

// A 10-token payment: B asks, A pays (ten transfer runs, warm worker), B receives.
if wanted("pay_receive_10_us") {
    let a = try TokenWallet.create(path: fresh("payer.db")), b = try TokenWallet.create(path: fresh("payee.db"))
    var cashDir = keyhost
    var cash: [UInt8]?
    for _ in 0..<6 where cash == nil {
        cashDir = String(cashDir[..<(cashDir.lastIndex(of: "/") ?? cashDir.startIndex)])
        cash = read(cashDir + "/stdlib/keyhost/cash.lua")
    }
    let payments = max(runs / 10, 3)
    let tokens = try issue(payments * 10, to: try a.holder().publicKey, program: String(decoding: cash ?? [], as: UTF8.self))
    _ = try a.importTokens(tokens, now: 0)
    let runner = WorkerRunner(executable: keyhost, runsPerWorker: 64)
    let (signerA, signerB) = (try a.softwareSigner()!, try b.softwareSigner()!)
    var times: [Double] = []
    for _ in 0..<payments {
        let t0 = wallSeconds()
        let request = try b.makeRequest(amount: 10, unit: "pt", issuers: [issuer.publicKey.xOnly], keys: 10, expires: 2_000_000_000,
                                        now: 1_900_000_000, signer: signerB)
        let payment = try a.pay(request, now: 1_900_000_000, signer: signerA, runner: runner.run)
        _ = try b.receive(payment, now: 1_900_000_000, runner: runner.run)
        times.append(wallSeconds() - t0)
    }
    print("pay_receive_10_us \(median(times) * 1e6) us")
}

// Four processes, each running its own quarter of one wallet's tokens.
if wanted("run_4proc_per_s") {
    let path = fresh("four.db")
    let wallet = try TokenWallet.create(path: path)
    let total = runs - runs % 4
    let tokens = try issue(total, to: try wallet.holder().publicKey, program: trivial)
    _ = try wallet.importTokens(tokens, now: 0)
    let me = WorkerRunner.currentExecutable
    let t0 = wallSeconds()
    var pids: [pid_t] = []
    for p in 0..<4 {
        let argv = [me, "--loop", keyhost, path, String(p * total / 4), String(total / 4)]
        var cArgs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        var pid: pid_t = 0
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        guard khp_spawn_close_other_descriptors(&actions) == 0, posix_spawn(&pid, me, &actions, nil, &cArgs, environ) == 0 else { fatalError("spawn") }
        for c in cArgs { free(c) }
        pids.append(pid)
    }
    for pid in pids {
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        if status != 0 { fputs("a loop process failed (status \(status))\n", stderr); exit(1) }
    }
    print("run_4proc_per_s \(Double(total) / (wallSeconds() - t0)) per_s")
}
