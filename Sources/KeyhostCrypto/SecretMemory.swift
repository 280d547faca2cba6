#if canImport(Glibc)
import Glibc
#endif

/// Overwrites a byte array its owner is done with (explicit_bzero is not optimised away).
public func zero(_ bytes: inout [UInt8]) {
    bytes.withUnsafeMutableBytes { wipe($0.baseAddress, $0.count) }
}

extension SecretBytes {
    /// The secret as text for APIs that take `String` (PINs are ASCII digits). The String cannot be wiped;
    /// it lives only for the call.
    public var text: String { withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }
}

/// Overwrites `count` bytes at `pointer` (explicit_bzero, which the compiler keeps; unlike
/// OPENSSL_cleanse it needs no libcrypto, which paths that only sign and hash never load).
@inline(__always)
func wipe(_ pointer: UnsafeMutableRawPointer?, _ count: Int) {
    if let pointer, count > 0 { explicit_bzero(pointer, count) }
}

/// Whether two equally long buffers hold the same bytes, in time that depends only on their length.
func constantTimeEqual(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
    guard a.count == b.count else { return false }
    var difference: UInt8 = 0
    for i in 0..<a.count { difference |= a[i] ^ b[i] }
    return difference == 0
}
