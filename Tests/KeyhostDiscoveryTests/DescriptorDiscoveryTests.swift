import Foundation
import KeyhostBitcoin
import KeyhostCrypto
import KeyhostTestSupport
import Testing
@testable import KeyhostDiscovery

/// Discovery over descriptors (`DiscoveryEngine(descriptors:…)`) and the descriptors discovery prints, checked
/// against BDK and embit (Tests/Oracles/descriptor_oracle.py).
@Suite("Discovery with output descriptors")
struct DescriptorDiscoveryTests {
    static let account0 = "[73c5da0a/84h/0h/0h]xpub6CatWdiZiodmUeTDp8LT5or8nmbKNcuyvz7WyksVFkKB4RHwCD3XyuvPEbvqAQY3rAPshWcMLoP2fMFMKHPJ4ZeZXYVUhLv1VMrjPC7PW6V"

    /// BDK's addresses (receive, change) of a multipath descriptor at 0..<count.
    static func bdkAddresses(_ descriptor: String, network: String = "mainnet", count: Int) throws -> [[String]] {
        let request = ["cases": [["descriptor": descriptor, "network": network, "from": 0, "count": count]]]
        let output = try PythonOracle.run("descriptor_oracle.py", ["derive"], input: try JSONSerialization.data(withJSONObject: request))
        let answer = try #require(try JSONSerialization.jsonObject(with: output) as? [String: Any])
        let result = try #require((answer["results"] as? [[String: Any]])?.first)
        return try #require((result["bdk"] as? [String: Any])?["wallet"] as? [[String]])
    }

    /// A 2-of-3 wsh(sortedmulti) with <0;1>: three seeds' BIP48 accounts.
    static func multisig(testnet: Bool = false) throws -> String {
        let keys = try (1...3).map { n -> String in
            let master = try HDNode(seed: [UInt8](repeating: UInt8(n), count: 32))
            let path = try DerivationPath("m/48'/\(testnet ? 1 : 0)'/0'/2'")
            let account = try master.derive(path).neutered()
            return "[\(KeyOrigin.hex(master.fingerprint))/48h/\(testnet ? 1 : 0)h/0h/2h]\(account.extendedPublicKey(testnet ? .tpub : .xpub))/<0;1>/*"
        }
        return "wsh(sortedmulti(2,\(keys.joined(separator: ","))))"
    }

    @Test("a 2-of-3 wsh(sortedmulti) multipath descriptor scans as one wallet: BDK's addresses, found at their indexes, gaps as BIP44")
    func multisigWallet() throws {
        let text = try Self.multisig()
        let bdk = try Self.bdkAddresses(text, count: 40)
        let used = [bdk[0][3], bdk[0][17], bdk[1][5]]
        let wallet = try DescriptorWallet([OutputDescriptor.parse(text)])
        let source = CountingSource(used)
        let result = try DiscoveryEngine(descriptors: wallet, usage: source, options: DiscoveryOptions(receiveGapLimit: 20, changeGapLimit: 20)).run()
        #expect(result.usedAddresses.map { [$0.chain, $0.index] } == [[0, 3], [0, 17], [1, 5]])
        #expect(result.usedAddresses.map(\.address) == used)
        let account = try #require(result.accounts.first)
        #expect(result.accounts.count == 1 && account.account == nil)
        #expect(account.receiveAddressesChecked == 17 + 1 + 20 && account.changeAddressesChecked == 5 + 1 + 20)
        #expect(source.asked == Array(bdk[0][0..<38]) + Array(bdk[1][0..<26]), "exactly last used + 1 + gap per chain, in order")
        #expect(result.scheme == "descriptor" && result.addressKind == "wsh(sortedmulti)")
        let parts = try OutputDescriptor.parse(text).multipath()
        #expect(account.descriptors == parts.map(\.description))
        // The first key's full path names where each address is.
        #expect(result.usedAddresses[2].path.hasPrefix("m/48'/0'/0'/2'/1/5"))
        // Two descriptors (receive, change) are the same wallet; the checkpoint identity names them.
        let two = try DescriptorWallet(parts)
        #expect(two.identity == wallet.identity)
        let again = try DiscoveryEngine(descriptors: two, usage: CountingSource(used)).run()
        #expect(again.usedAddresses == result.usedAddresses)
    }

