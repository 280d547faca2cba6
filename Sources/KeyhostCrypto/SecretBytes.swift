#if canImport(Glibc)
import Glibc
#endif

/// Secret bytes (seeds, private keys, entropy) kept in memory that is wiped when the last reference goes.
///
/// The storage is a manually allocated buffer rather than an `[UInt8]`, because an array can be copied
/// by the runtime to places that are never wiped.
public final class SecretBytes: @unchecked Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    private let storage: UnsafeMutableRawBufferPointer

    /// Number of secret bytes.
    public let count: Int

    /// Copies `bytes` into wiped-on-release storage; the caller should not keep the source array around.
    public convenience init<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        self.init(count: bytes.count) { buffer in
            for (i, b) in bytes.enumerated() { buffer[i] = b }
        }
    }

    /// Allocates `count` zeroed bytes and lets `fill` write them in place, so the secret never lives elsewhere.
    public init(count: Int, fill: (UnsafeMutableRawBufferPointer) throws -> Void) rethrows {
        self.count = count
        storage = .allocate(byteCount: Swift.max(count, 1), alignment: 16)
        storage.initializeMemory(as: UInt8.self, repeating: 0)
        do {
            try fill(UnsafeMutableRawBufferPointer(rebasing: storage[0..<count]))
        } catch {
            wipe(storage.baseAddress, storage.count)
            storage.deallocate()
            throw error
        }
    }

    deinit {
        wipe(storage.baseAddress, storage.count)
        storage.deallocate()
    }

    /// Gives read access to the secret without copying it.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(rebasing: storage[0..<count]))
    }

    /// Copies the secret out into an ordinary array, which is NOT wiped; use only to hand it to the user.
    public func revealedBytes() -> [UInt8] {
        withUnsafeBytes { Array($0) }
    }

    /// Constant-time comparison, so equality checks do not leak where two secrets differ.
    public static func == (lhs: SecretBytes, rhs: SecretBytes) -> Bool {
        guard lhs.count == rhs.count else { return false }
        return lhs.withUnsafeBytes { a in rhs.withUnsafeBytes { b in constantTimeEqual(a, b) } }
    }

    public var description: String { "SecretBytes(\(count) bytes, redacted)" }
    public var debugDescription: String { description }
}

/// Runs `body` with a zeroed scratch buffer on the stack and wipes it afterwards.
@inline(__always)
func withWipedScratch<R>(_ count: Int, _ body: (UnsafeMutableRawBufferPointer) throws -> R) rethrows -> R {
    try withUnsafeTemporaryAllocation(byteCount: count, alignment: 16) { buffer in
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
        defer { wipe(buffer.baseAddress, count) }
        return try body(buffer)
    }
}
