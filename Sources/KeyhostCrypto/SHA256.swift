import CKeyhostSHA256

/// SHA-256 in keyhost's own C (SHA-NI where the CPU has it), so that what only hashes never loads
/// libcrypto: a token run's worker, a wallet's batch or the ledger would otherwise spend more on
/// loading and initialising OpenSSL than on all their hashing.
public struct SHA256 {
    private var context = kh_sha256_ctx()

    /// A fresh hash.
    public init() { kh_sha256_init(&context) }

    /// Adds `bytes` to the hashed input.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        kh_sha256_update(&context, base, bytes.count)
    }

    /// Adds `bytes` to the hashed input.
    public mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// The digest; the state (which may have held secret input) is wiped and must not be used again.
    public mutating func finalize() -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: 32) { out, count in
            kh_sha256_final(&context, out.baseAddress!)
            count = 32
        }
    }

    /// The digest of `input`, written to the 32 bytes at `out`.
    @inline(__always)
    static func hash(_ input: UnsafeRawBufferPointer, into out: UnsafeMutableRawPointer) {
        kh_sha256(input.baseAddress, input.count, out.assumingMemoryBound(to: UInt8.self))
    }

    /// Whether this CPU's SHA extensions are used.
    public static var usesHardware: Bool { kh_sha256_hardware_available() == 1 }

    /// Runs `body` with the portable code only (for tests comparing the two).
    public static func withPortableCode<R>(_ body: () throws -> R) rethrows -> R {
        let previous = kh_sha256_allow_hardware(0)
        defer { _ = kh_sha256_allow_hardware(previous) }
        return try body()
    }
}
