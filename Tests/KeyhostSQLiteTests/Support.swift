import Foundation
import KeyhostSQLite
import KeyhostTestSupport

/// A new database file in a temporary directory.
func withDatabase<T>(_ body: (Database) throws -> T) throws -> T {
    try withTemporaryDirectory(prefix: "keyhost-sqlite") { try body(try Database(path: $0 + "/test.db")) }
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
