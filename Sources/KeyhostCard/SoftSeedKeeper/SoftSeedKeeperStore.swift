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
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        let data: Data
        do { data = Data(try BoundedFile.read(url.path, limit: BoundedFile.mebibyte, regularOnly: true)) } catch let error as BoundedFile.ReadError {
            throw SoftSeedKeeperError.corruptState(path: url.path, reason: error.problem)
        }
        let state: SoftSeedKeeperState
        do { state = try JSONDecoder().decode(SoftSeedKeeperState.self, from: data) } catch {
            throw SoftSeedKeeperError.corruptState(path: url.path, reason: SoftKeycardStore.reason(error))
        }
        if let problem = state.problem() { throw SoftSeedKeeperError.corruptState(path: url.path, reason: problem) }
        return state
    }

    public func save(_ state: SoftSeedKeeperState) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        let data = try encoder.encode(state)
        do {
            try AtomicFile.write(Array(data), to: url.path, mode: 0o600, temporary: url.path + ".tmp", beforeRename: nil)
        } catch let error as AtomicFile.WriteError {
            throw SoftSeedKeeperError.io(path: error.path, operation: "write", errno: error.code)
        }
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
