/// The output type an address pays to.
public enum OutputType: Equatable, Sendable, CustomStringConvertible {
    case p2pkh
    case p2sh
    case p2wpkh
    case p2wsh
    case p2tr
    /// A segwit version or program size with no established meaning yet (valid per BIP350).
    case witness(version: Int)
    case ethereum

    public var description: String {
        switch self {
        case .p2pkh: return "p2pkh"
        case .p2sh: return "p2sh"
        case .p2wpkh: return "p2wpkh"
        case .p2wsh: return "p2wsh"
        case .p2tr: return "p2tr"
        case .witness(let v): return "witness-v\(v)"
        case .ethereum: return "ethereum"
        }
    }
}

/// A decoded, validated address.
public struct DecodedAddress: Equatable, Sendable {
    /// What the address pays to.
    public let type: OutputType
    /// The hash or witness program (20 bytes for Ethereum).
    public let payload: [UInt8]
    /// The output script (empty for Ethereum, which has none).
    public let scriptPubKey: [UInt8]
}

/// Address encoding and validation for the registry's coins.
public enum Address {
    /// Throws `AddressError.unsupportedKind` unless `coin` has addresses of `kind`.
    public static func checkSupported(_ kind: AddressKind, coin: Coin) throws {
        let supported: Bool
        switch kind {
        case .ethereum: supported = coin.addressKinds.contains(.ethereum)
        case .p2pkh: supported = coin.p2pkhVersion != nil || coin.cashAddrPrefix != nil
        case .p2shP2wpkh: supported = coin.bech32HRP != nil && coin.p2shVersion != nil
        case .p2wpkh: supported = coin.bech32HRP != nil
        case .p2tr: supported = coin.bech32HRP != nil && coin.addressKinds.contains(.p2tr)
        }
        guard supported else { throw AddressError.unsupportedKind(kind, coin: coin.name) }
    }

    /// The address of `key` as `kind` on `coin`.
    public static func encode(_ key: PublicKey, kind: AddressKind, coin: Coin) throws -> String {
        try checkSupported(kind, coin: coin)
        // Never compress silently: the result would be an address of another key form.
        if !key.isCompressed && [.p2shP2wpkh, .p2wpkh, .p2tr].contains(kind) { throw AddressError.uncompressedKey(kind) }
        switch kind {
        case .ethereum:
            return EthereumAddress.address(of: key)
        case .p2pkh:
            return try p2pkh(hash: key.hash160, coin: coin)
        case .p2shP2wpkh:
            guard let version = coin.p2shVersion else { throw AddressError.unsupportedKind(kind, coin: coin.name) }
            return base58(version: version, hash: Hash.hash160(p2wpkhScript(key.hash160)))
        case .p2wpkh:
            guard let hrp = coin.bech32HRP else { throw AddressError.unsupportedKind(kind, coin: coin.name) }
            return try SegwitAddress.encode(hrp: hrp, version: 0, program: key.hash160)
        case .p2tr:
            guard let hrp = coin.bech32HRP else { throw AddressError.unsupportedKind(kind, coin: coin.name) }
            return try SegwitAddress.encode(hrp: hrp, version: 1, program: key.xOnly.taprootOutputKey().bytes)
        }
    }

