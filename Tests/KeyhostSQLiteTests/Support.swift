import Foundation
import KeyhostSQLite

/// A fresh temporary directory for one test, removed afterwards.
func withTemporaryDirectory<T>(_ body: (String) throws -> T) throws -> T {
    var template = Array((NSTemporaryDirectory() + "keyhost-sqlite-XXXXXX").utf8CString)
    guard let made = mkdtemp(&template) else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    let directory = String(cString: made)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    return try body(directory)
}

/// A new database file in a temporary directory.
func withDatabase<T>(_ body: (Database) throws -> T) throws -> T {
    try withTemporaryDirectory { try body(try Database(path: $0 + "/test.db")) }
}

/// The `SQLiteError` thrown by `body`, or nil if it threw nothing or something else.
func sqliteError<T>(_ body: () throws -> T) -> SQLiteError? {
    do {
        _ = try body()
        return nil
    } catch {
        return error as? SQLiteError
    }
}

/// Runs `body` on `count` threads at once and waits for all of them.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        Thread {
            body(index)
            group.leave()
        }.start()
    }
    group.wait()
}

/// A value shared between test threads.
final class Shared<Value>: @unchecked Sendable {
    private var stored: Value
    private let lock = NSLock()
    init(_ value: Value) { stored = value }
    var value: Value { lock.withLock { stored } }
    func update(_ change: (inout Value) -> Void) { lock.withLock { change(&stored) } }
}
