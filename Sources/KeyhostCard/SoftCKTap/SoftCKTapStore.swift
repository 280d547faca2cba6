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
    public init(url: URL) { self.url = url }

    /// The stored state, or nil when there is no file yet.
    public func load() throws -> SoftCKTapState? {
        try SoftCardStateFile.load(url.path, problem: { (state: SoftCKTapState) in state.problem() },
                                   corrupt: { SoftCKTapError.corruptState(path: url.path, reason: $0) })
    }

    public func save(_ state: SoftCKTapState) throws {
        try SoftCardStateFile.save(state, to: url.path, io: { SoftCKTapError.io(path: $0, operation: "write", errno: $1) })
    }
}
