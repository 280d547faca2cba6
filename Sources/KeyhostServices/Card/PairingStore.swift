// JSON, Data and FileManager from FoundationEssentials (the code Foundation re-exports on Linux);
// nothing here needs Foundation proper, which would bring ICU.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import KeyhostCard
import KeyhostCrypto
import KeyhostFiles
import KeyhostWallet

#if canImport(Glibc)
import Glibc
#endif

/// Secure channel v1 pairings this host made, one per card instance UID, so sessions reuse a slot instead
/// of taking a new one each time.
///
/// The file (default `$XDG_STATE_HOME/keyhost/pairings.json`, else `~/.local/state/keyhost/pairings.json`)
/// is JSON `{"version": 1, "cards": {"<uid hex>": {"index": 0, "key": "<hex>", "applet": "3.2", "paired_at": "..."}}}`.
/// Pairing keys are secrets: the folder is 0700 and the file 0600; every change is a read-modify-write under an
/// exclusive `flock` on `pairings.json.lock`, written to a temporary file (0600, fsync'd) renamed over the old
/// one, so a crash leaves the old or the new file. No PIN, PUK or pairing password is ever stored.
public final class PairingStore {
    /// Where the pairings are kept.
    public enum Location: Equatable {
        case file(String)
        /// Pairings kept for this process only (virtual in-memory cards, `pairing_store = false`).
        case memory
    }

    /// Where this store keeps its pairings.
    public let location: Location
    private var memory: [String: Entry] = [:]

    struct Entry: Codable, Equatable {
        var index: Int
        var key: String
        var applet: String?
        var paired_at: String?
    }

    private struct File: Codable {
        var version: Int
        var cards: [String: Entry]
    }

    /// A store at `location` (a file is read at each use, not now).
    public init(_ location: Location) { self.location = location }

    /// The largest store read; one card's pairing takes well under a KiB.
    static let maximumFileSize = 16 * BoundedFile.mebibyte

