// Codable JSON and Data from FoundationEssentials: Foundation proper would link ICU into keyhost.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import KeyhostFiles
import Synchronization

/// The checkpoint of a discovery job: the result of every wallet it finished, each with the settings it was
/// scanned with. Run again, the job takes those wallets' results from here and asks the source nothing about
/// them; a wallet whose settings changed since is scanned again. Written whole after each finished wallet (0600,
/// atomically). Read as hostile input: bounded, strictly decoded, and refused when it belongs to another source.
public final class JobCheckpoint: Sendable {
    public let path: String
    public let source: String
    private let entries: Mutex<[Entry]>

    struct Entry: Codable {
        var id: String
        var settings: String
        var result: DiscoveryResult
    }

    private struct File: Codable {
        var format: String
        var version: Int
        var source: String
        var wallets: [Entry]
    }

    static let format = "keyhost-discovery-job-checkpoint"

    /// Opens `path` for a job over `source`: loads it if it exists, or starts empty.
    public init(path: String, source: String) throws {
        self.path = path
        self.source = source
        var loaded: [Entry] = []
        if FileManager.default.fileExists(atPath: path) {
            let file: File
            do {
                file = try JSONDecoder().decode(File.self, from: Data(BoundedFile.read(path, limit: DiscoveryCheckpoint.maximumFileSize, regularOnly: true)))
            } catch let error as BoundedFile.ReadError {
                throw DiscoveryError.checkpoint(path: path, detail: "cannot be read: \(error.problem)")
            } catch {
                throw DiscoveryError.checkpoint(path: path, detail: "is not a keyhost discovery job checkpoint (\(JobCheckpoint.describe(error)))")
            }
            guard file.format == Self.format, file.version == 1 else {
                throw DiscoveryError.checkpoint(path: path, detail: "has format \(file.format.prefix(60)) version \(file.version); "
                    + "expected \(Self.format) version 1 (a single scan's checkpoint is not a job's)")
            }
            guard file.source == source else {
                throw DiscoveryError.checkpointMismatch(path: path, differences: ["source \(file.source.prefix(200)) then, \(source) now"])
            }
            loaded = file.wallets
        }
        entries = Mutex(loaded)
    }

    private static func describe(_ error: Error) -> String {
        if let decoding = error as? DecodingError { return DiscoveryCheckpoint.describe(decoding) }
        return "\(error)"
    }

    /// Wallets the file held when the job started.
    public var count: Int { entries.withLock { $0.count } }

    /// The stored result of `wallet`, if it finished before with the same settings.
    func result(for wallet: JobWallet) -> DiscoveryResult? {
        entries.withLock { entries in entries.last { $0.id == wallet.id && $0.settings == wallet.settings }?.result }
    }

    /// Records `wallet`'s result and writes the file.
    func record(_ result: DiscoveryResult, for wallet: JobWallet) throws {
        // Encoded and written under the lock, so that of two wallets finishing together the later write
        // holds both entries.
        try entries.withLock { entries in
            entries.removeAll { $0.id == wallet.id }
            entries.append(Entry(id: wallet.id, settings: wallet.settings, result: result))
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            let data: Data
            do {
                data = try encoder.encode(File(format: Self.format, version: 1, source: source, wallets: entries))
            } catch {
                throw DiscoveryError.checkpoint(path: path, detail: "cannot be encoded: \(error)")
            }
            try DiscoveryCheckpoint.writeAtomically(data, to: path)
        }
    }
}
