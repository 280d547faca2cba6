import KeyhostCrypto

/// The output script forms this module recognises; anything else is `.nonStandard` and is never signed.
public enum ScriptTemplate: Equatable, Sendable {
    case p2pkh(hash: [UInt8])
    case p2sh(hash: [UInt8])
    case p2wpkh(hash: [UInt8])
    case p2wsh(hash: [UInt8])
    case p2tr(outputKey: [UInt8])
    /// Bare `m <keys…> n OP_CHECKMULTISIG` (inside P2SH or P2WSH).
    case multisig(required: Int, keys: [[UInt8]])
    case nullData
    /// A witness program of a version or size with no meaning yet.
    case futureWitness(version: Int, program: [UInt8])
    case nonStandard

    public init(_ script: [UInt8]) {
        let s = script
        if s.count == 25, s[0] == 0x76, s[1] == 0xa9, s[2] == 0x14, s[23] == 0x88, s[24] == 0xac {
            self = .p2pkh(hash: Array(s[3..<23]))
        } else if s.count == 23, s[0] == 0xa9, s[1] == 0x14, s[22] == 0x87 {
            self = .p2sh(hash: Array(s[2..<22]))
        } else if s.count == 22, s[0] == 0x00, s[1] == 0x14 {
            self = .p2wpkh(hash: Array(s[2...]))
        } else if s.count == 34, s[0] == 0x00, s[1] == 0x20 {
            self = .p2wsh(hash: Array(s[2...]))
        } else if s.count == 34, s[0] == 0x51, s[1] == 0x20 {
            self = .p2tr(outputKey: Array(s[2...]))
        } else if let (version, program) = Script.witnessProgram(s) {
            self = .futureWitness(version: version, program: program)
        } else if s.first == 0x6a {
            self = .nullData
        } else if let multisig = Script.multisig(s) {
            self = .multisig(required: multisig.0, keys: multisig.1)
        } else {
            self = .nonStandard
        }
    }

    /// The short name inspect prints.
    public var name: String {
        switch self {
        case .p2pkh: return "p2pkh"
        case .p2sh: return "p2sh"
        case .p2wpkh: return "p2wpkh"
        case .p2wsh: return "p2wsh"
        case .p2tr: return "p2tr"
        case .multisig: return "multisig"
        case .nullData: return "nulldata"
        case .futureWitness(let version, _): return "witness_v\(version)"
        case .nonStandard: return "nonstandard"
        }
    }
}

public enum Script {
    static func witnessProgram(_ s: [UInt8]) -> (Int, [UInt8])? {
        guard s.count >= 4, s.count <= 42, Int(s[1]) == s.count - 2 else { return nil }
        switch s[0] {
        case 0x00: return (0, Array(s[2...]))
        case 0x51...0x60: return (Int(s[0]) - 0x50, Array(s[2...]))
        default: return nil
        }
    }

    static func multisig(_ s: [UInt8]) -> (Int, [[UInt8]])? {
        guard s.count >= 37, s.last == 0xae, (0x51...0x60).contains(s[0]), (0x51...0x60).contains(s[s.count - 2]) else { return nil }
        let m = Int(s[0]) - 0x50, n = Int(s[s.count - 2]) - 0x50
        var keys = [[UInt8]]()
        var i = 1
        while i < s.count - 2 {
            let size = Int(s[i])
            guard size == 33 || size == 65, i + 1 + size <= s.count - 2 else { return nil }
            keys.append(Array(s[(i + 1)..<(i + 1 + size)]))
            i += 1 + size
        }
        guard keys.count == n, m >= 1, m <= n else { return nil }
        return (m, keys)
    }

    /// The script pushing `data` with the smallest opcode (what the finalizer writes into scriptSigs).
    public static func push(_ data: [UInt8]) -> [UInt8] {
        var out = [UInt8]()
        switch data.count {
        case 0: out.append(0x00)
        case 1..<0x4c: out.append(UInt8(data.count))
        case 0x4c...0xff: out.append(0x4c); out.append(UInt8(data.count))
        case 0x100...0xffff: out.append(0x4d); out.appendLE(UInt64(data.count), bytes: 2)
        default: out.append(0x4e); out.appendLE(UInt64(data.count), bytes: 4)
        }
        out.append(contentsOf: data)
        return out
    }

    public static func p2pkh(_ hash: [UInt8]) -> [UInt8] { [0x76, 0xa9, 0x14] + hash + [0x88, 0xac] }
    public static func p2sh(_ hash: [UInt8]) -> [UInt8] { [0xa9, 0x14] + hash + [0x87] }
    public static func p2wpkh(_ hash: [UInt8]) -> [UInt8] { [0x00, 0x14] + hash }
    public static func p2wsh(_ hash: [UInt8]) -> [UInt8] { [0x00, 0x20] + hash }
    public static func p2tr(_ outputKey: [UInt8]) -> [UInt8] { [0x51, 0x20] + outputKey }

    /// The address an output script pays to on `coin`, or nil when it has none (OP_RETURN, bare multisig, …).
    public static func address(_ script: [UInt8], coin: Coin) -> String? {
        switch ScriptTemplate(script) {
        case .p2pkh(let hash):
            return try? Address.p2pkh(hash: hash, coin: coin)
        case .p2sh(let hash):
            guard let version = coin.p2shVersion else { return nil }
            return Base58.encodeCheck([version] + hash)
        case .p2wpkh(let program), .p2wsh(let program):
            return coin.bech32HRP.flatMap { try? SegwitAddress.encode(hrp: $0, version: 0, program: program) }
        case .p2tr(let program):
            return coin.bech32HRP.flatMap { try? SegwitAddress.encode(hrp: $0, version: 1, program: program) }
        case .futureWitness(let version, let program):
            return coin.bech32HRP.flatMap { try? SegwitAddress.encode(hrp: $0, version: version, program: program) }
        default:
            return nil
        }
    }
}
