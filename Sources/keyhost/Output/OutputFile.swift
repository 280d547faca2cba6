import KeyhostFiles

#if canImport(Glibc)
import Glibc
#endif

/// Where a command puts what it made when given `-o FILE`, one rule for every command: a new file, mode
/// 0600 (tokens, payments, receipts and PSBTs all say something about a wallet), written whole or not at
/// all, and never over an existing file. A note saying what was written goes to standard error, with no
/// `keyhost:` prefix (that marks errors), and not at all with `--json`, whose document says it.
enum OutputFile {
    /// Creates `path` holding `bytes`.
    static func create(_ path: String, _ bytes: [UInt8]) throws {
        do { try AtomicFile.write(bytes, to: path, mode: 0o600, replace: false) } catch let error as AtomicFile.WriteError {
            if error.code == EEXIST {
                throw Failure.kind("file_exists", "\(path) exists; keyhost never overwrites an output file: choose another name or remove it first")
            }
            throw Failure.kind("write_failed", "cannot write \(path): \(error.problem)")
        }
    }

    /// Creates `path` holding `text`.
    static func create(_ path: String, text: String) throws { try create(path, Array(text.utf8)) }

    /// The note after a file was written (`signed 2 of 2 inputs into s.psbt`).
    static func note(_ text: String) {
        Failure.writeError(text + "\n")
    }
}
