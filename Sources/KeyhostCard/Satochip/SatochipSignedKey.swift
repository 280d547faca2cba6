import KeyhostCrypto

/// Reads the applet's signed-key answers, `[size(2) | coordx | sig_size(2) | DER sig | …]`, where each signature
/// covers SHA-256 of every byte before its own size field and proves the key whose x coordinate is sent.
struct SatochipAnswerReader {
    let bytes: [UInt8]
    let instruction: SatochipInstruction
    private(set) var position = 0

    init(_ bytes: [UInt8], instruction: SatochipInstruction) {
        self.bytes = bytes
        self.instruction = instruction
    }

    var remaining: Int { bytes.count - position }

    mutating func take(_ count: Int, _ what: String) throws -> [UInt8] {
        guard count >= 0, count <= remaining else {
            throw SatochipError.invalidResponse(instruction, "\(what) needs \(count) bytes, \(remaining) left")
        }
        defer { position += count }
        return Array(bytes[position..<(position + count)])
    }

    mutating func length(_ what: String, max: Int) throws -> Int {
        let raw = try take(2, "\(what) length")
        let value = Int(raw[0]) << 8 | Int(raw[1])
        guard value <= max else { throw SatochipError.invalidResponse(instruction, "\(what) of \(value) bytes, at most \(max) expected") }
        return value
    }

    /// The next `[32 | coordx]` field.
    mutating func coordinateX() throws -> [UInt8] {
        let size = try length("public key x", max: 32)
        guard size == 32 else { throw SatochipError.invalidResponse(instruction, "public key x of \(size) bytes, 32 expected") }
        return try take(32, "public key x")
    }

    /// The next `[size | DER signature]` field, with the bytes it signs (all that came before it).
    mutating func signature() throws -> (signature: ECDSASignature, signed: [UInt8]) {
        let signed = Array(bytes[0..<position])
        let size = try length("signature", max: 72)
        guard size >= 8 else { throw SatochipError.invalidResponse(instruction, "signature of \(size) bytes") }
        let der = try take(size, "signature")
        do { return (try ECDSASignature(der: der).normalized(), signed) } catch {
            throw SatochipError.invalidResponse(instruction, "signature is not DER ECDSA")
        }
    }

    /// The full public key with x coordinate `x` whose signature over `signed` is `signature`.
    func recoverKey(x: [UInt8], signature: ECDSASignature, signed: [UInt8]) throws -> PublicKey {
        let digest = Hash.sha256(signed)
        for prefix: UInt8 in [0x02, 0x03] {
            if let key = try? PublicKey(bytes: [prefix] + x), (try? key.verify(signature, digest: digest)) == true { return key }
        }
        throw SatochipError.invalidResponse(instruction, "the signature does not prove the key it names")
    }

    /// Checks that `key` signed `signed`.
    func requireSigned(by key: PublicKey, signature: ECDSASignature, signed: [UInt8], _ what: String) throws {
        guard (try? key.verify(signature, digest: Hash.sha256(signed))) == true else {
            throw SatochipError.invalidResponse(instruction, "\(what) is not signed by the card's authentikey")
        }
    }
}
