// JSON, URL and FileManager from FoundationEssentials (the same code Foundation re-exports on
// Linux): full Foundation would link ICU into everything that uses the card stack.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import KeyhostFiles

/// Keeps a `SoftKeycardState` in a JSON file, replaced atomically: the new state goes to `<file>.tmp`
/// (created with mode 0600, written, fsync'd), which is then renamed over the file and the directory fsync'd.
/// A crash at any point leaves either the old or the new file, never a mix; a stale `.tmp` is ignored.
/// The file holds the test card's secrets in clear (see `SoftKeycardState`).
public final class SoftKeycardStore {
    public let url: URL
    /// Runs after the temporary file is complete and before the rename; a test throws here to simulate a crash.
    public var beforeRename: (() throws -> Void)?

    /// The largest state file read; a real one is a few KiB.
    static let maximumFileSize = BoundedFile.mebibyte

    public init(url: URL) { self.url = url }

    var temporaryPath: String { url.path + ".tmp" }

    /// The stored state, or nil when there is no file yet.
    public func load() throws -> SoftKeycardState? {
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        let data: Data
        do { data = Data(try BoundedFile.read(url.path, limit: Self.maximumFileSize, regularOnly: true)) } catch let error as BoundedFile.ReadError {
            throw SoftKeycardError.corruptState(path: url.path, reason: error.problem)
        }
        let state: SoftKeycardState
        do { state = try JSONDecoder().decode(SoftKeycardState.self, from: data) } catch {
            throw SoftKeycardError.corruptState(path: url.path, reason: Self.reason(error))
        }
        if let problem = state.problem() { throw SoftKeycardError.corruptState(path: url.path, reason: problem) }
        return state
    }

    /// A decoding error as a sentence, not the enum's debug text.
    static func reason(_ error: Error) -> String {
        switch error as? DecodingError {
        case .dataCorrupted(let context)?: return context.debugDescription
        case .keyNotFound(let key, _)?: return "missing field '\(key.stringValue)'"
        case .typeMismatch(_, let context)?, .valueNotFound(_, let context)?:
            return "field '\(context.codingPath.map(\.stringValue).joined(separator: "."))': \(context.debugDescription)"
        default: return "\(error)"
        }
    }

    public func save(_ state: SoftKeycardState) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        let data = try encoder.encode(state)
        do {
            try AtomicFile.write(Array(data), to: url.path, mode: 0o600, temporary: temporaryPath, beforeRename: beforeRename)
        } catch let error as AtomicFile.WriteError {
            throw SoftKeycardError.io(path: error.path, operation: "write", errno: error.code)
        }
    }
}
