import KeyhostBitcoin
import KeyhostCrypto

/// A wallet given as output descriptors (`discover --descriptor`): a receive chain and, optionally, a change
/// chain, scanned as one account with the usual gap limits. Multisig descriptors (wsh(sortedmulti(…)) with several
/// xpubs) are one wallet like any other: every address is the descriptor's script at an index.
///
/// It stands in the engine's key source's place; the engine asks it for addresses, never for keys.
public struct DescriptorWallet: AccountKeySource {
    /// Index 0 receive, 1 change (when given).
    public let chains: [OutputDescriptor]
    public let network: BitcoinNetwork

    /// One multipath descriptor with two parts (receive, change), or one or two ranged descriptors (receive, then
    /// change). `network` defaults to the keys' own (testnet for tpub keys).
    public init(_ descriptors: [OutputDescriptor], network: BitcoinNetwork? = nil) throws {
        var chains = descriptors
        if descriptors.count == 1 && descriptors[0].multipathCount > 1 {
            guard descriptors[0].multipathCount == 2 else {
                throw DiscoveryError.invalidOption(name: "descriptor", detail: "a multipath descriptor for discovery has two parts, <receive;change> "
                    + "such as <0;1>; this one has \(descriptors[0].multipathCount)")
            }
            chains = descriptors[0].multipath()
        }
        guard (1...2).contains(chains.count) else {
            throw DiscoveryError.invalidOption(name: "descriptor", detail: "give one multipath descriptor (<0;1>), or one or two descriptors "
                + "(receive, then change); got \(descriptors.count)")
        }
        for (i, chain) in chains.enumerated() {
            guard chain.multipathCount == 1 else {
                throw DiscoveryError.invalidOption(name: "descriptor", detail: "with two descriptors, neither may be multipath; give one <0;1> descriptor instead")
            }
            guard chain.isRange else {
                throw DiscoveryError.invalidOption(name: "descriptor", detail: "the \(i == 0 ? "receive" : "change") descriptor has no /* step, so there "
                    + "is no chain of addresses to scan")
            }
        }
        if chains.count == 2 && chains[0].description == chains[1].description {
            throw DiscoveryError.invalidOption(name: "descriptor", detail: "the receive and change descriptors are the same")
        }
        let resolved = try chains[0].resolve(network)
        for chain in chains.dropFirst() { _ = try chain.resolve(resolved) }
        self.chains = chains
        self.network = resolved
    }

    /// The scheme the engine runs: no {account} (one wallet), {change} when there is a change chain.
    public var scheme: DiscoveryScheme {
        get throws {
            let template = try PathTemplate(chains.count == 2 ? "m/{change}/{index}" : "m/{index}")
            // The kind only names the scheme; addresses come from the descriptors.
            return try DiscoveryScheme(name: "descriptor", template: template, kind: network.coin.defaultKind, coin: network.coin)
        }
    }

    /// The shape of the scripts, e.g. "wsh(sortedmulti)".
    public var form: String { chains[0].form }

    /// Addresses `from ..< from + count` of chain `chain`.
    func addresses(chain: UInt32, from: UInt32, count: Int) throws -> [String] {
        try chains[Int(chain)].addresses(from: from, count: count, network: network)
    }

    /// The full path of the first key at `index` of `chain` (from its origin when the descriptor has one).
    func path(chain: UInt32, index: UInt32) -> String {
        chains[Int(chain)].keys.first?.path(index: index)?.description ?? "\(chain)/\(index)"
    }

    /// The path the account report names: the first key's origin, e.g. m/84'/0'/0', or the descriptor's form.
    var accountPath: String {
        chains[0].keys.first?.origin.map(\.path.description) ?? form
    }

    // MARK: AccountKeySource

    public var label: String { "descriptor \(form) (\(chains.count == 2 ? "receive and change" : "one chain"))" }
    // Checksums identify the descriptors (and so the wallet) without repeating them.
    public var identity: String { "descriptor:" + chains.map(\.checksum).joined(separator: "+") }
    public var fixedKey: FixedAccountKey? { nil }

    public func extendedPublicKey(at path: DerivationPath) throws -> HDNode {
        throw DiscoveryError.keySource(path: path.description, detail: "a descriptor wallet derives its addresses from its descriptors")
    }
}
