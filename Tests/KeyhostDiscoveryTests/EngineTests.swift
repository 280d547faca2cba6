import Foundation
import Testing
import KeyhostCrypto
@testable import KeyhostDiscovery

@Suite("Discovery engine: gap semantics")
struct EngineTests {
    let bip84 = try! DiscoveryScheme.bip(purpose: 84, coin: .bitcoin)

    func run(_ scheme: DiscoveryScheme, used: [String], options: DiscoveryOptions = DiscoveryOptions(),
             keys: AccountKeySource? = nil) throws -> (DiscoveryResult, CountingSource) {
        let source = CountingSource(used)
        let engine = DiscoveryEngine(scheme: scheme, keys: try keys ?? TestWallet.keys(), usage: source, options: options)
        return (try engine.run(), source)
    }

    @Test("Known vector: BIP84 account 0 of the test mnemonic")
    func knownVector() throws {
        // Published in BIP84; checks the engine derives the same addresses wallets do.
        let first = "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu"
        #expect(try TestWallet.bip84(index: 0) == first)
        let (result, _) = try run(bip84, used: [first])
        #expect(result.usedAddresses == [UsedAddress(address: first, chain: 0, index: 0, path: "m/84'/0'/0'/0/0")])
        #expect(result.accounts[0].extendedPublicKey
            == "zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs")
        #expect(result.accounts[0].keyPath == "m/84'/0'/0'")
    }

    @Test("A used address at index gap-1 is found")
    func usedAtGapMinusOne() throws {
        let used = try TestWallet.bip84(index: 19)
        let (result, source) = try run(bip84, used: [used])
        #expect(result.usedAddresses.map(\.address) == [used])
        let account = try #require(result.accounts.first)
        #expect(account.lastUsedReceiveIndex == 19)
        #expect(account.lastUsedChangeIndex == nil)
        #expect(account.receiveAddressesChecked == 40)   // 0...19, then 20 unused
        #expect(account.changeAddressesChecked == 20)
        // Account 0 is used, account 1 empty: BIP44 stops there.
        #expect(result.accounts.map(\.account) == [0, 1])
        #expect(result.totals.addressesChecked == 40 + 20 + 20 + 20)
        #expect(source.asked.count == result.totals.addressesChecked)
        #expect(Set(source.asked).count == source.asked.count, "no address is asked twice")
    }

    @Test("A used address at index gap is not found")
    func usedAtGap() throws {
        let (result, source) = try run(bip84, used: [try TestWallet.bip84(index: 20)])
        #expect(result.usedAddresses.isEmpty)
        #expect(result.accounts.map(\.account) == [0])
        #expect(result.accounts[0].receiveAddressesChecked == 20)
        #expect(!source.asked.contains(try TestWallet.bip84(index: 20)), "nothing past the gap is queried")
        // The same wallet with a gap of 21 finds it.
        let (wider, _) = try run(bip84, used: [try TestWallet.bip84(index: 20)], options: DiscoveryOptions(receiveGapLimit: 21))
        #expect(wider.usedAddresses.map(\.index) == [20])
    }

    @Test("Gaps restart after each used address and are per chain")
    func gapRestarts() throws {
        let used = try [5, 24, 43].map { try TestWallet.bip84(index: $0) } + [try TestWallet.bip84(change: 1, index: 3)]
        let (result, _) = try run(bip84, used: used, options: DiscoveryOptions(receiveGapLimit: 20, changeGapLimit: 5))
        #expect(result.accounts[0].usedAddresses.map { "\($0.chain)/\($0.index)" } == ["0/5", "0/24", "0/43", "1/3"])
        #expect(result.accounts[0].receiveAddressesChecked == 64)
        #expect(result.accounts[0].changeAddressesChecked == 9)
        // A change gap of 3 stops before change index 3.
        let (short, _) = try run(bip84, used: used, options: DiscoveryOptions(changeGapLimit: 3))
        #expect(!short.usedAddresses.contains { $0.chain == 1 })
    }

    @Test("An account with used change addresses only is used")
    func changeOnly() throws {
        let used = try TestWallet.bip84(change: 1, index: 7)
        let (result, _) = try run(bip84, used: [used])
        let account = try #require(result.accounts.first)
        #expect(account.isUsed)
        #expect(account.usedAddresses == [UsedAddress(address: used, chain: 1, index: 7, path: "m/84'/0'/0'/1/7")])
        #expect(account.lastUsedReceiveIndex == nil)
        #expect(account.lastUsedChangeIndex == 7)
        #expect(result.accounts.count == 2)
    }

    @Test("An empty account between used ones is crossed only with an account gap of 2 or more")
    func emptyAccountBetween() throws {
        let used = [try TestWallet.bip84(account: 0, index: 0), try TestWallet.bip84(account: 2, index: 3)]
        let (bip44, _) = try run(bip84, used: used)
        #expect(bip44.usedAccounts.map(\.account) == [0])
        #expect(bip44.accounts.map(\.account) == [0, 1])
        let (recovery, _) = try run(bip84, used: used, options: DiscoveryOptions(accountGapLimit: 2))
        #expect(recovery.usedAccounts.map(\.account) == [0, 2])
        #expect(recovery.accounts.map(\.account) == [0, 1, 2, 3, 4])
        #expect(recovery.usedAddresses.map(\.path) == ["m/84'/0'/0'/0/0", "m/84'/0'/2'/0/3"])
        #expect(recovery.totals.accountsUsed == 2 && recovery.totals.accountsScanned == 5)
    }

    @Test("Account and index ranges bound the scan and say so")
    func ranges() throws {
        let used = [try TestWallet.bip84(account: 3, index: 12), try TestWallet.bip84(account: 3, index: 2)]
        let (result, _) = try run(bip84, used: used, options: DiscoveryOptions(accounts: 3...3, indexes: 10...14))
        #expect(result.accounts.map(\.account) == [3])
        #expect(result.usedAddresses.map(\.index) == [12])
        #expect(result.accounts[0].receiveAddressesChecked == 5)
        #expect(!result.accounts[0].gapReached)
        #expect(result.notes.contains { $0.contains("index range ended") })
        #expect(result.notes.contains { $0.contains("account range ended") })
    }

    @Test("A gap limit of 0 is rejected with a clear error")
    func zeroGap() throws {
        for (options, chain) in [(DiscoveryOptions(receiveGapLimit: 0), "receive"), (DiscoveryOptions(changeGapLimit: 0), "change"),
                                 (DiscoveryOptions(accountGapLimit: 0), "account")] {
            let error = discoveryError { _ = try run(bip84, used: [], options: options) }
            #expect(error == .invalidGapLimit(chain: chain, value: 0))
            #expect(error?.description.contains("at least 1") == true)
        }
        #expect(discoveryError { _ = try run(bip84, used: [], options: DiscoveryOptions(batchSize: 0)) }
            == .invalidOption(name: "batch size", detail: "0; it must be at least 1"))
    }

    @Test("A source that calls every address used stops at the address cap, never past it")
    func addressCap() throws {
        #expect(DiscoveryOptions().maxAddresses == 1_000_000)
        let everything = ClosureUsageSource(name: "all used") { $0.map { _ in true } }
        var asked = 0
        let counting = ClosureUsageSource(name: "all used") { asked += $0.count; return try everything.usage(of: $0) }
        let engine = DiscoveryEngine(scheme: bip84, keys: try TestWallet.keys(), usage: counting,
                                     options: DiscoveryOptions(maxAddresses: 250))
        let error = discoveryError { _ = try engine.run() }
        #expect(error == .addressCapReached(limit: 250))
        #expect(error?.description.contains("--max-addresses N (max_addresses = N in Lua)") == true)
        #expect(asked == 250)
        #expect(discoveryError { _ = try run(bip84, used: [], options: DiscoveryOptions(maxAddresses: 0)) }
            == .invalidOption(name: "address cap", detail: "0; it must be at least 1"))
        // A wallet that needs exactly the cap is scanned as before.
        let (result, _) = try run(bip84, used: [try TestWallet.bip84(index: 0)], options: DiscoveryOptions(maxAddresses: 81))
        #expect(result.totals.addressesChecked == 81)   // account 0: 21 + 20, account 1: 20 + 20
    }

    @Test("Very large gap limits work, each address derived and asked once")
    func largeGap() throws {
        let far = try TestWallet.bip84(index: 4_999)
        // How fast is scripts/bench's business: a loaded machine must not fail this.
        let (result, source) = try run(bip84, used: [far], options: DiscoveryOptions(receiveGapLimit: 5_000, changeGapLimit: 5_000,
                                                                                 accounts: 0...0, batchSize: 1_000))
        #expect(result.usedAddresses.map(\.index) == [4_999])
        #expect(result.accounts[0].receiveAddressesChecked == 10_000)
        #expect(result.accounts[0].changeAddressesChecked == 5_000)
        #expect(source.asked.count == 15_000)
        #expect(source.calls == 15, "batches of 1,000")
    }

    @Test("An unknown usage stops the scan; it never counts as unused")
    func unknownUsage() throws {
        struct Down: Error {}
        let failing = ClosureUsageSource(name: "flaky") { _ in throw Down() }
        let error = discoveryError { _ = try DiscoveryEngine(scheme: bip84, keys: try TestWallet.keys(), usage: failing).run() }
        guard case .usageSourceFailed(let name, _) = error else { Issue.record("got \(String(describing: error))"); return }
        #expect(name == "flaky")
        let short = ClosureUsageSource(name: "short") { Array(repeating: false, count: $0.count - 1) }
        #expect(discoveryError { _ = try DiscoveryEngine(scheme: bip84, keys: try TestWallet.keys(), usage: short).run() }
            == .usageCountMismatch(source: "short", asked: 20, answered: 19))
    }

    @Test("Progress is reported with counts and rate")
    func progress() throws {
        var snapshots = [DiscoveryProgress]()
        let engine = DiscoveryEngine(scheme: bip84, keys: try TestWallet.keys(), usage: CountingSource([try TestWallet.bip84(index: 1)]))
        engine.progress = { snapshots.append($0) }
        let result = try engine.run()
        #expect(snapshots.count >= 4)
        let last = try #require(snapshots.last)
        #expect(last.accountsDone == 2 && last.addressesChecked == result.totals.addressesChecked && last.usedFound == 1)
        #expect(zip(snapshots, snapshots.dropFirst()).allSatisfy { $0.addressesChecked <= $1.addressesChecked })
    }
}

