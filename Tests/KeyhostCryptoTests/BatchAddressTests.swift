import Foundation
import Testing
@testable import KeyhostCrypto

extension KeyhostCryptoTests {
    @Suite("Batch address derivation")
    struct BatchAddressTests {
        @Test("Batch addresses equal one-by-one derivation")
        func batchMatchesSingle() throws {
            let account = try HDNode(seed: hex("000102030405060708090a0b0c0d0e0f")).derive("m/84'/0'/0'")
            let xpub = try HDNode(extendedKey: account.extendedPublicKey())
            let expected = try (0..<40).map { try xpub.derive("0/\($0)").address(.p2wpkh) }
            #expect(try xpub.addresses(.p2wpkh, chain: 0, from: 0, count: 40) == expected)
            #expect(try xpub.addresses(.p2wpkh, chain: 0, from: 0, count: 400).prefix(40).elementsEqual(expected))
            #expect(try xpub.addresses(.p2tr, chain: 1, from: 5, count: 3) == (5..<8).map { try xpub.derive("1/\($0)").address(.p2tr) })
            #expect(throws: ExtendedKeyError.self) { try xpub.addresses(.p2wpkh, from: DerivationPath.hardenedOffset - 1, count: 2) }
            #expect(throws: AddressError.self) { try xpub.addresses(.p2wpkh, coin: .dogecoin, count: 2) }
        }
    }
}
