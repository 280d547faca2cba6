/// An address that cannot be produced or does not validate.
public enum AddressError: Error, Equatable, CustomStringConvertible {
    /// The string's Base58Check / Bech32 / hex layer failed (bad character, bad checksum, mixed case, ...).
    case encoding(EncodingError)
    /// The address is for another coin or network.
    case wrongNetwork(expected: String, found: String)
    /// The decoded payload has the wrong size.
    case badLength(found: Int, expected: String)
    /// A segwit program that BIP141/BIP350 do not allow.
    case badProgram(String)
    /// The coin has no address of this kind (e.g. segwit on Dogecoin).
    case unsupportedKind(AddressKind, coin: String)
    /// Nothing about the string looks like an address of the coin.
    case unrecognized(String)
    /// A segwit or taproot kind asked of an uncompressed public key, which such outputs cannot hold.
    case uncompressedKey(AddressKind)
    /// No kind was given and none can be told from the key (see `AddressInference`).
    case kindUnknown(String)

    public var description: String {
        switch self {
        case .encoding(let error):
            return "invalid address: \(error)"
        case .wrongNetwork(let expected, let found):
            return "invalid address: wrong network, expected \(expected) but found \(found); check the coin and network"
        case .badLength(let found, let expected):
            return "invalid address: payload is \(found) bytes, expected \(expected)"
        case .badProgram(let detail):
            return "invalid segwit address: \(detail)"
        case .unsupportedKind(let kind, let coin):
            return "\(coin) has no \(kind.rawValue) addresses; use one of the coin's address kinds"
        case .unrecognized(let detail):
            return "invalid address: \(detail)"
        case .kindUnknown(let why):
            return "the address kind cannot be told for this key: \(why); name it, e.g. \"p2wpkh\", \"p2tr\", \"p2pkh\" or {kind = \"ethereum\"}"
        case .uncompressedKey(let kind):
            return "an uncompressed public key has no \(kind.rawValue) address: segwit and taproot outputs take compressed keys only; "
                + "use p2pkh, or the key's compressed form"
        }
    }
}