    /// `$XDG_STATE_HOME/keyhost/pairings.json` (an absolute XDG_STATE_HOME only, as the spec says), else
    /// `$HOME/.local/state/keyhost/pairings.json`.
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") {
            return state + "/keyhost/pairings.json"
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? PairingStore.passwdHome()
        return home + "/.local/state/keyhost/pairings.json"
    }

    /// The file, or nil for a store in memory.
    public var path: String? {
        if case .file(let path) = location { return path }
        return nil
    }

    // MARK: - Reading and writing

    /// This host's pairing with card `uid`, if stored.
    public func lookup(uid: [UInt8]) throws -> Pairing? {
        let entry: Entry?
        switch location {
        case .memory: entry = memory[Hex.encode(uid)]
        case .file(let path): entry = try withLock(path) { try read(path).cards[Hex.encode(uid)] }
        }
        guard let entry else { return nil }
        guard (0...255).contains(entry.index), var key = try? Hex.decode(entry.key), key.count == 32 else {
            throw CardServiceError(kind: "pairing_store", "pairing store \(path ?? "in memory"): the entry of card \(Hex.encode(uid)) is malformed; remove it")
        }
        defer { zero(&key) }
        return try Pairing(index: UInt8(entry.index), key: SecretBytes(key))
    }

    /// Stores the pairing with card `uid` (replacing any), with the applet version for people reading the file.
    public func save(uid: [UInt8], pairing: Pairing, applet: String?) throws {
        let entry = Entry(index: Int(pairing.index), key: Hex.encode(pairing.key.revealedBytes()), applet: applet, paired_at: PairingStore.timestamp())
        try modify { $0[Hex.encode(uid)] = entry }
    }

    /// Forgets the pairing with card `uid`.
    public func remove(uid: [UInt8]) throws {
        try modify { $0[Hex.encode(uid)] = nil }
    }

    private func modify(_ change: (inout [String: Entry]) -> Void) throws {
        switch location {
        case .memory:
            change(&memory)
        case .file(let path):
            try withLock(path) {
                var file = try read(path)
                change(&file.cards)
                try write(file, to: path)
            }
        }
    }

    private func read(_ path: String) throws -> File {
        guard FileManager.default.fileExists(atPath: path) else { return File(version: 1, cards: [:]) }
        do {
            let data = Data(try BoundedFile.read(path, limit: PairingStore.maximumFileSize, regularOnly: true))
            let file = try JSONDecoder().decode(File.self, from: data)
            guard file.version == 1 else {
                throw CardServiceError(kind: "pairing_store", "pairing store \(path) has version \(file.version); only version 1 is read here (a newer release wrote it?)")
            }
            return file
        } catch let error as CardServiceError {
            throw error
        } catch {
            throw CardServiceError(kind: "pairing_store", "pairing store \(path) is unreadable (\(PairingStore.reason(error))); move it away to start a new one")
        }
    }

    private func write(_ file: File, to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        var data = try encoder.encode(file)
        defer { data.resetBytes(in: 0..<data.count) }
        do {
            try data.withUnsafeBytes { try AtomicFile.write($0, to: path, mode: 0o600) }
        } catch let error as AtomicFile.WriteError {
            throw CardServiceError(kind: "pairing_store", "pairing store \(path): write failed: \(error.problem)")
        }
    }

    /// Runs `body` holding an exclusive lock on `<path>.lock`, creating the folder (0700) first.
    private func withLock<R>(_ path: String, _ body: () throws -> R) throws -> R {
        try PairingStore.makeFolder(PathText.parent(path))
        let lockPath = path + ".lock"
        let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw ioError(lockPath, "open") }
        defer { close(fd) }
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else { throw ioError(lockPath, "lock") }
        }
        defer { _ = flock(fd, LOCK_UN) }
        return try body()
    }

    /// Creates `folder` and missing parents with mode 0700; the store's own folder is made 0700 if it is wider.
    static func makeFolder(_ folder: String) throws {
        var existing = stat()
        if stat(folder, &existing) == 0 {
            guard existing.st_mode & S_IFMT == S_IFDIR else {
                throw CardServiceError(kind: "pairing_store", "pairing store folder \(folder) is not a folder")
            }
        } else {
            let parent = PathText.parent(folder)
            if !parent.isEmpty && parent != folder { try makeFolder(parent) }
            if mkdir(folder, 0o700) != 0 && errno != EEXIST {
                throw CardServiceError(kind: "pairing_store", "cannot create pairing store folder \(folder): \(String(cString: strerror(errno)))")
            }
            return
        }
        var info = stat()
        if stat(folder, &info) == 0, info.st_uid == getuid(), info.st_mode & 0o077 != 0, PathText.lastComponent(folder) == "keyhost" {
            chmod(folder, 0o700)
        }
    }

    private func ioError(_ path: String, _ operation: String) -> CardServiceError {
        CardServiceError(kind: "pairing_store", "pairing store \(path): \(operation) failed: \(String(cString: strerror(errno)))")
    }

    private static func reason(_ error: Error) -> String {
        if let error = error as? BoundedFile.ReadError { return error.problem }
        if let error = error as? DecodingError {
            switch error {
            case .dataCorrupted(let context): return context.debugDescription
            case .keyNotFound(let key, _): return "missing field '\(key.stringValue)'"
            case .typeMismatch(_, let context), .valueNotFound(_, let context): return context.debugDescription
            @unknown default: return "\(error)"
            }
        }
        return "\(error)"
    }

    /// Now as `2026-11-24T01:02:03Z`, what ISO8601DateFormatter wrote (UTC, whole seconds).
    static func timestamp() -> String {
        UTCTime.iso8601(Int64(time(nil)))
    }

    /// The user's home from the password database, for when HOME is unset (as NSHomeDirectory did).
    static func passwdHome() -> String {
        guard let entry = getpwuid(getuid()), let directory = entry.pointee.pw_dir else { return "/" }
        return String(cString: directory)
    }
}
