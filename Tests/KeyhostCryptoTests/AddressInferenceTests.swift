import Foundation
import Testing
@testable import KeyhostCrypto

extension KeyhostCryptoTests {
    /// The address kind a node's path or extended-key version implies, against bip-utils' Bip44/49/84/86 wallets.
    @Suite("Address kind inference")
    struct AddressInferenceTests {
        struct Wallet: Decodable { let path, account_xpub, receive0, change1: String }
        struct Case: Decodable { let seed: String; let wallets: [Wallet] }
        struct Output: Decodable { let cases: [Case] }

        @Test("Standard paths and SLIP-132 versions give bip-utils' addresses on 40 random seeds; generic xpubs raise")
        func matchesBipUtils() throws {
            let output = try JSONDecoder().decode(Output.self, from: Oracle.run("address_kind_oracle.py", ["40"]))
            #expect(output.cases.count == 40)
            for c in output.cases {
                let master = try HDNode(seed: hex(c.seed))
                for w in c.wallets {
                    let account = try DerivationPath(w.path)
                    for (relative, expected) in [("0/0", w.receive0), ("1/1", w.change1)] {
                        let path = try account.appending(DerivationPath(relative))
                        let (coin, kind) = try AddressInference.resolve(kind: nil, coin: nil, path: path, family: nil)
                        #expect(try master.derive(path).address(kind, coin: coin) == expected, "\(path)")
                    }
                    // From the account's extended key as bip-utils writes it, path unknown.
                    let (node, family) = try HDNode.parse(w.account_xpub)
                    let pathCoin = AddressInference.hint(path: account).coin
                    if AddressInference.hint(family: family).kind == nil {
                        // xpub/tpub/dgub name no kind: without a kind it must raise, not guess.
                        if pathCoin.map({ $0.addressKinds.count > 1 }) ?? true {
                            #expect(throws: AddressError.self) {
                                try AddressInference.resolve(kind: nil, coin: nil, path: nil, family: family)
                            }
                        }
                        continue
                    }
                    // ypub/zpub/upub/vpub name the kind; a Litecoin wallet still has to name its coin.
                    let coin: Coin? = pathCoin == .litecoin ? .litecoin : nil
                    let (resolvedCoin, kind) = try AddressInference.resolve(kind: nil, coin: coin, path: nil, family: family)
                    #expect(try node.addresses(kind, coin: resolvedCoin, chain: 0, from: 0, count: 1) == [w.receive0], "\(w.account_xpub)")
                }
            }
        }

        @Test("Where nothing tells the kind, the error says why and what to do")
        func unknownKindRaises() throws {
            #expect(throws: AddressError.kindUnknown("its path m is not a BIP44/49/84/86 path")) {
                try AddressInference.resolve(kind: nil, coin: nil, path: .master, family: nil)
            }
            let message = String(describing: AddressError.kindUnknown("its path is not known"))
            #expect(message.contains("name it"))
            #expect(try AddressInference.resolve(kind: nil, coin: .dogecoin, path: nil, family: nil) == (.dogecoin, .p2pkh))
            #expect(try AddressInference.resolve(kind: .ethereum, coin: nil, path: DerivationPath("m/84'/0'/0'"), family: nil) == (.ethereum, .ethereum))
        }
    }
}
