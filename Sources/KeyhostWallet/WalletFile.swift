import KeyhostFiles

/// The wallet file's permissions: a wallet lists bearer tokens, so nobody but its owner may read it.
enum WalletFile {
    static func prepare(_ path: String) throws {
        do {
            try PrivateFile.prepare(path, what: "wallet")
        } catch let problem as PrivateFile.Problem {
            switch problem {
            case .system(let message): throw WalletError.store(message)
            case .notRegular: throw WalletError.store("the wallet \(path) is not a regular file")
            case .shared(let mode):
                throw WalletError.permissions(
                    "the wallet \(path) can be read or written by other users (mode \(mode)); it holds bearer tokens: run 'chmod 600 \(path)' and try again")
            }
        }
    }
}