@Suite("Discovery schemes")
struct SchemeTests {
    @Test("Ethereum m/44'/60'/{account}'/0/{index}: one chain, MetaMask's addresses")
    func ethereum() throws {
        let scheme = try DiscoveryScheme.ethereum()
        let first = try TestWallet.ethereum("m/44'/60'/0'/0/0")
        #expect(first == "0x9858EfFD232B4033E47d90003D41EC34EcaEda94")  // the well-known first address of this mnemonic
        let used = [first, try TestWallet.ethereum("m/44'/60'/0'/0/7"), try TestWallet.ethereum("m/44'/60'/1'/0/2")]
        let result = try DiscoveryEngine(scheme: scheme, keys: try TestWallet.keys(), usage: IndexFileUsageSource(addresses: used),
                                         options: DiscoveryOptions(receiveGapLimit: 10)).run()
        #expect(result.usedAddresses.map(\.path) == ["m/44'/60'/0'/0/0", "m/44'/60'/0'/0/7", "m/44'/60'/1'/0/2"])
        #expect(result.accounts.allSatisfy { $0.changeAddressesChecked == 0 && $0.lastUsedChangeIndex == nil })
        #expect(result.accounts.map(\.account) == [0, 1, 2])
    }

    @Test("Ethereum one account per address m/44'/60'/{index}'/0/0")
    func ethereumPerIndex() throws {
        let scheme = try DiscoveryScheme.ethereumPerIndex()
        let at = { (i: Int) in try TestWallet.ethereum("m/44'/60'/\(i)'/0/0") }
        let used = try [at(0), at(3), at(9)]
        var exportedPaths = [String]()
        let card = CardKeySource(identity: "test") { path in
            exportedPaths.append(path.description)
            return try TestWallet.master.derive(path).neutered().extendedPublicKey()
        }
        let result = try DiscoveryEngine(scheme: scheme, keys: card, usage: IndexFileUsageSource(addresses: used),
                                         options: DiscoveryOptions(receiveGapLimit: 5)).run()
        // 3 is followed by 4...8 unused: the gap of 5 ends the scan before 9.
        #expect(result.usedAddresses.map(\.path) == ["m/44'/60'/0'/0/0", "m/44'/60'/3'/0/0"])
        #expect(result.usedAddresses.map(\.index) == [0, 3])
        #expect(result.accounts.count == 1 && result.accounts[0].account == nil)
        #expect(result.accounts[0].keyPath == "m/44'/60'/{index}'")
        #expect(exportedPaths == (0...8).map { "m/44'/60'/\($0)'" }, "one export per index, none twice")
    }

