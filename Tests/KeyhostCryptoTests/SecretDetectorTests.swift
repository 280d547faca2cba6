import Testing
@testable import KeyhostCrypto

/// The REPL keeps statements out of its history when `SecretDetector` flags them. The keys below were made with
/// bip-utils' Base58Check encoder (the .venv oracle) from BIP32 test vector 1's master key and from the WIF
/// example key of the Bitcoin wiki, re-encoded under each SLIP-132 version.
@Suite struct SecretDetectorTests {
    static let mnemonic12 = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"

    /// Statements that hold a secret, each with the reason it must be found for (names play no part in
    /// any of them: the variable names are neutral).
    static let secret: [(String, SecretDetector.Finding)] = [
        // The twelve kinds that the keyword filter missed or could miss.
        ("phrase = \"\(mnemonic12)\"", .mnemonicWords),
        ("k = \"5HueCGU8rMjxEXxiPuD5BDku4MkFqeZyd4dZ1jvhTVqvbTLvyTJ\"", .wif),
        ("k = \"KwdMAjGmerYanjeui5SHS7JkmpZvVipYvB2LJGU1ZxJwYvP98617\"", .wif),
        ("k = \"L52XzL2cMkHxqxBXRyEpnPQZGUs3uKiL3R11XbAdHigRzDozKZeW\"", .wif),
        ("k = \"cMzLdeGd5vEqxB8B6VFQoRopQ3sLAAvEzDAoQgvX54xwofSWj1fx\"", .wif),
        ("k = hd.from_extended(\"zprvAWgYBBk7JR8GjzqSzmunMCS7dAbwpYTCs1YUMDXqduMA5JFHZ3iX5s2UkAR6vBdcCYYa1S5o1fVLrKsrnpCQ4WpUd6aVUWP1bS2Yy5DoaKv\")", .extendedPrivateKey),
        ("k = hd.from_extended(\"yprvABrGsX5C9jantheLAR8A97LcTCTVsvThwu2FZpdxFtyH2CS4JPYxToNLixTWvGygnuRmFxVEZ18ny3GJ57nPGH8skkt4tbZXKhxuaUFh6jt\")", .extendedPrivateKey),
        ("k = hd.from_extended(\"Ltpv71G8qDifUiNetP6nmxPA5STrUVmv2J9YSmXajv8VsYBUyuPhvN9xCaQrfX2wo5xxJNtEazYCFRUu5FmokYMM79pcqz8pcdo4rNXAFPgyB4k\")", .extendedPrivateKey),
        ("k = \"e8f32e723decf4051aefac8e2c93c9c5b214313817cdb01a1494b917c8436b35\"", .hexKey),
        ("k = 0xE8F32E723DECF4051AEFAC8E2C93C9C5B214313817CDB01A1494B917C8436B35", .hexKey),
        ("code = \"246813\"", .pinLike),
        ("s:transmit(x, '864209753124')", .pinLike),
        // More shapes.
        ("k = \"91gGn1HgSap6CbU12F6z3pJri26xzp7Ay1VW6NHCoEayNXwRpu2\"", .wif),  // testnet, uncompressed
        ("k = \"T3TccUZx4EXBZaHnFiP9eTr8igDEZoqSjNvbA56Z8vV74oyAcjTK\"", .wif),  // Litecoin
        ("k = \"6PRVWUbkzzsbcVac2qwfssoUJAN1Xhrg6bNk8J7Nzm5H7kxEbn2Nh2ZoGg\"", .wif),  // BIP38 (encrypted)
        ("k = \"KwdMAjGmerYanjeui5SHS7JkmpZvVipYvB2LJGU1ZxJwYvP98618\"", .wif),  // checksum mistyped: still a key
        ("t = {\"abandon\", \"ability\", \"able\"}", .mnemonicWords),
        ("x = 'ABANDON ABILITY ABLE ABOUT'", .mnemonicWords),
        ("x = [[zoo zone zero]]", .mnemonicWords),
        ("x = 'abandon ' .. 'ability ' .. 'able'", .mnemonicWords),
        ("x = 1 -- legal winner thank year wave", .mnemonicWords),
        ("hd.from_m(legal winner thank year wave sausage worth useful legal winner thank yellow)", .mnemonicWords),
        ("k = \"" + String(repeating: "5a", count: 64) + "\"", .hexKey),  // a 64-byte seed
        ("k = '00112233445566778899aabbccddeeff'", .hexKey),  // 16 bytes of entropy
        ("code = '1234'", .pinLike),
        ("code = \"12345678\"", .pinLike),
        ("s:verify_pin(x)", .secretName),
        ("pass = my_password", .secretName),
        ("k = wif_of(x)", .secretName),
    ]

