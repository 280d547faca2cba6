/// Keccak-256 as Ethereum uses it: Keccak[r=1088, c=512] with the original 0x01 padding.
///
/// OpenSSL 3.0 has only SHA3-256, which pads with 0x06 and so gives different digests.
public enum Keccak256 {
    /// Keccak-256 of `data`.
    public static func hash(_ data: [UInt8]) -> [UInt8] {
        data.withUnsafeBytes { hash(UnsafeRawBufferPointer($0)) }
    }

    /// Keccak-256 of the bytes in `input`.
    public static func hash(_ input: UnsafeRawBufferPointer) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: 32) { out, count in
            hash(input, into: UnsafeMutableRawPointer(out.baseAddress!))
            count = 32
        }
    }

    static let rate = 136

    /// Writes the 32-byte digest of `input` to `out`.
    static func hash(_ input: UnsafeRawBufferPointer, into out: UnsafeMutableRawPointer) {
        var state = KeccakState()
        var offset = 0
        while input.count - offset >= rate {
            state.absorb(UnsafeRawBufferPointer(rebasing: input[offset..<offset + rate]))
            state.permute()
            offset += rate
        }
        // The final block is padded in a stack buffer so the caller's input is never read past its end.
        withUnsafeTemporaryAllocation(byteCount: rate, alignment: 8) { block in
            block.initializeMemory(as: UInt8.self, repeating: 0)
            let tail = input.count - offset
            if tail > 0 {
                block.baseAddress!.copyMemory(from: input.baseAddress! + offset, byteCount: tail)
            }
            block[tail] ^= 0x01
            block[rate - 1] ^= 0x80
            state.absorb(UnsafeRawBufferPointer(block))
        }
        state.permute()
        state.squeeze32(into: out)
    }
}

