// Codable JSON, Data, Date and FileManager from FoundationEssentials: Foundation proper would link ICU into keyhost.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import KeyhostFiles
#if canImport(Glibc)
import Glibc
#endif

/// The parameters a checkpoint belongs to. Resuming with others would mix the answers of two different jobs,
/// so any difference is refused.
public struct CheckpointParameters: Codable, Equatable, Sendable {
    public var scheme: String
    public var keyIdentity: String
    public var usageSource: String
    public var receiveGapLimit: Int
    public var changeGapLimit: Int
    public var accountGapLimit: Int
    public var accounts: String
    public var indexes: String

    /// Human-readable differences from `other` ("receive gap limit 20 in the checkpoint, 50 now").
    func differences(from stored: CheckpointParameters) -> [String] {
        var out = [String]()
        func check<T: Equatable>(_ name: String, _ keyPath: KeyPath<CheckpointParameters, T>) {
            if self[keyPath: keyPath] != stored[keyPath: keyPath] {
                out.append("\(name) \(stored[keyPath: keyPath]) in the checkpoint, \(self[keyPath: keyPath]) now")
            }
        }
        check("scheme", \.scheme)
        check("key", \.keyIdentity)
        check("usage source", \.usageSource)
        check("receive gap limit", \.receiveGapLimit)
        check("change gap limit", \.changeGapLimit)
        check("account gap limit", \.accountGapLimit)
        check("account range", \.accounts)
        check("index range", \.indexes)
        return out
    }
}

/// The usage answers a job already has, kept in a JSON file so an interrupted job resumes without asking the
/// usage source again (remote sources are slow, rate-limited and sometimes paid).
///
/// Written atomically (temporary file, then rename) with mode 0600: it lists a wallet's addresses, which is
/// private even though it holds no keys.
public final class DiscoveryCheckpoint {
    /// On-disk form.
    struct File: Codable {
        var format: String
        var version: Int
        var parameters: CheckpointParameters
        var complete: Bool
        var used: [String]
        var unused: [String]
    }

    public let path: String
    public let parameters: CheckpointParameters
    private var used: [String] = []
    private var unused: [String] = []
    private var known: [String: Bool] = [:]
    private var dirty = false
    private var lastWrite = Date.distantPast
    /// Answers loaded from the file when the job started.
    public private(set) var loadedCount = 0

    static let format = "keyhost-discovery-checkpoint"
    /// The largest checkpoint read: room for the answers of several million addresses; checked while reading.
    static let maximumFileSize = 512 * BoundedFile.mebibyte

    /// Opens `path`: loads it if it exists (refusing other parameters), or starts empty. An interrupted
    /// scan's answers are all kept; of a finished scan's, only the used ones.
    public init(path: String, parameters: CheckpointParameters) throws {
        self.path = path
        self.parameters = parameters
        guard FileManager.default.fileExists(atPath: path) else { return }
        let file: File
        do {
            file = try JSONDecoder().decode(File.self, from: Data(BoundedFile.read(path, limit: Self.maximumFileSize, regularOnly: true)))
        } catch let error as BoundedFile.ReadError {
            throw DiscoveryError.checkpoint(path: path, detail: "cannot be read: \(error.problem)")
        } catch let error as DecodingError {
            throw DiscoveryError.checkpoint(path: path, detail: "is not a keyhost discovery checkpoint (\(Self.describe(error)))")
        } catch {
            throw DiscoveryError.checkpoint(path: path, detail: "cannot be read: \(error)")
        }
        guard file.format == Self.format, file.version == 1 else {
            throw DiscoveryError.checkpoint(path: path, detail: "has format \(file.format) version \(file.version); expected \(Self.format) version 1")
        }
        let differences = parameters.differences(from: file.parameters)
        guard differences.isEmpty else { throw DiscoveryError.checkpointMismatch(path: path, differences: differences) }
        used = file.used
        for address in used { known[address] = true }
        if file.complete {
            // A finished scan is a snapshot: an address used then is used for good, but one unused then may
            // have been used since, so those are asked again (only an interrupted scan resumes as it was).
            refreshed = file.unused.count
        } else {
            unused = file.unused
            for address in unused { known[address] = false }
        }
        loadedCount = known.count
    }

    /// Addresses a finished scan had found unused, asked again this time; 0 when the checkpoint was resumed.
    public private(set) var refreshed = 0

    /// The known usage of `address`, if any.
    public func usage(of address: String) -> Bool? { known[address] }

    /// Records answers (kept in memory until `save`).
    public func record(_ addresses: [String], _ usage: [Bool]) {
        for (address, isUsed) in zip(addresses, usage) where known[address] == nil {
            known[address] = isUsed
            if isUsed { used.append(address) } else { unused.append(address) }
            dirty = true
        }
    }

    /// Writes the file if there is something new and `interval` seconds have passed (always when `force`).
    public func save(complete: Bool = false, force: Bool = false, interval: Double = 0) throws {
        guard dirty || force else { return }
        guard force || Date().timeIntervalSince(lastWrite) >= interval else { return }
        let file = File(format: Self.format, version: 1, parameters: parameters, complete: complete, used: used, unused: unused)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data: Data
        do { data = try encoder.encode(file) } catch {
            throw DiscoveryError.checkpoint(path: path, detail: "cannot be encoded: \(error)")
        }
        try Self.writeAtomically(data, to: path)
        dirty = false
        lastWrite = Date()
    }

    /// Written whole (AtomicFile: a crash leaves the old checkpoint or the new one, never half of one), 0600.
    static func writeAtomically(_ data: Data, to path: String) throws {
        do {
            try AtomicFile.write(Array(data), to: path, mode: 0o600)
        } catch let error as AtomicFile.WriteError {
            throw DiscoveryError.checkpoint(path: path, detail: "cannot be written: \(error.problem)")
        }
    }

    static func describe(_ error: DecodingError) -> String {
        switch error {
        case .dataCorrupted(let context): return context.debugDescription
        case .keyNotFound(let key, _): return "missing \(key.stringValue)"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "wrong type at \(context.codingPath.map(\.stringValue).joined(separator: "."))"
        @unknown default: return "\(error)"
        }
    }
}