    static let slip132Private = [
        "yprvABrGsX5C9jantheLAR8A97LcTCTVsvThwu2FZpdxFtyH2CS4JPYxToNLixTWvGygnuRmFxVEZ18ny3GJ57nPGH8skkt4tbZXKhxuaUFh6jt",
        "zprvAWgYBBk7JR8GjzqSzmunMCS7dAbwpYTCs1YUMDXqduMA5JFHZ3iX5s2UkAR6vBdcCYYa1S5o1fVLrKsrnpCQ4WpUd6aVUWP1bS2Yy5DoaKv",
        "YprvANkMzkodih9AKGoi75b8yBgRAzVm6H9JGAfvV5uVdfogeNzy4nwEYvEGXfQzUiCb2NVk8YVMSDXJ6Ct4NLwLQmFYbDzUJ12XDSEnATR3W3g",
        "ZprvAhadJRUYsNgeAZzpwSNmBGmvLxeD2u8oBHC9GUoP1gBZhUpCKT6oAytQYsNaUcrWS1cYt25utssqyVVd63MMCzw9TZgtsur1VAJRYzwAEqZ",
        "tprv8ZgxMBicQKsPeDgjzdC36fs6bMjGApWDNLR9erAXMs5skhMv36j9MV5ecvfavji5khqjWaWSFhN3YcCUUdiKH6isR4Pwy3U5y5egddBr16m",
        "uprv8tXDerPXZ1QsVWsrpyyfJkxbmKsi7SViHSwNSF4QjsTkooB9HkthyYjne8dAveN1ALxYG46ziMibRtp3CL8L5LQUHQ6NYxHaEoiL29kHzK1",
        "vprv9DMUxX4ShgxMLp4yfLmHWr46wJ2A44VDCZTbDdxJ7sqdrtzNYR4GbcPvfLakvZ1vZz5M1XhZB259KBRbv2YLsa659jno8s74WXmyQmgaevA",
        "Uprv95RJn67y7xyEv63EmeSe8qJQV7uyKoBJbib3MWKx7eJARyk44AGz4fbiSqaeV5auPp2X8e77ba76Z4RoVZHHDpX97sCmxMka8XzCc9fe9K9",
        "Vprv16YtLrHXxePM6QH2pP6gJegXe6NyWYhkJkS5emb9diQdXPdfDxwD42xU9Bd6xrfuNz9CGdoZgVDQD26VwcBzwg23TFNCX6dsjQCrgPBnUZm",
        "Ltpv71G8qDifUiNetP6nmxPA5STrUVmv2J9YSmXajv8VsYBUyuPhvN9xCaQrfX2wo5xxJNtEazYCFRUu5FmokYMM79pcqz8pcdo4rNXAFPgyB4k",
        "Mtpv7L6Q8tPadPv8jgHucKAnHXZMeTvMxv93Mt3oXK2PFYZN31CwB2KWpe4zgizXnzcsi213LU8ki5qSxYPNUEmMuPWDiKqFCYcZ86aodv1aTA4",
        "dgpv51eADS3spNJh9Gjth94XcPwAczvQaDJs9rqx11kvxKs6r3Ek8AgERHhjLs6mzXQFHRzQqGwqdeoDkZmr8jQMBfi43b7sT3sx3cCSk5fGeUR",
        "ttpv96BtqegdxXceQtHEfoRYhynZxUknQHQSYHXTJR8A9ozEjRXPvZvcTu9u1FnaE1KVvPdtxjhzaqaF96SzVC6VYKVA5tuPJc4UrigoPScATTa",
        "xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiChkVvvNKmPGJxWUtg6LnF5kejMRNNU3TGtRBeJgk33yuGBxrMPHi",
        // A version no registry knows, with private key data: judged by the 00 at byte 45.
        "4s9bfpMBcCUk2NSCJ3ixN6Bh7fxrZbp7N3GCePj7BgT25WYpF9WRUbS2JhZiBJctABnMEZL2EpPHyXncjknEPL9GQUT7UhwY7jTDna99QUEoTUHg",
    ]

    /// Ordinary statements, which the history must keep.
    static let ordinary = [
        "x = 1",
        "print(hex.encode(h))",
        "hd.from_extended(\"xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8\")",
        "address.decode(\"1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa\")",
        "address.decode(\"bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4\")",
        "k = ec.public_key(hex.decode(\"0339a36013301597daef41fbe593a02cc513d0b55527ec2df1050e2e8ff49c85c2\"))",
        "eth = '0x9858EfFD232B4033E47d90003D41EC34EcaEda94'",
        "for i = 1, 3 do print(i) end",
        "local t = {} for _, a in ipairs(list) do t[a] = true end return t",
        "n = 123456",
        "print('hello world')",
        "node = m:derive(\"m/84'/0'/0'/0/0\")",
        "print(node:address())",
        "s:export_key { path = \"m/44'/60'/0'/0/0\" }",
        "t = {1, 2, 3}",
        "if x then return table.concat(t, ', ') end",
    ]

    @Test(arguments: secret)
    func findsTheSecret(_ statement: String, _ reason: SecretDetector.Finding) {
        let found = SecretDetector.findings(in: statement)
        #expect(found.contains(reason), "\(statement): \(found)")
    }

    @Test(arguments: slip132Private)
    func everyExtendedPrivateKeyVersion(_ key: String) {
        #expect(SecretDetector.findings(in: "k = \"\(key)\"").contains(.extendedPrivateKey), "\(key.prefix(4))")
        // Leading blanks (a pasted key) do not hide it either.
        #expect(SecretDetector.containsSecret("k = \"  \(key)\""))
    }

    @Test(arguments: ordinary)
    func keepsOrdinaryStatements(_ statement: String) {
        #expect(SecretDetector.findings(in: statement).isEmpty, "\(statement)")
    }

    @Test func mnemonicsFromTheOfficialVectors() throws {
        struct Vector: Decodable { let mnemonic: String }
        struct File: Decodable { let vectors: [Vector] }
        for vector in try Vectors.json("bip39-english.json", as: File.self).vectors {
            #expect(SecretDetector.findings(in: "m = '\(vector.mnemonic)'").contains(.mnemonicWords))
        }
    }

    @Test func aHugeStatementIsCheap() {
        let text = "x = '" + String(repeating: "a1b2 ", count: 200_000) + "'"
        #expect(!SecretDetector.containsSecret(text))
    }
}