/// The 1600-bit Keccak state as 25 little-endian lanes.
struct KeccakState {
    // A homogeneous tuple is laid out contiguously, so it can be addressed as 25 lanes without a heap array.
    var lanes: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
                UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
                UInt64, UInt64, UInt64, UInt64, UInt64) =
        (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)

    /// XORs one rate-sized block into the state.
    @inline(__always)
    mutating func absorb(_ block: UnsafeRawBufferPointer) {
        withUnsafeMutableBytes(of: &lanes) { state in
            let words = state.bindMemory(to: UInt64.self)
            for i in 0..<(block.count / 8) {
                words[i] ^= UInt64(littleEndian: block.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self))
            }
        }
    }

    @inline(__always)
    func squeeze32(into out: UnsafeMutableRawPointer) {
        out.storeBytes(of: lanes.0.littleEndian, toByteOffset: 0, as: UInt64.self)
        out.storeBytes(of: lanes.1.littleEndian, toByteOffset: 8, as: UInt64.self)
        out.storeBytes(of: lanes.2.littleEndian, toByteOffset: 16, as: UInt64.self)
        out.storeBytes(of: lanes.3.littleEndian, toByteOffset: 24, as: UInt64.self)
    }

    @inline(__always)
    private func rotl(_ v: UInt64, _ n: UInt64) -> UInt64 {
        (v &<< n) | (v &>> (64 &- n))
    }

    private static let roundConstants: [UInt64] = [
        0x0000000000000001, 0x0000000000008082, 0x800000000000808A, 0x8000000080008000,
        0x000000000000808B, 0x0000000080000001, 0x8000000080008081, 0x8000000000008009,
        0x000000000000008A, 0x0000000000000088, 0x0000000080008009, 0x000000008000000A,
        0x000000008000808B, 0x800000000000008B, 0x8000000000008089, 0x8000000000008003,
        0x8000000000008002, 0x8000000000000080, 0x000000000000800A, 0x800000008000000A,
        0x8000000080008081, 0x8000000000008080, 0x0000000080000001, 0x8000000080008008,
    ]

    /// Keccak-f[1600]: 24 rounds of theta, rho, pi, chi, iota, unrolled over the lanes because
    /// loops over an indexed state were measured slower in Swift (bounds checks, no register allocation).
    mutating func permute() {
        let roundConstants = KeccakState.roundConstants
        var a00 = lanes.0
        var a01 = lanes.1
        var a02 = lanes.2
        var a03 = lanes.3
        var a04 = lanes.4
        var a05 = lanes.5
        var a06 = lanes.6
        var a07 = lanes.7
        var a08 = lanes.8
        var a09 = lanes.9
        var a10 = lanes.10
        var a11 = lanes.11
        var a12 = lanes.12
        var a13 = lanes.13
        var a14 = lanes.14
        var a15 = lanes.15
        var a16 = lanes.16
        var a17 = lanes.17
        var a18 = lanes.18
        var a19 = lanes.19
        var a20 = lanes.20
        var a21 = lanes.21
        var a22 = lanes.22
        var a23 = lanes.23
        var a24 = lanes.24
        for round in 0..<24 {
            let c0 = a00 ^ a05 ^ a10 ^ a15 ^ a20
            let c1 = a01 ^ a06 ^ a11 ^ a16 ^ a21
            let c2 = a02 ^ a07 ^ a12 ^ a17 ^ a22
            let c3 = a03 ^ a08 ^ a13 ^ a18 ^ a23
            let c4 = a04 ^ a09 ^ a14 ^ a19 ^ a24
            let d0 = c4 ^ rotl(c1, 1)
            let d1 = c0 ^ rotl(c2, 1)
            let d2 = c1 ^ rotl(c3, 1)
            let d3 = c2 ^ rotl(c4, 1)
            let d4 = c3 ^ rotl(c0, 1)
            let b00 = a00 ^ d0
            let b10 = rotl(a01 ^ d1, 1)
            let b20 = rotl(a02 ^ d2, 62)
            let b05 = rotl(a03 ^ d3, 28)
            let b15 = rotl(a04 ^ d4, 27)
            let b16 = rotl(a05 ^ d0, 36)
            let b01 = rotl(a06 ^ d1, 44)
            let b11 = rotl(a07 ^ d2, 6)
            let b21 = rotl(a08 ^ d3, 55)
            let b06 = rotl(a09 ^ d4, 20)
            let b07 = rotl(a10 ^ d0, 3)
            let b17 = rotl(a11 ^ d1, 10)
            let b02 = rotl(a12 ^ d2, 43)
            let b12 = rotl(a13 ^ d3, 25)
            let b22 = rotl(a14 ^ d4, 39)
            let b23 = rotl(a15 ^ d0, 41)
            let b08 = rotl(a16 ^ d1, 45)
            let b18 = rotl(a17 ^ d2, 15)
            let b03 = rotl(a18 ^ d3, 21)
            let b13 = rotl(a19 ^ d4, 8)
            let b14 = rotl(a20 ^ d0, 18)
            let b24 = rotl(a21 ^ d1, 2)
            let b09 = rotl(a22 ^ d2, 61)
            let b19 = rotl(a23 ^ d3, 56)
            let b04 = rotl(a24 ^ d4, 14)
            a00 = b00 ^ (~b01 & b02)
            a01 = b01 ^ (~b02 & b03)
            a02 = b02 ^ (~b03 & b04)
            a03 = b03 ^ (~b04 & b00)
            a04 = b04 ^ (~b00 & b01)
            a05 = b05 ^ (~b06 & b07)
            a06 = b06 ^ (~b07 & b08)
            a07 = b07 ^ (~b08 & b09)
            a08 = b08 ^ (~b09 & b05)
            a09 = b09 ^ (~b05 & b06)
            a10 = b10 ^ (~b11 & b12)
            a11 = b11 ^ (~b12 & b13)
            a12 = b12 ^ (~b13 & b14)
            a13 = b13 ^ (~b14 & b10)
            a14 = b14 ^ (~b10 & b11)
            a15 = b15 ^ (~b16 & b17)
            a16 = b16 ^ (~b17 & b18)
            a17 = b17 ^ (~b18 & b19)
            a18 = b18 ^ (~b19 & b15)
            a19 = b19 ^ (~b15 & b16)
            a20 = b20 ^ (~b21 & b22)
            a21 = b21 ^ (~b22 & b23)
            a22 = b22 ^ (~b23 & b24)
            a23 = b23 ^ (~b24 & b20)
            a24 = b24 ^ (~b20 & b21)
            a00 ^= roundConstants[round]
        }
        lanes.0 = a00
        lanes.1 = a01
        lanes.2 = a02
        lanes.3 = a03
        lanes.4 = a04
        lanes.5 = a05
        lanes.6 = a06
        lanes.7 = a07
        lanes.8 = a08
        lanes.9 = a09
        lanes.10 = a10
        lanes.11 = a11
        lanes.12 = a12
        lanes.13 = a13
        lanes.14 = a14
        lanes.15 = a15
        lanes.16 = a16
        lanes.17 = a17
        lanes.18 = a18
        lanes.19 = a19
        lanes.20 = a20
        lanes.21 = a21
        lanes.22 = a22
        lanes.23 = a23
        lanes.24 = a24
    }
}
