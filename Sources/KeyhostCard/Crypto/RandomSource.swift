import KeyhostCrypto

/// Where a card or a client draws its random bytes: the system CSPRNG, or a seeded stream for reproducible sessions.
public protocol RandomSource: AnyObject {
    func bytes(_ count: Int) -> [UInt8]
}

extension RandomSource {
    /// A valid secp256k1 private key drawn from this source.
    public func privateKey() -> PrivateKey {
        while true {
            if let key = try? PrivateKey(bytes: bytes(32)) { return key }
        }
    }
}

/// The operating system CSPRNG through OpenSSL.
public final class SystemRandom: RandomSource {
    public init() {}
    public func bytes(_ count: Int) -> [UInt8] { secureRandomBytes(count) }
}

/// A deterministic stream: SHA-256(seed ‖ counter) blocks. For tests and replays only, never for real keys.
public final class SeededRandom: RandomSource {
    private let seed: [UInt8]
    private var counter: UInt64 = 0
    private var buffer: [UInt8] = []

    public init(seed: [UInt8]) { self.seed = seed }
    public convenience init(seed: String) { self.init(seed: Array(seed.utf8)) }

    public func bytes(_ count: Int) -> [UInt8] {
        while buffer.count < count {
            var block = seed
            for shift in stride(from: 56, through: 0, by: -8) { block.append(UInt8(truncatingIfNeeded: counter >> UInt64(shift))) }
            buffer += Hash.sha256(block)
            counter += 1
        }
        let out = Array(buffer.prefix(count))
        buffer.removeFirst(count)
        return out
    }
}
