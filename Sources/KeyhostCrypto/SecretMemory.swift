#if canImport(Glibc)
import Glibc
#endif

/// Overwrites a byte array its owner is done with (explicit_bzero is not optimised away).
public func zero(_ bytes: inout [UInt8]) {
    bytes.withUnsafeMutableBytes { raw in
        if let base = raw.baseAddress { explicit_bzero(base, raw.count) }
    }
}

extension SecretBytes {
    /// The secret as text for APIs that take `String` (PINs are ASCII digits). The String cannot be wiped;
    /// it lives only for the call.
    public var text: String { withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }
}
