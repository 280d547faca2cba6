// JSON and FileManager from FoundationEssentials: full Foundation would link ICU into the card stack.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import KeyhostFiles

/// What the software twins' state files share: JSON in a 0600 file replaced atomically through `<file>.tmp`, read
/// within a bound and checked field by field (the file is input like any other). Each twin words its own errors.
enum SoftCardStateFile {
    /// The state in `path`, nil when there is no file; `corrupt(reason)` is thrown for a file that cannot be used.
    static func load<State: Decodable>(_ path: String, problem: (State) -> String?, corrupt: (String) -> Error) throws -> State? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let bytes: [UInt8]
        do { bytes = try BoundedFile.read(path, limit: BoundedFile.mebibyte, regularOnly: true) } catch let error as BoundedFile.ReadError {
            throw corrupt(error.problem)
        }
        let state: State
        do { state = try JSONDecoder().decode(State.self, from: Data(bytes)) } catch { throw corrupt(SoftKeycardStore.reason(error)) }
        if let problem = problem(state) { throw corrupt(problem) }
        return state
    }

    /// Writes `state` to `path` whole or not at all; `io(path, errno)` is thrown when it cannot.
    static func save<State: Encodable>(_ state: State, to path: String, io: (String, Int32) -> Error) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        let data = try encoder.encode(state)
        do {
            try AtomicFile.write(Array(data), to: path, mode: 0o600, temporary: path + ".tmp", beforeRename: nil)
        } catch let error as AtomicFile.WriteError {
            throw io(error.path, error.code)
        }
    }
}
