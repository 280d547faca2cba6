import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

extension HDNode {
    /// Addresses of the non-hardened children `from ..< from + count` of this node, or of its child `chain`
    /// (0 receive, 1 change) when given; the work is split over all cores.
    ///
    /// Children are derived publicly, so an account xpub is enough. The shared libsecp256k1 context is
    /// only read here, which is safe from many threads after randomization.
    public func addresses(_ kind: AddressKind, coin: Coin = .bitcoin, chain: UInt32? = nil, from: UInt32 = 0, count: Int) throws -> [String] {
        guard count >= 0 else { throw ExtendedKeyError.invalidChild(index: from) }
        guard UInt64(from) + UInt64(count) <= UInt64(DerivationPath.hardenedOffset) else {
            throw ExtendedKeyError.hardenedFromPublic(index: UInt32(clamping: UInt64(from) + UInt64(count) - 1))
        }
        guard count > 0 else { return [] }
        let base = try chain.map { try neutered().derive(child: $0) } ?? neutered()
        try Address.checkSupported(kind, coin: coin)  // reject an unsupported kind before any work

        var results = [String](repeating: "", count: count)
        let failures = FirstFailure()
        let chunks = count < 64 ? 1 : min(count / 16, onlineProcessors() * 4)
        results.withUnsafeMutableBufferPointer { out in
            // Each chunk writes a disjoint range of indexes: the buffer is shared, no element is.
            nonisolated(unsafe) let out = out
            DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
                let start = chunk * count / chunks, end = (chunk + 1) * count / chunks
                // One HMAC context per chunk, keyed once with the shared chain code.
                let hmac = base.chainCode.withUnsafeBytes { Hash.KeyedHMAC(OpenSSL.shared.hmacSHA512Template, key: $0) }
                for j in start..<end {
                    // Every 256 addresses (about 5 ms): Ctrl-C stops a million-address call within the 100 ms people notice.
                    if (j - start) & 255 == 0, Interruption.isRequested {
                        failures.record(InterruptedError(), at: Int.min)
                        break
                    }
                    let index = from + UInt32(j)
                    do {
                        guard let point = base.publicChildPoint(index, chainCodeOut: nil, hmac: hmac) else {
                            throw ExtendedKeyError.invalidChild(index: index)
                        }
                        out[j] = try Address.encode(PublicKey(raw: point), kind: kind, coin: coin)
                    } catch {
                        failures.record(error, at: j)
                    }
                }
            }
        }
        if let error = failures.error { throw error }
        return results
    }
}

/// Processors available, as ProcessInfo.activeProcessorCount counts them (without Foundation).
private func onlineProcessors() -> Int {
    max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
}

/// Keeps the error at the lowest index, so a parallel run reports what a serial one would.
private final class FirstFailure: Sendable {
    private let state = Mutex<(index: Int, error: (any Error)?)>((Int.max, nil))

    var error: Error? { state.withLock { $0.error } }

    func record(_ error: Error, at index: Int) {
        state.withLock { state in
            if index < state.index { state = (index, error) }
        }
    }
}
