import KeyhostCrypto

/// Tells which addresses have been used. "Used" means any transaction history at all (a zero balance does not
/// make an address unused: it was seen on chain and its neighbours may hold funds).
///
/// A source must answer every address or throw. The engine never counts an address whose usage is unknown as
/// unused, because that would end the gap early and silently lose funds.
public protocol UsageSource {
    /// Names the source in reports and errors (e.g. "esplora http://127.0.0.1:3000"). Never contains an API key.
    var name: String { get }
    /// For each address, whether it has any transaction history, in the same order.
    func usage(of addresses: [String]) throws -> [Bool]
}

/// A source given as a closure, so the Lua layer can plug in a Lua function.
public struct ClosureUsageSource: UsageSource {
    public let name: String
    private let body: ([String]) throws -> [Bool]

    public init(name: String = "closure", _ body: @escaping ([String]) throws -> [Bool]) {
        self.name = name
        self.body = body
    }

    public func usage(of addresses: [String]) throws -> [Bool] {
        try body(addresses)
    }
}

/// Normalises encodings that are case-insensitive (hex Ethereum addresses, Bech32) so an index file written in
/// another case still matches; Base58 is case-sensitive and kept as it is.
func normalizedAddress(_ address: String) -> String {
    let trimmed = address.trimmingWhitespace()
    if trimmed.count == 42, trimmed.hasPrefix("0x") || trimmed.hasPrefix("0X") { return trimmed.lowercased() }
    // A Bech32 string is all lowercase or all uppercase; the uppercase form is the same address.
    if trimmed.contains("1"), trimmed == trimmed.uppercased(), trimmed.contains(where: { $0.isLetter }) {
        let lower = trimmed.lowercased()
        if ["bc1", "tb1", "bcrt1", "ltc1", "tltc1"].contains(where: { lower.hasPrefix($0) }) { return lower }
    }
    return trimmed
}
