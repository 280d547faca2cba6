-- Tests for keyhost.hd. Run: keyhost run Tests/lua/hd_test.lua
-- Expected values are copied from the specifications' own test vectors (BIP32, BIP39, BIP49, BIP84, BIP86).
local t = require "keyhost.test"
local hd = require "keyhost.hd"
local hex = require "keyhost.hex"

local ABANDON = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"

-- BIP32 test vector 1 (bip-0032.mediawiki).
local V1_SEED = "000102030405060708090a0b0c0d0e0f"
local V1 = {
  { "m",
    "xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8",
    "xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiChkVvvNKmPGJxWUtg6LnF5kejMRNNU3TGtRBeJgk33yuGBxrMPHi" },
  { "m/0'",
    "xpub68Gmy5EdvgibQVfPdqkBBCHxA5htiqg55crXYuXoQRKfDBFA1WEjWgP6LHhwBZeNK1VTsfTFUHCdrfp1bgwQ9xv5ski8PX9rL2dZXvgGDnw",
    "xprv9uHRZZhk6KAJC1avXpDAp4MDc3sQKNxDiPvvkX8Br5ngLNv1TxvUxt4cV1rGL5hj6KCesnDYUhd7oWgT11eZG7XnxHrnYeSvkzY7d2bhkJ7" },
  { "m/0'/1",
    "xpub6ASuArnXKPbfEwhqN6e3mwBcDTgzisQN1wXN9BJcM47sSikHjJf3UFHKkNAWbWMiGj7Wf5uMash7SyYq527Hqck2AxYysAA7xmALppuCkwQ",
    "xprv9wTYmMFdV23N2TdNG573QoEsfRrWKQgWeibmLntzniatZvR9BmLnvSxqu53Kw1UmYPxLgboyZQaXwTCg8MSY3H2EU4pWcQDnRnrVA1xe8fs" },
  { "m/0'/1/2'",
    "xpub6D4BDPcP2GT577Vvch3R8wDkScZWzQzMMUm3PWbmWvVJrZwQY4VUNgqFJPMM3No2dFDFGTsxxpG5uJh7n7epu4trkrX7x7DogT5Uv6fcLW5",
    "xprv9z4pot5VBttmtdRTWfWQmoH1taj2axGVzFqSb8C9xaxKymcFzXBDptWmT7FwuEzG3ryjH4ktypQSAewRiNMjANTtpgP4mLTj34bhnZX7UiM" },
  { "m/0'/1/2'/2",
    "xpub6FHa3pjLCk84BayeJxFW2SP4XRrFd1JYnxeLeU8EqN3vDfZmbqBqaGJAyiLjTAwm6ZLRQUMv1ZACTj37sR62cfN7fe5JnJ7dh8zL4fiyLHV",
    "xprvA2JDeKCSNNZky6uBCviVfJSKyQ1mDYahRjijr5idH2WwLsEd4Hsb2Tyh8RfQMuPh7f7RtyzTtdrbdqqsunu5Mm3wDvUAKRHSC34sJ7in334" },
  { "m/0'/1/2'/2/1000000000",
    "xpub6H1LXWLaKsWFhvm6RVpEL9P4KfRZSW7abD2ttkWP3SSQvnyA8FSVqNTEcYFgJS2UaFcxupHiYkro49S8yGasTvXEYBVPamhGW6cFJodrTHy",
    "xprvA41z7zogVVwxVSgdKUHDy1SKmdb533PjDz7J6N6mV6uS3ze1ai8FHa8kmHScGpWmj4WggLyQjgPie1rFSruoUihUZREPSL39UNdE3BBDu76" },
}

