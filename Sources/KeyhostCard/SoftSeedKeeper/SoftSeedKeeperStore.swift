// JSON and FileManager from FoundationEssentials: full Foundation would link ICU into the card stack.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import KeyhostFiles

/// Keeps a `SoftSeedKeeperState` in a JSON file (mode 0600), replaced atomically as `SoftKeycardStore` does;
/// a file that is too big, not JSON, or outside the applet's limits is refused with the reason.
public final class SoftSeedKeeperStore {
    public let url: URL

    public init(url: URL) { self.url = url }

    public func load() throws -> SoftSeedKeeperState? {
        try SoftCardStateFile.load(url.path, problem: { (state: SoftSeedKeeperState) in state.problem() },
                                   corrupt: { SoftSeedKeeperError.corruptState(path: url.path, reason: $0) })
    }

    public func save(_ state: SoftSeedKeeperState) throws {
        try SoftCardStateFile.save(state, to: url.path, io: { SoftSeedKeeperError.io(path: $0, operation: "write", errno: $1) })
    }
}

/// A soft SeedKeeper's state file that cannot be used.
public enum SoftSeedKeeperError: Error, Equatable, CustomStringConvertible {
    case corruptState(path: String, reason: String)
    case io(path: String, operation: String, errno: Int32)

    public var description: String {
        switch self {
        case .corruptState(let path, let reason): return "soft SeedKeeper state \(path) is unreadable: \(reason); move it away to start a new card"
        case .io(let path, let operation, let code): return "soft SeedKeeper state \(path): \(operation) failed (errno \(code))"
        }
    }
}