    @Test("Custom template equals the built-in scheme; {change} is optional")
    func customTemplate() throws {
        let used = [try TestWallet.ethereum("m/44'/60'/0'/0/4")]
        let custom = try DiscoveryScheme.custom("m/44'/60'/{account}'/0/{index}", kind: .ethereum, coin: .ethereum)
        let builtIn = try DiscoveryScheme.ethereum()
        let a = try DiscoveryEngine(scheme: custom, keys: try TestWallet.keys(), usage: IndexFileUsageSource(addresses: used)).run()
        let b = try DiscoveryEngine(scheme: builtIn, keys: try TestWallet.keys(), usage: IndexFileUsageSource(addresses: used)).run()
        #expect(a.accounts == b.accounts)
        #expect(a.usedAddresses.map(\.address) == used)

        // With {change} and in hardened h notation; a template whose {index} is followed by a fixed component.
        let withChange = try DiscoveryScheme.custom("m/84h/0h/{account}h/{change}/{index}", kind: .p2wpkh, coin: .bitcoin)
        let change = try TestWallet.bip84(change: 1, index: 2)
        let c = try DiscoveryEngine(scheme: withChange, keys: try TestWallet.keys(), usage: IndexFileUsageSource(addresses: [change])).run()
        #expect(c.usedAddresses == [UsedAddress(address: change, chain: 1, index: 2, path: "m/84'/0'/0'/1/2")])

        let odd = try DiscoveryScheme.custom("m/0'/{index}/5", kind: .p2wpkh, coin: .bitcoin)
        let oddUsed = try TestWallet.address("m/0'/3/5", .p2wpkh)
        let d = try DiscoveryEngine(scheme: odd, keys: try TestWallet.keys(), usage: IndexFileUsageSource(addresses: [oddUsed])).run()
        #expect(d.usedAddresses.map(\.path) == ["m/0'/3/5"])
        #expect(d.accounts.count == 1)
    }