-- BIP84 (bip-0084.mediawiki, Test vectors), mnemonic ABANDON.
local BIP84 = {
  root_zprv = "zprvAWgYBBk7JR8Gjrh4UJQ2uJdG1r3WNRRfURiABBE3RvMXYSrRJL62XuezvGdPvG6GFBZduosCc1YP5wixPox7zhZLfiUm8aunE96BBa4Kei5",
  root_zpub = "zpub6jftahH18ngZxLmXaKw3GSZzZsszmt9WqedkyZdezFtWRFBZqsQH5hyUmb4pCEeZGmVfQuP5bedXTB8is6fTv19U1GQRyQUKQGUTzyHACMF",
  account_zprv = "zprvAdG4iTXWBoARxkkzNpNh8r6Qag3irQB8PzEMkAFeTRXxHpbF9z4QgEvBRmfvqWvGp42t42nvgGpNgYSJA9iefm1yYNZKEm7z6qUWCroSQnE",
  account_zpub = "zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs",
  receive0 = { wif = "KyZpNDKnfs94vbrwhJneDi77V6jF64PWPF8x5cdJb8ifgg2DUc9d",
               pubkey = "0330d54fd0dd420a6e5f8d3624f5f3482cae350f79d5f0753bf5beef9c2d91af3c",
               address = "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu" },
  receive1 = "bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g",
  change0 = "bc1q8c6fshw2dlwun7ekn9qwf37cu2rn755upcp6el",
}

t.test("BIP32 vector 1: every chain's xpub and xprv", function()
  local master = hd.from_seed(hex.decode(V1_SEED))
  for _, row in ipairs(V1) do
    local path, xpub, xprv = row[1], row[2], row[3]
    local node = master:derive(path)
    t.eq(node:xpub(), xpub, path .. " xpub")
    t.eq(node:xprv(), xprv, path .. " xprv")
    t.eq(node:path(), path)
  end
end)

