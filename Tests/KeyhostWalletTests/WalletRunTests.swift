import Foundation
import KeyhostCrypto
import KeyhostTokens
import KeyhostTestSupport
import Testing
@testable import KeyhostWallet

/// Exactly-once: claiming, committing, aborting and reconciling runs, across stores and threads.
@Suite struct WalletRunTests {
    static let spentAt: Int64 = 1_795_482_123  // 2026-11-24T01:02:03Z

    @Test func aCommittedRunSpendsTheTokenOnceWithItsEffectsAndReceipt() throws {
        try withWallet { store in
            let id = Fixture.id([0x3f, 0xa9, 0xc1])
            let token = Fixture.token(id)
            _ = try store.importToken(token, now: 1)
            let run = try store.beginRun(id: id, owner: .current(), startedAt: 2)
            #expect(run.tokenID == id && run.runID.count == 16 && run.owner == .current())
            let pending = try #require(try store.token(id: id))
            #expect(pending.state == .pending)
            #expect(pending.pendingOwner == .current())
            #expect(try store.importToken(token, now: 3) == .alreadyPresent(.pending))

            let receiptID: [UInt8] = [0x9b, 0x1e] + [UInt8](repeating: 7, count: 30)
            try store.commitRun(run, effects: [0xe1, 0xe2], receipt: Array("receipt".utf8), receiptID: receiptID, spentAt: Self.spentAt)
            let spent = try #require(try store.token(id: id))
            #expect(spent.state == .spent)
            #expect(spent.spentAt == Self.spentAt)
            #expect(spent.receiptID == receiptID)
            #expect(spent.pendingOwner == nil)
            let stored = try #require(try store.receipt(tokenID: id))
            #expect(stored.effects == [0xe1, 0xe2])
            #expect(stored.receipt == Array("receipt".utf8))

            let again = try #require(walletError { try store.beginRun(id: id, owner: .current(), startedAt: 5) })
            #expect(again.kind == "already_spent")
            #expect(again.message.contains("3fa9c1"))
            #expect(again.message.contains("2026-11-24T01:02:03Z"))
            #expect(again.message.contains(Hex.encode(receiptID)))
            #expect(again.message.contains("a token runs once"))
            // Committing the same run twice is refused and changes nothing.
            let twice = try #require(walletError {
                try store.commitRun(run, effects: [0], receipt: [0], receiptID: [0], spentAt: 9)
            })
            #expect(twice.kind == "conflict")
            #expect(try store.receipt(tokenID: id)?.effects == [0xe1, 0xe2])
        }
    }

    @Test func unknownTokensAreNotFound() throws {
        try withWallet { store in
            #expect(walletError { try store.beginRun(id: Fixture.id([0x77]), owner: .current(), startedAt: 1) }?.kind == "not_found")
        }
    }

    @Test func aSecondStoreSeesTheTokenRunningWhileItsOwnerLives() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/wallet.khw"
            let first = try TokenStore(path: path), second = try TokenStore(path: path)
            let id = Fixture.id([0x42])
            _ = try first.importToken(Fixture.token(id), now: 1)
            let run = try first.beginRun(id: id, owner: .current(), startedAt: Self.spentAt)
            let error = try #require(walletError { try second.beginRun(id: id, owner: .current(), startedAt: 2) })
            #expect(error.kind == "running")
            #expect(error.message.contains("process \(getpid())"))
            #expect(error.message.contains("2026-11-24T01:02:03Z"))
            // Opening the wallet again (which reconciles) leaves a live run alone.
            #expect(try TokenStore(path: path).token(id: id)?.state == .pending)
            #expect(try second.reconcile().isEmpty)
            try first.commitRun(run, effects: [], receipt: [1], receiptID: [1], spentAt: 3)
            #expect(walletError { try second.beginRun(id: id, owner: .current(), startedAt: 4) }?.kind == "already_spent")
        }
    }

    @Test func runsOfDeadProcessesGoBackToHeldWhenTheWalletOpens() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/wallet.khw"
            let dead = Fixture.id([0xde]), alive = Fixture.id([0xa1])
            let dying = try Fixture.deadOwner()
            do {
                let store = try TokenStore(path: path)
                _ = try store.importToken(Fixture.token(dead), now: 1)
                _ = try store.importToken(Fixture.token(alive), now: 1)
                _ = try store.beginRun(id: dead, owner: dying, startedAt: 10)
                _ = try store.beginRun(id: alive, owner: .current(), startedAt: 11)
            }
            let reopened = try TokenStore(path: path)
            #expect(try reopened.token(id: dead)?.state == .held)
            #expect(try reopened.token(id: dead)?.pendingOwner == nil)
            #expect(try reopened.token(id: alive)?.state == .pending)
            #expect(try reopened.token(id: alive)?.pendingOwner == .current())
        }
    }

    /// A run owned by another live process is left alone until that process dies.
    @Test func aRunOfAnotherLiveProcessIsKeptUntilItDies() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/wallet.khw"
            let child = try ChildProcess()
            let owner = try #require(RunOwner.of(pid: child.pid))
            let id = Fixture.id([0xc4])
            do {
                let store = try TokenStore(path: path)
                _ = try store.importToken(Fixture.token(id), now: 1)
                _ = try store.beginRun(id: id, owner: owner, startedAt: 10)
            }
            let other = try TokenStore(path: path)
            #expect(try other.token(id: id)?.pendingOwner == owner)
            let error = try #require(walletError { try other.beginRun(id: id, owner: .current(), startedAt: 11) })
            #expect(error.kind == "running")
            #expect(error.message.contains("process \(child.pid)"))

            child.killAndReap()
            #expect(try other.reconcile() == [ReconciledRun(tokenID: id, owner: owner, startedAt: 10)])
            #expect(try other.token(id: id)?.state == .held)
        }
    }

    @Test func reconcileReportsWhatItReset() throws {
        try withWallet { store in
            let id = Fixture.id([0xd0])
            _ = try store.importToken(Fixture.token(id), now: 1)
            let owner = try Fixture.deadOwner()
            let stale = try store.beginRun(id: id, owner: owner, startedAt: 10)
            #expect(try store.reconcile() == [ReconciledRun(tokenID: id, owner: owner, startedAt: 10)])
            #expect(try store.token(id: id)?.state == .held)
            #expect(try store.reconcile().isEmpty)
            // The reset run can no longer commit.
            #expect(walletError { try store.commitRun(stale, effects: [], receipt: [], receiptID: [1], spentAt: 1) }?.kind == "conflict")
        }
    }

    @Test func beginRunTakesOverTheClaimOfADeadProcess() throws {
        try withWallet { store in
            let id = Fixture.id([0xd1])
            _ = try store.importToken(Fixture.token(id), now: 1)
            let stale = try store.beginRun(id: id, owner: try Fixture.deadOwner(), startedAt: 10)
            let fresh = try store.beginRun(id: id, owner: .current(), startedAt: 11)
            #expect(fresh.runID != stale.runID)
            #expect(try store.token(id: id)?.pendingOwner == .current())
            #expect(walletError { try store.commitRun(stale, effects: [], receipt: [], receiptID: [1], spentAt: 12) }?.kind == "conflict")
            try store.commitRun(fresh, effects: [], receipt: [], receiptID: [2], spentAt: 12)
            #expect(try store.token(id: id)?.receiptID == [2])
        }
    }

    @Test func aWrongRunIdCannotCommitAndAbortGivesTheTokenBack() throws {
        try withWallet { store in
            let id = Fixture.id([0xcf])
            _ = try store.importToken(Fixture.token(id), now: 1)
            let run = try store.beginRun(id: id, owner: .current(), startedAt: 2)
            let forged = PendingRun(tokenID: id, runID: [UInt8](repeating: 0, count: 16), owner: run.owner)
            let error = try #require(walletError { try store.commitRun(forged, effects: [1], receipt: [1], receiptID: [1], spentAt: 3) })
            #expect(error.kind == "conflict")
            #expect(try store.token(id: id)?.state == .pending)
            #expect(try store.receipt(tokenID: id) == nil)

            try store.abortRun(forged)  // not this token's run: nothing happens
            #expect(try store.token(id: id)?.state == .pending)
            try store.abortRun(run)
            #expect(try store.token(id: id)?.state == .held)
            try store.abortRun(run)  // twice is harmless
            #expect(walletError { try store.commitRun(run, effects: [], receipt: [], receiptID: [1], spentAt: 3) }?.kind == "conflict")
            // And the token runs again.
            let next = try store.beginRun(id: id, owner: .current(), startedAt: 4)
            try store.commitRun(next, effects: [9], receipt: [9], receiptID: [9], spentAt: 5)
            #expect(try store.receipt(tokenID: id)?.effects == [9])
        }
    }

    @Test func aReceiptIdNamesOneRun() throws {
        try withWallet { store in
            let a = Fixture.id([0xa0]), b = Fixture.id([0xb0])
            _ = try store.importToken(Fixture.token(a), now: 1)
            _ = try store.importToken(Fixture.token(b), now: 1)
            try store.commitRun(try store.beginRun(id: a, owner: .current(), startedAt: 1), effects: [], receipt: [], receiptID: [5], spentAt: 2)
            let runB = try store.beginRun(id: b, owner: .current(), startedAt: 3)
            #expect(walletError { try store.commitRun(runB, effects: [], receipt: [], receiptID: [5], spentAt: 4) }?.kind == "conflict")
            #expect(try store.token(id: b)?.state == .pending)
            #expect(walletError { try store.commitRun(runB, effects: [], receipt: [], receiptID: [], spentAt: 4) }?.kind == "invalid")
            #expect(try store.token(id: b)?.state == .pending)
        }
    }

    /// Eight threads, each with its own store on one file, claim the same token at once.
    @Test(arguments: [false, true])
    func exactlyOneOfEightRacingStoresRunsTheToken(winnerCommits: Bool) throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/wallet.khw"
            let ids = (0..<4).map { Fixture.id([0x50, UInt8($0)]) }
            let setup = try TokenStore(path: path)
            for id in ids { _ = try setup.importToken(Fixture.token(id), now: 1) }
            for id in ids {
                let outcomes = try race(path: path, threads: 8) { store in
                    let run = try store.beginRun(id: id, owner: .current(), startedAt: 2)
                    if winnerCommits { try store.commitRun(run, effects: [1], receipt: [1], receiptID: id, spentAt: 3) }
                }
                #expect(outcomes.filter { $0 == "ok" }.count == 1, "\(outcomes)")
                let allowed: Set<String> = winnerCommits ? ["ok", "running", "already_spent"] : ["ok", "running"]
                #expect(Set(outcomes).isSubset(of: allowed), "\(outcomes)")
                #expect(try setup.token(id: id)?.state == (winnerCommits ? .spent : .pending))
            }
        }
    }

    /// Opens one store per thread, releases them together into `body`, and returns each outcome:
    /// "ok" or the wallet error's kind.
    private func race(path: String, threads: Int, _ body: @escaping (TokenStore) throws -> Void) throws -> [String] {
        let stores = try (0..<threads).map { _ in try TokenStore(path: path) }
        let outcomes = Locked<[String]>([])
        let ready = DispatchGroup(), done = DispatchGroup()
        let gate = DispatchSemaphore(value: 0)
        for store in stores {
            ready.enter()
            done.enter()
            let thread = Thread {
                ready.leave()
                gate.wait()
                let outcome: String
                do {
                    try body(store)
                    outcome = "ok"
                } catch let error as WalletError {
                    outcome = error.kind
                } catch {
                    outcome = "\(error)"
                }
                outcomes.update { $0.append(outcome) }
                done.leave()
            }
            thread.start()
        }
        ready.wait()
        for _ in stores { gate.signal() }
        done.wait()
        return outcomes.value
    }
}

