import KeyhostBitcoin
import KeyhostCrypto

extension DiscoveryScheme {
    /// The output descriptors of the account whose key is `key` (at `keyPath`): receive, then change when the
    /// scheme has a change chain. Nil where descriptors cannot say it: Ethereum, coins other than Bitcoin's
    /// networks, templates whose part after the key is not fixed steps, {change} and a final {index}.
    func descriptors(key: HDNode, keyPath: DerivationPath, masterFingerprint: UInt32?) -> [String]? {
        guard kind != .ethereum, let network = BitcoinNetwork(coin: coin) else { return nil }
        let relative = template.components.dropFirst(template.keyPathLength)
        guard case .index(hardened: false)? = relative.last else { return nil }
        func steps(change: UInt32) -> String? {
            var text = ""
            for component in relative.dropLast() {
                switch component {
                case .fixed(let value) where value < DerivationPath.hardenedOffset: text += "/\(value)"
                case .change(hardened: false): text += "/\(change)"
                default: return nil
                }
            }
            return text + "/*"
        }
        let origin = masterFingerprint.map { KeyOrigin(fingerprint: $0, path: keyPath) }
        let chains: [UInt32] = template.hasChange ? [0, 1] : [0]
        var out = [String]()
        for chain in chains {
            guard let steps = steps(change: chain),
                  let descriptor = try? AccountDescriptors.descriptor(kind, account: key, origin: origin, testnet: network.isTestnet, steps: steps)
            else { return nil }
            out.append(descriptor.description)
        }
        return out
    }
}