t.test("BIP32 vector 1: fields of m and m/0'", function()
  local master = hd.from_seed(hex.decode(V1_SEED))
  t.eq(hex.encode(master:fingerprint()), "3442193e")
  t.eq(#master:identifier(), 20)
  t.eq(master:identifier():sub(1, 4), master:fingerprint())
  t.eq(master:parent_fingerprint(), "\0\0\0\0")
  t.eq(master:depth(), 0)
  t.eq(master:child_number(), 0)
  t.eq(#master:chain_code(), 32)
  local child = master:derive("m/0h")
  t.eq(child:parent_fingerprint(), master:fingerprint())
  t.eq(child:depth(), 1)
  t.eq(child:child_number(), hd.HARDENED)
  t.eq(child:child_number(), 0x80000000)
end)

t.test("BIP32 vector 1: relative, index and table paths agree with absolute ones", function()
  local master = hd.from_seed(hex.decode(V1_SEED))
  local last = V1[#V1]
  t.eq(master:derive("0'"):derive("1/2H"):derive(2):derive(1000000000):xpub(), last[2])
  t.eq(master:derive(hd.parse_path("m/0'/1/2'/2/1000000000")):xpub(), last[2])
  t.eq(master:derive({ hd.hardened(0), 1 }):xpub(), V1[3][2])
  t.eq(master:derive("m"):xpub(), V1[1][2])
  -- a relative path from a node with a known path extends that path
  t.eq(master:derive("m/0'"):derive("1/2'"):path(), "m/0'/1/2'")
end)

t.test("BIP32 vector 1: public derivation from the xpub matches", function()
  local node = hd.from_extended(V1[4][2]) -- m/0'/1/2'
  t.eq(node:is_private(), false)
  t.eq(node:path(), nil, "a parsed non-master key has no known path")
  t.eq(node:derive("2"):xpub(), V1[5][2])
  t.eq(node:derive("2/1000000000"):xpub(), V1[6][2])
  t.eq(tostring(node):match("^keyhost%.hd%.node%(depth 3, child 2', fingerprint %x+, public%)$") ~= nil, true)
end)

t.test("parse_path, hardened and HARDENED", function()
  local p = hd.parse_path("m/84'/0h/0H/1/5")
  t.eq(p, { 0x80000054, 0x80000000, 0x80000000, 1, 5, absolute = true })
  t.eq(hd.parse_path("0/5"), { 0, 5, absolute = false })
  t.eq(hd.parse_path("m"), { absolute = true })
  t.eq(hd.hardened(84), 0x80000054)
  t.eq(hd.HARDENED, 2147483648)
  t.raises(function() hd.parse_path("m/84'/x/0") end, 'component 2 %("x"%) is not a number')
  t.raises(function() hd.parse_path("m//0") end, "is empty")
  t.raises(function() hd.parse_path("m/2147483648") end, "too large")
  t.raises(function() hd.parse_path("") end, "the path is empty")
  t.raises(function() hd.parse_path({}) end, "bad argument #1 to 'parse_path' %(string expected, got table%)")
end)

t.test("BIP39: seeds match the Trezor vectors", function()
  t.eq(hex.encode(hd.mnemonic_to_seed(ABANDON, { passphrase = "TREZOR" })),
    "c55257c360c07c72029aebc1b53c05ed0362ada38ead3e3e9efa3708e53495531f09a6987599d18264c1e1c92f2cf141630c7a3c4ab7c81b2f001698e7463b04")
  t.eq(hd.from_mnemonic(ABANDON, { passphrase = "TREZOR" }):xprv(),
    "xprv9s21ZrQH143K3h3fDYiay8mocZ3afhfULfb5GX8kCBdno77K4HiA15Tg23wpbeF1pLfs1c5SPmYHrEpTuuRhxMwvKDwqdKiGJS9XFKzUsAF")
  t.eq(hd.mnemonic_to_seed("legal winner thank year wave sausage worth useful legal winner thank yellow", { passphrase = "TREZOR" }),
    hex.decode("2e8905819b8723fe2c1d161860e5ee1830318dbf49a83bd451cfb8440c28bd6fa457fe1296106559a3c80937a1c1069be3a3a5bd381ee6260e8d9739fce1f607"))
  -- case and spacing do not matter
  t.eq(hd.mnemonic_to_seed("  ABANDON abandon abandon abandon abandon abandon\tabandon abandon abandon abandon abandon about "),
    hd.mnemonic_to_seed(ABANDON))
  t.eq(#hd.mnemonic_to_seed(ABANDON), 64)
end)

t.test("BIP84 test vectors from the BIP39 test mnemonic", function()
  local master = hd.from_mnemonic(ABANDON)
  t.eq(master:xprv("zprv"), BIP84.root_zprv)
  t.eq(master:xpub("zpub"), BIP84.root_zpub)
  t.eq(master:xpub({ family = "zpub" }), BIP84.root_zpub)
  t.eq(master:xpub({ coin = "btc", kind = "p2wpkh" }), BIP84.root_zpub)
  local account = master:derive(hd.standard_path { kind = "p2wpkh" })
  t.eq(account:path(), "m/84'/0'/0'")
  t.eq(account:xprv("zprv"), BIP84.account_zprv)
  t.eq(account:xpub("zpub"), BIP84.account_zpub)
  local first = account:derive("0/0")
  t.eq(first:wif(), BIP84.receive0.wif)
  t.eq(hex.encode(first:public_key()), BIP84.receive0.pubkey)
  t.eq(first:address("p2wpkh"), BIP84.receive0.address)
  t.eq(first:address(), BIP84.receive0.address, "m/84' tells p2wpkh")
  t.eq(account:derive("0/1"):address({ kind = "p2wpkh" }), BIP84.receive1)
  t.eq(account:derive("1/0"):address({ coin = "btc" }), BIP84.change0)
  t.eq(account:addresses(0, 0, 2), { BIP84.receive0.address, BIP84.receive1 })
  t.eq(account:addresses(1, 0, 1), { BIP84.change0 })
end)

t.test("an xpub keeps its family: from_extended(zpub) derives the same addresses", function()
  local account = hd.from_extended(BIP84.account_zpub)
  t.eq(account:xpub(), BIP84.account_zpub, "the parsed family is the default")
  t.eq(account:xpub("xpub"):sub(1, 4), "xpub")
  t.eq(account:addresses(0, 0, 2, "p2wpkh"), { BIP84.receive0.address, BIP84.receive1 })
  t.eq(account:derive("1/0"):address("p2wpkh"), BIP84.change0)
  local private = hd.from_extended(BIP84.account_zprv)
  t.eq(private:xprv(), BIP84.account_zprv)
  t.eq(private:public():xpub(), BIP84.account_zpub)
  t.eq(private:derive("0/0"):wif(), BIP84.receive0.wif)
end)

t.test("BIP49 (testnet) and BIP86 vectors", function()
  local master = hd.from_mnemonic(ABANDON)
  local bip49 = master:derive(hd.standard_path { coin = "test", kind = "p2sh-p2wpkh" })
  t.eq(bip49:path(), "m/49'/1'/0'")
  t.eq(bip49:xpub({ coin = "test", kind = "p2sh-p2wpkh" }),
    "upub5EFU65HtV5TeiSHmZZm7FUffBGy8UKeqp7vw43jYbvZPpoVsgU93oac7Wk3u6moKegAEWtGNF8DehrnHtv21XXEMYRUocHqguyjknFHYfgY")
  local b49 = bip49:derive("0/0")
  t.eq(b49:wif({ coin = "test" }), "cULrpoZGXiuC19Uhvykx7NugygA3k86b3hmdCeyvHYQZSxojGyXJ")
  t.eq(hex.encode(b49:private_key()), "c9bdb49cfbaedca21c4b1f3a7803c34636b1d7dc55a717132443fc3f4c5867e8")
  t.eq(b49:address({ coin = "test", kind = "p2sh-p2wpkh" }), "2Mww8dCYPUpKHofjgcXcBCEGmniw9CoaiD2")

  local bip86 = master:derive(hd.standard_path { kind = "p2tr" })
  t.eq(bip86:xpub(),
    "xpub6BgBgsespWvERF3LHQu6CnqdvfEvtMcQjYrcRzx53QJjSxarj2afYWcLteoGVky7D3UKDP9QyrLprQ3VCECoY49yfdDEHGCtMMj92pReUsQ")
  t.eq(bip86:derive("0/0"):address("taproot"), "bc1p5cyxnuxmeuwuvkwfem96lqzszd02n6xdcjrs20cac6yqjjwudpxqkedrcr")
  t.eq(bip86:addresses(0, 1, 1, "p2tr"), { "bc1p4qhjn9zdvkux4e44uhx8tc55attvtyu358kutcqkudyccelu0was9fqzwh" })
  t.eq(bip86:addresses(1, 0, 1, { kind = "p2tr" }), { "bc1p3qkhfews2uk44qtvauqyr2ttdsw7svhkl9nkm9s9c3x4ax5h60wqwruhk7" })
end)

t.test("Ethereum: BIP44 path and address of the test mnemonic", function()
  local master = hd.from_mnemonic(ABANDON)
  local path = hd.standard_path { coin = "eth", index = 0 }
  t.eq(path, "m/44'/60'/0'/0/0")
  t.eq(master:derive(path):address("ethereum"), "0x9858EfFD232B4033E47d90003D41EC34EcaEda94")
  t.eq(master:derive(path):address({ coin = "eth" }), "0x9858EfFD232B4033E47d90003D41EC34EcaEda94")
end)

t.test("standard_path and eip1581", function()
  t.eq(hd.standard_path {}, "m/84'/0'/0'")
  t.eq(hd.standard_path { kind = "p2pkh", account = 3 }, "m/44'/0'/3'")
  t.eq(hd.standard_path { kind = "p2wpkh", change = 1, index = 7 }, "m/84'/0'/0'/1/7")
  t.eq(hd.standard_path { coin = "ltc", kind = "legacy", index = 2 }, "m/44'/2'/0'/0/2")
  t.eq(hd.standard_path { coin = 3 }, "m/44'/3'/0'")
  t.eq(hd.eip1581 {}, "m/43'/60'/1581'/0'/0")
  t.eq(hd.eip1581 { key_type = "encryption", index = 4 }, "m/43'/60'/1581'/1'/4")
  t.eq(hd.eip1581 { key_type = 7 }, "m/43'/60'/1581'/7'/0")
  t.raises(function() hd.standard_path { coin = "doge", kind = "p2wpkh" } end, "Dogecoin has no p2wpkh addresses")
  t.raises(function() hd.standard_path { account = -1 } end, "option 'account' is %-1; use 0%.%.%.2147483647")
  t.raises(function() hd.standard_path { acount = 1 } end, "unknown option 'acount'; known options: coin, kind, account, change, index")
  t.raises(function() hd.standard_path { coin = "zzz" } end, 'unknown coin "zzz"')
  t.raises(function() hd.eip1581 { key_type = "chat" } end, 'unknown key type "chat"')
end)

t.test("node:addresses (batched over cores) equals one-by-one derivation", function()
  local account = hd.from_mnemonic(ABANDON):derive("m/84'/0'/0'")
  local batch = account:addresses(0, 10, 150)
  t.eq(#batch, 150)
  local receive = account:derive("0")
  for _, i in ipairs({ 10, 11, 73, 100, 159 }) do
    t.eq(batch[i - 9], receive:derive(i):address("p2wpkh"), "index " .. i)
  end
  t.eq(receive:addresses(nil, 10, 3), { batch[1], batch[2], batch[3] }, "nil chain: this node's own children")
  t.eq(account:addresses(0, 0, 0), {})
  local legacy = account:addresses(0, 0, 70, { coin = "ltc", kind = "p2pkh" })
  t.eq(legacy[70], receive:derive(69):address({ coin = "ltc", kind = "p2pkh" }))
  t.ok(legacy[1]:match("^L"), "Litecoin P2PKH starts with L")
end)

t.test("node:addresses rejects bad ranges and kinds", function()
  local account = hd.from_mnemonic(ABANDON):derive("m/84'/0'/0'")
  t.raises(function() account:addresses(0, 0, -1) end, "bad argument #3 to 'addresses' %(count %-1 is out of range")
  t.raises(function() account:addresses(0, 0, 2000000) end, "count 2000000 is out of range; use 0%.%.%.1000000")
  t.raises(function() account:addresses(0, 2147483647, 2) end, "run past 2147483647")
  t.raises(function() account:addresses(0, 0) end, "bad argument #3 to 'addresses' %(number expected, got no value%)")
  t.raises(function() account:addresses(0, 0, 5, { coin = "doge", kind = "p2tr" }) end, "Dogecoin has no p2tr addresses")
  t.raises(function() account:addresses("x", 0, 5) end, "bad argument #1 to 'addresses' %(number expected, got string%)")
end)

t.test("mnemonics: generate and validate", function()
  for _, n in ipairs({ 12, 15, 18, 21, 24 }) do
    local phrase = hd.generate_mnemonic(n)
    local words = 0
    for _ in phrase:gmatch("%a+") do words = words + 1 end
    t.eq(words, n)
    t.eq(hd.validate_mnemonic(phrase), true)
  end
  local a, b = hd.generate_mnemonic(), hd.generate_mnemonic()
  t.ok(a ~= b, "fresh randomness each time")
  t.eq(select(2, a:gsub("%a+", "")), 12, "12 words by default")
  t.raises(function() hd.generate_mnemonic(13) end, "bad argument #1 to 'generate_mnemonic' %(word count 13 is not 12, 15, 18, 21 or 24%)")
  t.eq(hd.validate_mnemonic(ABANDON), true)
end)

t.test("mnemonics: errors name the position and the problem, never the word", function()
  local typo = ABANDON:gsub("about$", "abuot")
  t.raises(function() hd.validate_mnemonic(typo) end, "word 12 is not in the BIP39 English wordlist")
  local typo2 = ABANDON:gsub("^abandon", "abandonn")
  t.raises(function() hd.validate_mnemonic(typo2) end, "word 1 is not in the BIP39 English wordlist")
  for _, bad in ipairs({ typo, typo2, ABANDON:gsub("about$", "ABOUTS"), (ABANDON:gsub("about$", "ab")) }) do
    for _, f in ipairs({ hd.validate_mnemonic, hd.from_mnemonic, hd.mnemonic_to_seed }) do
      local ok, err = pcall(f, bad)
      t.eq(ok, false)
      for _, piece in ipairs({ "abuot", "abandonn", "abo", "aba", "ban", "don", "uts", "ab\"", "about" }) do
        t.ok(not tostring(err):lower():find(piece, 1, true), "error shows " .. piece .. ": " .. tostring(err))
      end
    end
  end
  local checksum = ABANDON:gsub("about$", "abandon")
  t.raises(function() hd.validate_mnemonic(checksum) end, "the checksum does not match")
  t.raises(function() hd.from_mnemonic(checksum) end, "the checksum does not match")
  t.raises(function() hd.validate_mnemonic("abandon about") end, "2 words; BIP39 phrases have 12, 15, 18, 21 or 24 words")
  t.raises(function() hd.validate_mnemonic() end, "bad argument #1 to 'validate_mnemonic' %(string expected, got no value%)")
  t.raises(function() hd.mnemonic_to_seed(ABANDON, { passphrase = 5 }) end, "option 'passphrase' must be a string, got number")
  t.raises(function() hd.mnemonic_to_seed(ABANDON, { password = "x" }) end, "unknown option 'password'; known options: passphrase")
end)

t.test("bad seeds, extended keys and derivations raise clear errors", function()
  t.raises(function() hd.from_seed("short") end, "invalid BIP32 seed: 5 bytes; use 16 to 64 bytes")
  t.raises(function() hd.from_seed({}) end, "bad argument #1 to 'from_seed' %(string expected, got table%)")
  local bad = BIP84.account_zpub:sub(1, -2) .. (BIP84.account_zpub:sub(-1) == "s" and "t" or "s")
  t.raises(function() hd.from_extended(bad) end, "invalid extended key: bad checksum")
  t.raises(function() hd.from_extended("xpub0") end, 'invalid extended key: character "0" at position 4 is not in the Base58 alphabet')
  local account = hd.from_extended(BIP84.account_zpub)
  t.raises(function() account:derive("0'") end, "cannot derive hardened child 0' from a public key")
  t.raises(function() account:derive("m/0") end, "absolute path m/0 applied to a key at depth 3; use a relative path")
  t.raises(function() account:derive("0/x") end, 'invalid derivation path "0/x": component 2 %("x"%) is not a number')
  t.raises(function() account:derive(true) end, "bad argument #1 to 'derive' %(path string, child index or table of indexes expected, got boolean%)")
  t.raises(function() account:derive(-1) end, "child index %-1 is out of range")
  t.raises(function() account:derive({ 1, "x" }) end, "path index 2 must be an integer")
  t.raises(function() account:xprv() end, "is public%-only")
  t.raises(function() account:private_key() end, "is public%-only")
  t.raises(function() account:wif() end, "is public%-only")
  t.raises(function() account:sign(string.rep("\0", 32)) end, "is public%-only")
  t.raises(function() account:xpub("qpub") end, 'unknown extended key family "qpub"; use one of xpub')
  t.raises(function() account:xpub(5) end, "family name or options table expected, got number")
  t.raises(function() account:address("p2pk") end, 'unknown address kind "p2pk"; use one of p2pkh, p2sh%-p2wpkh, p2wpkh, p2tr, ethereum')
  t.raises(function() account:address({ coin = "btc", knd = "p2tr" }) end, "unknown option 'knd'")
  t.raises(function() account:address({ coin = true }) end, "option 'coin' must be a coin symbol or SLIP%-44 number, got boolean")
  t.raises(function() account:address({ coin = "doge", kind = "p2wpkh" }) end, "Dogecoin has no p2wpkh addresses")
end)

t.test("public(): a neutered copy with the same position", function()
  local master = hd.from_mnemonic(ABANDON)
  local account = master:derive("m/84'/0'/0'")
  local pub = account:public()
  t.eq(pub:is_private(), false)
  t.eq(account:is_private(), true)
  t.eq(pub:path(), "m/84'/0'/0'")
  t.eq(pub:xpub("zpub"), BIP84.account_zpub)
  t.eq(pub:fingerprint(), account:fingerprint())
  t.eq(pub:public_key(), account:public_key())
  t.eq(#pub:public_key({ compressed = false }), 65)
  t.eq(#pub:public_key({ x_only = true }), 32)
end)

t.test("tostring shows position and fingerprint, never key material", function()
  local master = hd.from_mnemonic(ABANDON)
  t.eq(tostring(master), "keyhost.hd.node(m, fingerprint 73c5da0a, private)")
  local account = master:derive("m/84'/0'/0'")
  t.ok(tostring(account):match("^keyhost%.hd%.node%(m/84'/0'/0', fingerprint %x%x%x%x%x%x%x%x, private%)$"), tostring(account))
  t.ok(tostring(account:public()):match(", public%)$"))
end)

t.test("no secret appears in tostring or error messages", function()
  local master = hd.from_mnemonic(ABANDON, { passphrase = "correct horse" })
  local node = master:derive("m/84'/0'/0'/0/0")
  local secrets = {
    hex.encode(node:private_key()), hex.encode(master:private_key()),
    node:wif(), master:xprv(), hex.encode(hd.mnemonic_to_seed(ABANDON, { passphrase = "correct horse" })),
    "correct horse", "abandon",
  }
  local texts = { tostring(master), tostring(node), tostring(node:public()) }
  local function capture(fn)
    local ok, err = pcall(fn)
    t.ok(not ok, "expected an error")
    texts[#texts + 1] = tostring(err)
  end
  capture(function() node:derive("m/0") end)
  capture(function() node:derive("x") end)
  capture(function() node:address("nope") end)
  capture(function() node:sign("short digest") end)
  capture(function() node:sign_schnorr(string.rep("\0", 32), { aux = "short" }) end)
  capture(function() node:xprv("nope") end)
  capture(function() node:wif({ coin = "eth" }) end)
  capture(function() node:addresses(0, 0, -5) end)
  capture(function() hd.from_mnemonic(ABANDON:gsub("about$", "abandon"), { passphrase = "correct horse" }) end)
  capture(function() hd.mnemonic_to_seed(ABANDON, { passphrase = "correct horse", extra = 1 }) end)
  capture(function() hd.from_seed(hex.decode("00"):rep(65)) end)
  capture(function() hd.from_extended(master:xprv():sub(1, -3)) end)
  capture(function() hd.from_extended(master:xprv() .. "1") end)
  for _, text in ipairs(texts) do
    for _, secret in ipairs(secrets) do
      t.ok(not text:find(secret, 1, true), ("%q leaks a secret"):format(text))
    end
    t.ok(not text:lower():find(hex.encode(node:private_key()):sub(1, 16), 1, true), text)
  end
end)

t.test("close() wipes the node; later use raises", function()
  local node = hd.from_mnemonic(ABANDON):derive("m/84'/0'/0'")
  local child = node:derive("0/0")
  node:close()
  t.eq(tostring(node), "keyhost.hd.node (closed)")
  t.raises(function() node:xpub() end, "keyhost%.hd%.node is closed")
  t.eq(child:address(), BIP84.receive0.address, "children are independent")
  do
    local scoped <close> = hd.from_mnemonic(ABANDON)
    t.eq(scoped:depth(), 0)
  end
end)

t.test("entropy <-> mnemonic: BIP39 (Trezor) vectors and python-mnemonic on random entropy", function()
  local here = (debug.getinfo(1, "S").source:match("^@(.*[/\\])")) or "./"
  local vectors = dofile(here .. "fixtures/bip39/vectors.lua")
  t.ok(#vectors >= 124)
  for _, v in ipairs(vectors) do
    local entropy, phrase = hex.decode(v[1]), v[2]
    t.eq(hd.entropy_to_mnemonic(entropy), phrase)
    t.eq(hd.mnemonic_to_entropy(phrase), entropy)
    t.eq(hd.mnemonic_to_entropy(phrase:upper()), entropy, "case is ignored, as in validate_mnemonic")
  end
  t.raises(function() hd.entropy_to_mnemonic(string.rep("\0", 15)) end, "invalid entropy: 15 bytes; BIP39 uses 16, 20, 24, 28 or 32 bytes")
  t.raises(function() hd.entropy_to_mnemonic() end, "bad argument #1 to 'entropy_to_mnemonic' %(string expected")
  t.raises(function() hd.mnemonic_to_entropy((ABANDON:gsub("about$", "abandon"))) end, "the checksum does not match")
  t.raises(function() hd.mnemonic_to_entropy("abandon about") end, "2 words")
end)

t.test("address kinds: from the extended key's version and a standard path; raise where neither tells", function()
  local master = hd.from_mnemonic(ABANDON)
  -- BIP49 (abandon ... about at m/49'/0'/0'; ypub and address as bip-utils' Bip49 gives them)
  local ypub = "ypub6Ww3ibxVfGzLrAH1PNcjyAWenMTbbAosGNB6VvmSEgytSER9azLDWCxoJwW7Ke7icmizBMXrzBx9979FfaHxHcrArf3zbeJJJUZPf663zsP"
  t.eq(master:derive("m/49'/0'/0'"):xpub("ypub"), ypub)
  t.eq(hd.from_extended(ypub):addresses(0, 0, 1)[1], "37VucYSaXLCAsxYyAPfbSi9eh4iEcbShgf")
  t.eq(hd.from_extended(ypub):derive("0/0"):address(), "37VucYSaXLCAsxYyAPfbSi9eh4iEcbShgf")
  t.eq(master:derive("m/49'/0'/0'/0/0"):address(), "37VucYSaXLCAsxYyAPfbSi9eh4iEcbShgf")
  -- BIP49's own test vector: a testnet upub; its version says both the kind and the network
  t.eq(hd.from_extended("upub5EFU65HtV5TeiSHmZZm7FUffBGy8UKeqp7vw43jYbvZPpoVsgU93oac7Wk3u6moKegAEWtGNF8DehrnHtv21XXEMYRUocHqguyjknFHYfgY")
    :addresses(0, 0, 1)[1], "2Mww8dCYPUpKHofjgcXcBCEGmniw9CoaiD2")
  -- BIP86: Taproot from the path
  t.eq(master:derive("m/86'/0'/0'"):addresses(0, 0, 1), { "bc1p5cyxnuxmeuwuvkwfem96lqzszd02n6xdcjrs20cac6yqjjwudpxqkedrcr" })
  -- BIP44: P2PKH for Bitcoin, the Ethereum address for coin type 60
  t.eq(master:derive("m/44'/0'/0'/0/0"):address(), "1LqBGSKuX5yYUonjxT5qGfpUsXKYYWeabA")
  t.eq(master:derive("m/44'/60'/0'/0/0"):address(), "0x9858EfFD232B4033E47d90003D41EC34EcaEda94")
  t.eq(master:derive("m/44'/60'/0'"):addresses(0, 0, 1), { "0x9858EfFD232B4033E47d90003D41EC34EcaEda94" })
  -- an explicit kind always wins
  t.eq(master:derive("m/86'/0'/0'/0/0"):address("p2wpkh"):sub(1, 4), "bc1q")
  t.eq(hd.from_extended(ypub):addresses(0, 0, 1, "p2wpkh")[1]:sub(1, 4), "bc1q")
  -- nothing tells: a plain xpub above depth 0, the master, a non-standard path
  local xpub = master:derive("m/44'/0'/0'"):xpub()
  t.raises(function() hd.from_extended(xpub):addresses(0, 0, 1) end, "address kind cannot be told for this key: its path is not known and its xpub version names no address kind")
  t.raises(function() hd.from_extended(xpub):derive("0/0"):address() end, "address kind cannot be told")
  t.eq(hd.from_extended(xpub):addresses(0, 0, 1, "p2pkh"), { "1LqBGSKuX5yYUonjxT5qGfpUsXKYYWeabA" })
  t.raises(function() master:address() end, "its path m is not a BIP44/49/84/86 path")
  t.raises(function() master:derive("m/0/1"):addresses(0, 0, 1) end, "address kind cannot be told")
  t.eq(#master:derive("m/0/1"):address("p2tr"), 62)
  -- a coin with one kind needs no more: Dogecoin is P2PKH only
  t.eq(master:derive("m/0/1"):address { coin = "doge" }:sub(1, 1), "D")
end)

t.test("mnemonic_suggestions: close wordlist words for a mistyped one", function()
  local typo = ABANDON:gsub("about$", "abuot")
  local words = hd.mnemonic_suggestions(typo, 12)
  t.eq(words[1], "about")  -- its first four letters name no word, so the closest by edits comes first
  t.ok(#words <= 3)
  t.eq(#hd.mnemonic_suggestions(typo, 12, 1), 1)
  t.eq(#hd.mnemonic_suggestions(typo, 13), 0)  -- no 13th word
  t.raises(function() hd.mnemonic_suggestions(typo, 0) end, "position")
end)

t.run()
