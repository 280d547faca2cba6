import ArgumentParser
import KeyhostBitcoin
import KeyhostCrypto
import KeyhostDiscovery

/// `keyhost discover --descriptor D`: a wallet given as output descriptors instead of keys and a scheme.
extension Discover {
    /// The descriptor wallet --descriptor names (nil without it), after checking the options that go with it.
    /// Bad descriptors and options are usage errors (64), found before anything runs.
    func descriptorWallet() throws -> DescriptorWallet? {
        guard !descriptor.isEmpty else { return nil }
        let excluded = [purpose.map { _ in "--purpose" }, kind.map { _ in "--kind" }, scheme.map { _ in "--scheme" }, template.map { _ in "--template" },
                        accounts.map { _ in "--accounts" }, accountGap != 1 ? "--account-gap" : nil].compactMap { $0 }
        if let first = excluded.first {
            throw ValidationError("\(first) does not go with --descriptor: the descriptors say the scripts, and they are one wallet (one account)")
        }
        var network: BitcoinNetwork?
        if let coin {
            guard let named = Coin.named(coin).flatMap(BitcoinNetwork.init(coin:)) ?? BitcoinNetwork(name: coin) else {
                throw ValidationError("--coin \(coin.prefix(20)) with --descriptor: descriptors are Bitcoin's; use btc, test or regtest")
            }
            network = named
        }
        do {
            let parsed = try descriptor.enumerated().map { i, text in
                let name = "--descriptor" + (descriptor.count > 1 ? " #\(i + 1)" : "")
                // validate() and run() both read the option: standard input could be read only once.
                guard text != "-" else { throw ValidationError("\(name) takes the descriptor itself, not - (standard input)") }
                do { return try OutputDescriptor.parse(try DescriptorCommand.text(text)) } catch let error as DescriptorError {
                    throw ValidationError("\(name): \(error)")
                }
            }
            return try DescriptorWallet(parsed, network: network)
        } catch let error as ValidationError {
            throw error
        } catch {
            throw ValidationError("--descriptor: \(error)")
        }
    }
}
