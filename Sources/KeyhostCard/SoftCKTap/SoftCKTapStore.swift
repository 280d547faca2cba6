// JSON, URL and FileManager from FoundationEssentials, as SoftKeycardStore does: full Foundation would link ICU.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import KeyhostFiles

/// Errors of the software tap card itself (not card answers).
public enum SoftCKTapError: Error, Equatable, CustomStringConvertible {
    case corruptState(path: String, reason: String)
    case io(path: String, operation: String, errno: Int32)
    case invalidOption(String)

    public var description: String {
        switch self {
        case .corruptState(let path, let reason): return "soft tap card state \(path) is unreadable: \(reason); fix or delete the file"
        case .io(let path, let operation, let code): return "soft tap card state \(path): \(operation) failed (errno \(code))"
        case .invalidOption(let what): return "soft tap card: \(what)"
        }
    }
}

/// Keeps a `SoftCKTapState` in a JSON file (mode 0600), replaced atomically through `<file>.tmp` like `SoftKeycardStore`.
public final class SoftCKTapStore {
    public let url: URL
    /// The largest state file read; a real one is a few KiB.
    static let maximumFileSize = BoundedFile.mebibyte

    public init(url: URL) { self.url = url }

    /// The stored state, or nil when there is no file yet.
    public func load() throws -> SoftCKTapState? {
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        let data: Data
        do { data = Data(try BoundedFile.read(url.path, limit: Self.maximumFileSize, regularOnly: true)) } catch let error as BoundedFile.ReadError {
            throw SoftCKTapError.corruptState(path: url.path, reason: error.problem)
        }
        let state: SoftCKTapState
        do { state = try JSONDecoder().decode(SoftCKTapState.self, from: data) } catch {
            throw SoftCKTapError.corruptState(path: url.path, reason: SoftKeycardStore.reason(error))
        }
        if let problem = state.problem() { throw SoftCKTapError.corruptState(path: url.path, reason: problem) }
        return state
    }

    public func save(_ state: SoftCKTapState) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        let data = try encoder.encode(state)
        do {
            try AtomicFile.write(Array(data), to: url.path, mode: 0o600, temporary: url.path + ".tmp", beforeRename: nil)
        } catch let error as AtomicFile.WriteError {
            throw SoftCKTapError.io(path: error.path, operation: "write", errno: error.code)
        }
    }
}
