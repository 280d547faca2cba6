import ArgumentParser
import Foundation
import KeyhostLedger
import KeyhostLedgerPostgres
import KeyhostRecord
import KeyhostTokens
import KeyhostWorkerProcess

/// `keyhost-ledger pipe --db URL [--issuer HEX…]`: a ledger for the keyhost process that started
/// it, one line of JSON per request on standard input and per answer on standard output (the
/// exchange is described in KeyhostLedger's LedgerProcess.swift). The password comes from
/// PGPASSWORD, never from the command line. Ends when keyhost closes its end, whatever it is doing.
struct Pipe: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pipe",
        abstract: "Serve one keyhost process a ledger over standard input and output (line-delimited JSON).",
        shouldDisplay: false
    )
    @Option(help: ArgumentHelp("The database: postgres://USER@HOST:PORT/DB (password from PGPASSWORD) or sqlite:FILE.", valueName: "db")) var db: String
    @Option(help: ArgumentHelp("An issuer the ledger serves (none: stats only).", valueName: "hex")) var issuer: [String] = []

    /// The longest request: a thousand chains are a few MiB.
    static let maxRequestBytes = 256 << 20

    func run() throws {
        // First: the watch below ends this process as soon as its standard input is closed.
        do { try CommandLinePassword.refuse(db, option: "--db") } catch {
            Self.answer(Self.failure(error))
            throw ExitCode(1)
        }
        Self.exitWhenKeyhostDoes()
        // Ctrl-C at keyhost's REPL reaches the whole process group: the ledger stays open for the
        // next line. keyhost decides when this process ends, by closing its end.
        signal(SIGINT, SIG_IGN)
        let ledger: LocalTokenLedger
        do {
            let issuers = try LedgerIssuers.parse(issuer, required: false)
            let location = try LedgerLocation(db)
            let store = try blocking { try await location.open() }
            ledger = try LocalTokenLedger(store: store, issuers: issuers, worker: try issuers.isEmpty ? "" : WorkerProgram.path())
        } catch {
            Self.answer(Self.failure(error))
            throw ExitCode(1)
        }
        Self.answer(.object([("ready", .object([("location", .string(ledger.displayName))]))]))
        while let line = readLine(strippingNewline: true) {
            let request: JSONValue
            do {
                request = try JSONValue.parse(Array(line.utf8), maxBytes: Self.maxRequestBytes)
            } catch {
                Self.answer(LedgerJSON.error(kind: "protocol", message: "the request is not JSON: \(error)"))
                continue
            }
            guard case .object(let members) = request, members.count == 1, let verb = members.first else {
                Self.answer(LedgerJSON.error(kind: "protocol", message: "a request is one of {\"deposit\": {…}}, {\"stats\": {}}, {\"close\": {}}"))
                continue
            }
            switch verb.key {
            case "deposit":
                do {
                    let chains = try TokenLedger.parse(armored: try LedgerJSON.depositChains(verb.value))
                    Self.answer(LedgerJSON.results(try ledger.deposit(chains), chain: TokenChain.self))
                } catch {
                    Self.answer(Self.failure(error))
                }
            case "stats":
                do {
                    Self.answer(LedgerJSON.stats(try ledger.stats()))
                } catch {
                    Self.answer(Self.failure(error))
                }
            case "close":
                ledger.close()
                Self.answer(.object([("closed", .bool(true))]))
                return
            default:
                Self.answer(LedgerJSON.error(kind: "protocol", message: "unknown request \(verb.key.prefix(40).debugDescription)"))
            }
        }
        ledger.close()
    }

    /// A ledger error as it is; anything else is the store's (the message says what failed).
    static func failure(_ error: Error) -> Record {
        if let error = error as? LedgerError { return LedgerJSON.error(error) }
        return LedgerJSON.error(kind: "store", message: "\(error)")
    }

    static func answer(_ record: Record) {
        var bytes = LedgerJSON.encode(record)
        bytes.append(UInt8(ascii: "\n"))
        var written = 0
        while written < bytes.count {
            let n = bytes[written...].withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                _exit(1)  // keyhost is gone
            }
            written += n
        }
    }

    /// keyhost holds the other end of standard input: when it closes (keyhost ended, even by
    /// SIGKILL), poll reports a hang-up and this process ends at once, whatever it is waiting on.
    /// An open transaction is rolled back by the database when the connection drops.
    static func exitWhenKeyhostDoes() {
        Thread.detachNewThread {
            var watch = pollfd(fd: 0, events: 0, revents: 0)  // hang-up and errors are reported unasked
            while true {
                let r = poll(&watch, 1, -1)
                if r > 0 && watch.revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 { _exit(0) }
                if r < 0 && errno != EINTR { _exit(1) }
            }
        }
    }
}
