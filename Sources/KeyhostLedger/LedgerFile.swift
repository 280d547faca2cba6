#if canImport(Glibc)
import Glibc
#endif
import KeyhostFiles

/// A ledger file's permissions: what was deposited, and by whom, is the issuer's business only.
enum LedgerFile {
    /// Makes `path` a private ledger file (0600), or with `create` false (a use that only reads, such as
    /// stats) requires it to exist already: a mistyped path must not become an empty ledger reporting 0.
    static func prepare(_ path: String, create: Bool = true) throws {
        if !create {
            var info = stat()
            if stat(path, &info) != 0 && errno == ENOENT {
                throw LedgerError(kind: "location", message: "there is no ledger at sqlite:\(path) (no such file); check the path (reading a ledger never creates one)")
            }
        }
        do {
            try PrivateFile.prepare(path, what: "ledger", create: create)
        } catch let problem as PrivateFile.Problem {
            switch problem {
            case .system(let message): throw LedgerError.store(message)
            case .notRegular: throw LedgerError.store("the ledger \(path) is not a regular file")
            case .shared(let mode):
                throw LedgerError(kind: "permissions", message: "the ledger \(path) can be read or written by other users (mode \(mode)); run 'chmod 600 \(path)' and try again")
            }
        }
    }
}
