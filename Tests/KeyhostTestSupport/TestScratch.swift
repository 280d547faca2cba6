import Foundation

/// A fresh temporary directory for one test (named `prefix`-XXXXXX), removed afterwards.
public func withTemporaryDirectory<T>(prefix: String = "keyhost-test", _ body: (String) throws -> T) throws -> T {
    var template = Array((NSTemporaryDirectory() + prefix + "-XXXXXX").utf8CString)
    guard let made = mkdtemp(&template) else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    let directory = String(cString: made)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    return try body(directory)
}

/// The error of type `E` thrown by `body`, or nil if it threw nothing or something else.
public func thrown<E: Error, T>(_ type: E.Type, _ body: () throws -> T) -> E? {
    do {
        _ = try body()
        return nil
    } catch {
        return error as? E
    }
}

/// A value shared between test threads, guarded by a lock.
public final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value

    public init(_ value: Value) { stored = value }

    public var value: Value { lock.withLock { stored } }

    public func update(_ change: (inout Value) -> Void) { lock.withLock { change(&stored) } }
}