/// Liveness as `/proc` tells it.
@Suite struct RunOwnerTests {
    @Test func thisProcessIsAliveAndAChangedFieldIsNot() throws {
        let me = RunOwner.current()
        #expect(me.pid == getpid())
        #expect(me.startTime > 0)
        #expect(me.bootID.count == 36)
        #expect(me.isAlive)
        #expect(RunOwner.of(pid: getpid()) == me)
        // A recycled pid (other start time) and another boot are both a different process.
        #expect(!RunOwner(pid: me.pid, startTime: me.startTime + 1, bootID: me.bootID).isAlive)
        #expect(!RunOwner(pid: me.pid, startTime: me.startTime, bootID: "00000000-0000-0000-0000-000000000000").isAlive)
        #expect(!RunOwner(pid: 0, startTime: 0, bootID: me.bootID).isAlive)
    }

    @Test func anotherLiveProcessIsAliveAndItsZombieIsNot() throws {
        let child = try ChildProcess()
        let owner = try #require(RunOwner.of(pid: child.pid))
        #expect(owner.isAlive)
        #expect(owner.startTime >= RunOwner.current().startTime)
        child.killLeavingZombie()
        #expect(ProcFS.startTime(of: child.pid)?.isZombie == true)
        #expect(!owner.isAlive)
    }

    @Test func aReapedProcessIsDead() throws {
        let pid = try Fixture.deadPID()
        #expect(RunOwner.of(pid: pid) == nil)
        #expect(!(try Fixture.deadOwner()).isAlive)
    }
}