    @Test("Malformed templates are clear errors", arguments: [
        ("44'/60'/{account}'/0/{index}", "must start with m/"),
        ("m/44'/60'/{account}'/0", "no {index}"),
        ("m/44'/{index}/{index}", "{index} appears 2 times"),
        ("m/44'/{coin}'/{account}'/{index}", "unknown placeholder {coin}"),
        ("m/44'/60'/x{account}'/{index}", "whole component"),
        ("m/44'/60'/{account/{index}", "whole component"),
        ("m/44'//{index}", "component 2"),
        ("m/44'/abc/{index}", "not a number"),
        ("m/44'/{account}'/{account}'/{index}", "{account} appears 2 times"),
    ])
    func malformedTemplate(template: String, message: String) throws {
        let error = discoveryError { _ = try PathTemplate(template) }
        guard case .malformedTemplate(let text, let detail) = error else { Issue.record("got \(String(describing: error))"); return }
        #expect(text == template)
        #expect(detail.contains(message), "\(detail)")
    }

    @Test("Purposes 44/49/84/86 on Bitcoin-like coins, by SLIP-44 number")
    func purposes() throws {
        for (purpose, kind) in [(44, AddressKind.p2pkh), (49, .p2shP2wpkh), (84, .p2wpkh), (86, .p2tr)] as [(UInt32, AddressKind)] {
            let scheme = try DiscoveryScheme.bip(purpose: purpose, slip44: 0)
            #expect(scheme.kind == kind)
            let used = try TestWallet.address("m/\(purpose)'/0'/0'/0/3", kind)
            let result = try DiscoveryEngine(scheme: scheme, keys: try TestWallet.keys(), usage: IndexFileUsageSource(addresses: [used])).run()
            #expect(result.usedAddresses.map(\.path) == ["m/\(purpose)'/0'/0'/0/3"])
        }
        let ltc = try DiscoveryScheme.bip(purpose: 84, slip44: 2)
        #expect(ltc.coin == .litecoin && ltc.template.description == "m/84'/2'/{account}'/{change}/{index}")
        #expect(try DiscoveryScheme.bip(purpose: 44, slip44: 3).coin == .dogecoin)
        #expect(try DiscoveryScheme.bip(purpose: 44, slip44: 60).name == "ethereum")
        #expect(discoveryError { _ = try DiscoveryScheme.bip(purpose: 86, coin: .dogecoin) } != nil)
        #expect(discoveryError { _ = try DiscoveryScheme.bip(purpose: 45, coin: .bitcoin) } != nil)
        #expect(discoveryError { _ = try DiscoveryScheme.bip(purpose: 84, slip44: 999_999) } != nil)
    }
}