    /// Decodes and validates `text` as an address of `coin`, reporting checksum, length, network and character errors distinctly.
    public static func decode(_ text: String, coin: Coin) throws -> DecodedAddress {
        do { try InputLimit.check(text, InputLimit.address, what: "an address") } catch let error as EncodingError {
            throw AddressError.encoding(error)
        }
        if coin.addressKinds.contains(.ethereum) {
            let bytes = try EthereumAddress.decode(text)
            return DecodedAddress(type: .ethereum, payload: bytes, scriptPubKey: [])
        }
        if let hrp = coin.bech32HRP, looksLikeBech32(text, hrp: hrp) {
            let (version, program) = try SegwitAddress.decode(text, hrp: hrp)
            let type: OutputType
            switch (version, program.count) {
            case (0, 20): type = .p2wpkh
            case (0, 32): type = .p2wsh
            case (1, 32): type = .p2tr
            default: type = .witness(version: version)
            }
            return DecodedAddress(type: type, payload: program, scriptPubKey: SegwitAddress.scriptPubKey(version: version, program: program))
        }
        if let prefix = coin.cashAddrPrefix, text.lowercased().hasPrefix(prefix + ":") || text.lowercased().hasPrefix("q") || text.lowercased().hasPrefix("p") {
            let (type, hash) = try CashAddr.decode(text, prefix: prefix)
            switch type {
            case 0: return DecodedAddress(type: .p2pkh, payload: hash, scriptPubKey: p2pkhScript(hash))
            case 1: return DecodedAddress(type: .p2sh, payload: hash, scriptPubKey: p2shScript(hash))
            default: throw AddressError.unrecognized("CashAddr type \(type) is neither P2PKH (0) nor P2SH (1)")
            }
        }
        let payload: [UInt8]
        do {
            payload = try Base58.decodeCheck(text)
        } catch let error as EncodingError {
            throw AddressError.encoding(error)
        }
        guard payload.count == 21 else {
            throw AddressError.badLength(found: max(payload.count - 1, 0), expected: "a 1-byte version and a 20-byte hash")
        }
        let hash = Array(payload[1...])
        if payload[0] == coin.p2pkhVersion {
            return DecodedAddress(type: .p2pkh, payload: hash, scriptPubKey: p2pkhScript(hash))
        }
        if payload[0] == coin.p2shVersion {
            return DecodedAddress(type: .p2sh, payload: hash, scriptPubKey: p2shScript(hash))
        }
        let owner = Coin.all.first { $0.p2pkhVersion == payload[0] || $0.p2shVersion == payload[0] }
        throw AddressError.wrongNetwork(
            expected: "\(coin.name) version byte \(versionList(coin))",
            found: "version byte 0x\(Hex.encode([payload[0]]))" + (owner.map { " (\($0.name))" } ?? ""))
    }

    /// Whether `text` is a valid address of `coin`.
    public static func isValid(_ text: String, coin: Coin) -> Bool {
        (try? decode(text, coin: coin)) != nil
    }

    /// The Base58Check P2PKH (or CashAddr for Bitcoin Cash) address of a 20-byte key hash.
    public static func p2pkh(hash: [UInt8], coin: Coin) throws -> String {
        if let prefix = coin.cashAddrPrefix { return CashAddr.encode(prefix: prefix, type: 0, hash: hash) }
        guard let version = coin.p2pkhVersion else { throw AddressError.unsupportedKind(.p2pkh, coin: coin.name) }
        return base58(version: version, hash: hash)
    }

    static func base58(version: UInt8, hash: [UInt8]) -> String {
        Base58.encodeCheck([version] + hash)
    }

    static func p2wpkhScript(_ hash: [UInt8]) -> [UInt8] { [0x00, 0x14] + hash }
    static func p2pkhScript(_ hash: [UInt8]) -> [UInt8] { [0x76, 0xa9, 0x14] + hash + [0x88, 0xac] }
    static func p2shScript(_ hash: [UInt8]) -> [UInt8] { [0xa9, 0x14] + hash + [0x87] }

    private static func looksLikeBech32(_ text: String, hrp: String) -> Bool {
        let lower = text.lowercased()
        if lower.hasPrefix(hrp + "1") { return true }
        // Another network's segwit address: report it as a network mismatch, not a Base58 failure.
        return Coin.all.contains { $0.bech32HRP.map { lower.hasPrefix($0 + "1") } ?? false }
    }

    private static func versionList(_ coin: Coin) -> String {
        [coin.p2pkhVersion, coin.p2shVersion].compactMap { $0 }.map { "0x" + Hex.encode([$0]) }.joined(separator: " or ")
    }
}
