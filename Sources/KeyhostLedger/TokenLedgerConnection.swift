import KeyhostCrypto
import KeyhostTokens
import KeyhostWorkerProcess

/// An issuer's ledger as keyhost's CLI and Lua use it, opened on its database: a SQLite file is
/// verified and recorded in this process; a PostgreSQL database in a `keyhost-ledger` child
/// (`LedgerProcess`), so that keyhost itself links no PostgreSQL driver, no NIO and no Foundation
/// for it. Both answer with the same results and the same `LedgerError` kinds.
///
/// Calls block the calling thread; one thread at a time.
public protocol TokenLedgerConnection: AnyObject {
    /// Where the ledger is, for messages (never with a password).
    var displayName: String { get }
    /// How many issuers the ledger serves (0: opened for `stats` only).
    var issuerCount: Int { get }
    /// Verifies every chain, then records them all in one transaction (at most `TokenLedger.maxBatch`).
    func deposit(_ chains: [TokenChain]) throws -> [DepositResult<FraudProof>]
    func stats() throws -> LedgerStats
    /// Releases the database (and ends the child); later calls fail. Calling it again does nothing.
    func close()
}

extension TokenLedgerConnection {
    /// Deposits any number of chains, in batches of at most `TokenLedger.maxBatch` (each verified and recorded
    /// in its own transaction), results in order; a refusal names its chain by the place in `chains`. Both
    /// front ends deposit through this.
    public func depositAll(_ chains: [TokenChain]) throws -> [DepositResult<FraudProof>] {
        var results: [DepositResult<FraudProof>] = []
        var start = 0
        while start < chains.count {
            let slice = Array(chains[start..<min(start + TokenLedger.maxBatch, chains.count)])
            do {
                results += try deposit(slice)
            } catch let error as LedgerError {
                throw error.shifted(by: start)
            }
            start += slice.count
        }
        return results
    }
}

public enum TokenLedgers {
    /// Opens `sqlite:FILE` or `postgres://…` (creating the tables when missing). With no issuers
    /// the ledger only answers `stats`, so a SQLite file is opened read-only and must exist already. `worker`: the keyhost executable that re-runs deposited
    /// tokens' programs (`keyhost token _worker`).
    public static func open(_ text: String, issuers: [XOnlyPublicKey], worker: String) throws -> any TokenLedgerConnection {
        switch try LedgerLocation(text) {
        case .sqlite(let path):
            return try LocalTokenLedger(store: try SQLiteLedgerStore(path: path, readOnly: issuers.isEmpty), issuers: issuers, worker: worker)
        case .postgres(let location):
            return try LedgerProcess(location: location, issuers: issuers, worker: worker)
        }
    }

    /// The error for a deposit into a ledger opened without issuers (as `Ledger.init` says it).
    static let noIssuers = LedgerError(kind: "location", message: "a ledger needs at least one issuer key to serve (--issuer HEX)")
}

/// A ledger in this process, over any store.
public final class LocalTokenLedger: TokenLedgerConnection {
    private var store: (any LedgerStore)?
    private let ledger: TokenLedger?
    public let displayName: String
    public let issuerCount: Int

    /// `worker`: the keyhost executable whose `token _worker` re-runs programs for verification.
    public init(store: any LedgerStore, issuers: [XOnlyPublicKey], worker: String) throws {
        self.store = store
        let pool = WorkerPool(executable: worker)
        ledger = issuers.isEmpty ? nil : try TokenLedger(store: store, issuers: issuers, linkPrograms: { pool.runLinks($0) })
        displayName = store.displayName
        issuerCount = issuers.count
    }

    deinit { close() }

    private func open() throws -> any LedgerStore {
        guard let store else { throw LedgerError(kind: "store", message: "\(displayName): the ledger is closed") }
        return store
    }

    public func deposit(_ chains: [TokenChain]) throws -> [DepositResult<FraudProof>] {
        _ = try open()
        guard let ledger else { throw TokenLedgers.noIssuers }
        return try blocking { try await ledger.deposit(chains) }
    }

    public func stats() throws -> LedgerStats {
        let store = try open()
        return try blocking { try await store.stats() }
    }

    public func close() {
        guard let store else { return }
        self.store = nil
        _ = try? blocking { await store.close() }
    }
}
