#if canImport(Glibc)
import Glibc
#endif
import CSecp256k1
import CKeyhostProcess

/// The process's single randomized libsecp256k1 context.
///
/// Randomization blinds the signing and key-generation tables against side channels; after it, the
/// context is only read, which libsecp256k1 documents as safe from many threads at once.
final class Secp256k1: @unchecked Sendable {
    static let shared = Secp256k1()

    let context: OpaquePointer

    private init() {
        guard let context = secp256k1_context_create(UInt32(SECP256K1_CONTEXT_NONE)) else {
            fatalError("keyhost: secp256k1_context_create failed")
        }
        var seed = [UInt8](repeating: 0, count: 32)
        seed.withUnsafeMutableBytes { fillRandom($0) }
        guard secp256k1_context_randomize(context, seed) == 1 else {
            fatalError("keyhost: secp256k1_context_randomize failed")
        }
        zero(&seed)
        self.context = context
    }

    deinit { secp256k1_context_destroy(context) }
}

/// The one check for libsecp256k1's return convention: 1 is success, 0 is failure (invalid input).
@inline(__always)
func secpSucceeded(_ rc: Int32) -> Bool { rc == 1 }

/// The secp256k1 group order n, big-endian.
let secp256k1Order: [UInt8] = [
    0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFE,
    0xBA, 0xAE, 0xDC, 0xE6, 0xAF, 0x48, 0xA0, 0x3B, 0xBF, 0xD2, 0x5E, 0x8C, 0xD0, 0x36, 0x41, 0x41,
]

/// Fills `buffer` from the kernel's CSPRNG (getrandom(2), which blocks only until the kernel's pool is
/// first seeded after boot). Not OpenSSL's RAND_bytes: signing must not load libcrypto.
func fillRandom(_ buffer: UnsafeMutableRawBufferPointer) {
    var filled = 0
    while filled < buffer.count {
        let n = khp_getrandom(buffer.baseAddress! + filled, UInt(buffer.count - filled))
        if n > 0 {
            filled += n
        } else if errno != EINTR {
            // Only a kernel without getrandom (before Linux 3.17) gets here; nothing can be signed safely.
            fatalError("keyhost: getrandom failed: \(String(cString: strerror(errno)))")
        }
    }
}

/// `count` bytes from the system CSPRNG.
public func secureRandomBytes(_ count: Int) -> [UInt8] {
    var out = [UInt8](repeating: 0, count: max(count, 0))
    out.withUnsafeMutableBytes { fillRandom($0) }
    return out
}