@Suite("Key sources")
struct KeySourceTests {
    let bip84 = try! DiscoveryScheme.bip(purpose: 84, coin: .bitcoin)

    @Test("An account-level zpub scans that one account only, and says so")
    func xpubOneAccount() throws {
        let account1 = try TestWallet.master.derive("m/84'/0'/1'")
        let zpub = account1.neutered().extendedPublicKey(.zpub)
        let used = [try TestWallet.bip84(account: 0, index: 0), try TestWallet.bip84(account: 1, index: 4),
                    try TestWallet.bip84(account: 1, change: 1, index: 0)]
        let keys = try ExtendedPublicKeySource(zpub)
        let result = try DiscoveryEngine(scheme: bip84, keys: keys, usage: IndexFileUsageSource(addresses: used),
                                         options: DiscoveryOptions(accountGapLimit: 5)).run()
        #expect(result.accounts.map(\.account) == [1])
        #expect(result.accounts[0].extendedPublicKey == zpub)
        #expect(result.usedAddresses.map(\.path) == ["m/84'/0'/1'/0/4", "m/84'/0'/1'/1/0"])
        #expect(result.notes.contains { $0.contains("only account 1") })
        #expect(keys.label.contains("one account only"))
    }

    @Test("An xpub that does not fit the scheme is a clear error")
    func xpubMismatch() throws {
        let zpub = try TestWallet.master.derive("m/84'/0'/0'").neutered().extendedPublicKey(.zpub)
        let bip44 = try DiscoveryScheme.bip(purpose: 44, coin: .bitcoin)
        let error = discoveryError { _ = try DiscoveryEngine(scheme: bip44, keys: try ExtendedPublicKeySource(zpub), usage: CountingSource([])).run() }
        #expect(error?.description.contains("zpub is for p2wpkh") == true, "\(String(describing: error))")
        let masterXpub = TestWallet.master.neutered().extendedPublicKey()
        let depth = discoveryError { _ = try DiscoveryEngine(scheme: bip84, keys: try ExtendedPublicKeySource(masterXpub), usage: CountingSource([])).run() }
        #expect(depth?.description.contains("depth 0") == true)
        let xpub = try TestWallet.master.derive("m/44'/60'/0'").neutered().extendedPublicKey()
        let perIndex = discoveryError {
            _ = try DiscoveryEngine(scheme: try .ethereumPerIndex(), keys: try ExtendedPublicKeySource(xpub), usage: CountingSource([])).run()
        }
        #expect(perIndex?.description.contains("hardens {index}") == true)
    }

    @Test("A card exports one key per account, never per address")
    func cardOneExportPerAccount() throws {
        let used = try (0..<30).map { try TestWallet.bip84(account: 0, index: UInt32($0)) } + [try TestWallet.bip84(account: 1, index: 0)]
        var exported = [String]()
        let card = CardKeySource(identity: "card-1") { path in
            exported.append(path.description)
            return try TestWallet.master.derive(path).neutered().extendedPublicKey()
        }
        let result = try DiscoveryEngine(scheme: bip84, keys: card, usage: IndexFileUsageSource(addresses: used)).run()
        #expect(result.usedAddresses.count == 31)
        #expect(exported == ["m/84'/0'/0'", "m/84'/0'/1'", "m/84'/0'/2'"])
        #expect(card.exports == 3)
        // The zpub is reported in BIP84's family even though the card speaks xpub.
        #expect(result.accounts[0].extendedPublicKey?.hasPrefix("zpub") == true)

        let wrong = CardKeySource(identity: "liar") { _ in try TestWallet.master.derive("m/84'/0'/7'").neutered().extendedPublicKey() }
        let error = discoveryError { _ = try DiscoveryEngine(scheme: bip84, keys: wrong, usage: CountingSource([])).run() }
        guard case .keySourceFailed(let path, let detail) = error else { Issue.record("got \(String(describing: error))"); return }
        #expect(path == "m/84'/0'/0'" && detail.contains("not the requested path"))
    }

    @Test("A mnemonic with a passphrase is another wallet")
    func passphrase() throws {
        let used = [try TestWallet.bip84(index: 0)]
        let other = try SeedKeySource(mnemonic: try Mnemonic(phrase: TestWallet.phrase), passphrase: "TREZOR")
        let result = try DiscoveryEngine(scheme: bip84, keys: other, usage: IndexFileUsageSource(addresses: used)).run()
        #expect(result.usedAddresses.isEmpty)
        #expect(other.identity != (try TestWallet.keys()).identity)
    }
}