    @Test("descriptor wallets refuse what they cannot scan")
    func refused() throws {
        let receive = try OutputDescriptor.parse("wpkh(\(Self.account0)/0/*)")
        let three = try OutputDescriptor.parse("wpkh(\(Self.account0)/<0;1;2>/*)")
        let single = try OutputDescriptor.parse("wpkh(03a34b99f22c790c4e36b2b3c2c35a36db06226e41c692fc82b8b56ac1c540c5bd)")
        #expect(throws: DiscoveryError.self) { _ = try DescriptorWallet([three]) }
        #expect(throws: DiscoveryError.self) { _ = try DescriptorWallet([single]) }
        #expect(throws: DiscoveryError.self) { _ = try DescriptorWallet([receive, receive]) }
        #expect(throws: DiscoveryError.self) { _ = try DescriptorWallet([receive, receive, receive]) }
        #expect(throws: DescriptorError.self) { _ = try DescriptorWallet([receive], network: .testnet) }
        // A tpub wallet scans testnet by default.
        #expect(try DescriptorWallet([OutputDescriptor.parse(try Self.multisig(testnet: true))]).network == .testnet)
    }

    @Test("every account discovery finds carries its receive and change descriptors; BDK derives the used addresses from them")
    func accountDescriptors() throws {
        let used = [try TestWallet.bip84(index: 2), try TestWallet.bip84(change: 1, index: 1), try TestWallet.bip84(account: 1, index: 0)]
        let engine = DiscoveryEngine(scheme: try DiscoveryScheme.bip(purpose: 84, coin: .bitcoin), keys: try TestWallet.keys(), usage: CountingSource(used))
        let result = try engine.run()
        let first = try #require(result.accounts.first?.descriptors)
        #expect(first == ["wpkh(\(Self.account0)/0/*)#afwvtk2s", "wpkh(\(Self.account0)/1/*)#vatdkr6g"])
        for account in result.accounts where account.isUsed {
            let descriptors = try #require(account.descriptors)
            let receive = try Self.bdkAddresses(descriptors[0], count: 5)[0], change = try Self.bdkAddresses(descriptors[1], count: 5)[0]
            for address in account.usedAddresses {
                #expect((address.chain == 0 ? receive : change)[Int(address.index)] == address.address, "\(address)")
            }
        }
        // From an account xpub: no origin, and a note.
        let zpub = try #require(result.accounts.first?.extendedPublicKey)
        let fromXpub = try DiscoveryEngine(scheme: try DiscoveryScheme.bip(purpose: 84, coin: .bitcoin), keys: try ExtendedPublicKeySource(zpub),
                                           usage: CountingSource(used)).run()
        #expect(fromXpub.accounts.first?.descriptors?.first?.hasPrefix("wpkh(xpub6CatWdiZiodm") == true)
        #expect(fromXpub.notes.contains { $0.contains("origin") })
        // Ethereum has none.
        let eth = try DiscoveryEngine(scheme: try DiscoveryScheme.ethereum(), keys: try TestWallet.keys(), usage: CountingSource([])).run()
        #expect(eth.accounts.allSatisfy { $0.descriptors == nil })
        // Taproot on testnet: tpub keys.
        let tr = try DiscoveryEngine(scheme: try DiscoveryScheme.bip(purpose: 86, coin: .bitcoinTestnet), keys: try TestWallet.keys(), usage: CountingSource([])).run()
        #expect(tr.accounts.first?.descriptors?.first?.hasPrefix("tr([73c5da0a/86h/1h/0h]tpub") == true)
    }
}
