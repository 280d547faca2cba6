import KeyhostFiles

/// A ledger file's permissions: what was deposited, and by whom, is the issuer's business only.
enum LedgerFile {
    static func prepare(_ path: String) throws {
        do {
            try PrivateFile.prepare(path, what: "ledger")
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
