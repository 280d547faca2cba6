-- Tests for keyhost.address and keyhost.coins. Run: keyhost run Tests/lua/address_test.lua
-- Expected values: EIP-55 test cases, BIP173 (P2WPKH of the generator), BIP84/BIP86/BIP49 test vectors.
local t = require "keyhost.test"
local address = require "keyhost.address"
local coins = require "keyhost.coins"
local hd = require "keyhost.hd"
local hex = require "keyhost.hex"

local G = hex.decode("0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798")
local BIP84_PUB = hex.decode("0330d54fd0dd420a6e5f8d3624f5f3482cae350f79d5f0753bf5beef9c2d91af3c")
local BIP84_ADDR = "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu"
local ABANDON = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"

t.test("encode from a public key, a hash or an x-only key", function()
  t.eq(address.encode(G, { kind = "p2wpkh" }), "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4") -- BIP173
  t.eq(address.encode(G, { kind = "p2wpkh", coin = "test" }), "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx") -- BIP173
  t.eq(address.encode(G, { kind = "p2pkh" }), "1BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAMH")
  t.eq(address.encode(BIP84_PUB), BIP84_ADDR, "btc and p2wpkh by default")
  local hash160 = hex.decode("751e76e8199196d454941c45d1b3a323f1433bd6")
  t.eq(address.encode(hash160, { kind = "p2wpkh" }), "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4")
  t.eq(address.encode(hash160, { kind = "p2pkh" }), "1BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAMH")
  t.eq(address.encode(hash160, { kind = "p2sh-p2wpkh" }), address.encode(G, { kind = "p2sh-p2wpkh" }))
  -- BIP49 testnet vector: key hash 38971f73... gives 2Mww8dCYPUpKHofjgcXcBCEGmniw9CoaiD2
  t.eq(address.encode(hex.decode("38971f73930f6c141d977ac4fd4a727c854935b3"), { kind = "p2sh-p2wpkh", coin = "test" }),
    "2Mww8dCYPUpKHofjgcXcBCEGmniw9CoaiD2")
  -- BIP86: internal key of m/86'/0'/0'/0/0
  t.eq(address.encode(hex.decode("cc8a4bc64d897bddc5fbc2f670f7a8ba0b386779106cf1223c6fc5d7cd6fc115"), { kind = "p2tr" }),
    "bc1p5cyxnuxmeuwuvkwfem96lqzszd02n6xdcjrs20cac6yqjjwudpxqkedrcr")
  -- objects work too
  local node = hd.from_mnemonic(ABANDON):derive("m/84'/0'/0'/0/0")
  t.eq(address.encode(node), BIP84_ADDR)
  t.eq(address.encode(node, { kind = "ethereum" }), node:address("ethereum"))
  t.eq(address.encode(hd.from_mnemonic(ABANDON):derive("m/44'/60'/0'/0/0"), { coin = "eth" }),
    "0x9858EfFD232B4033E47d90003D41EC34EcaEda94")
  t.eq(address.encode(hex.decode("5aaeb6053f3e94c9b9a09f33669435e7ef1beaed"), { kind = "ethereum" }),
    "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed")
end)

t.test("encode errors", function()
  t.raises(function() address.encode("abc") end, "cannot make an address of 3 bytes")
  t.raises(function() address.encode(string.rep("\1", 20), { kind = "p2tr" }) end, "p2tr address needs a public key or a 32%-byte x%-only key")
  t.raises(function() address.encode(string.rep("\1", 32), { kind = "p2wpkh" }) end, "32 bytes is an x%-only key, which only makes p2tr addresses")
  t.raises(function() address.encode(G, { coin = "doge", kind = "p2wpkh" }) end, "Dogecoin has no p2wpkh addresses")
  t.raises(function() address.encode(G, { coin = "eth", kind = "p2pkh" }) end, "Ethereum has no p2pkh addresses")
  t.raises(function() address.encode(G, { kind = "segwit2" }) end, 'unknown address kind "segwit2"')
  t.raises(function() address.encode(G, { coins = "btc" }) end, "unknown option 'coins'; known options: coin, kind")
  t.raises(function() address.encode(true) end, "bad argument #1 to 'encode' %(public key string, keyhost%.ec%.private_key or keyhost%.hd%.node expected, got boolean%)")
  t.raises(function() address.encode(G, 5) end, "bad argument #2 to 'encode' %(address kind name or options table expected, got number%)")
  t.eq(address.encode(G, "p2pkh"), "1BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAMH", "a kind name alone is accepted, as in node:address")
end)

t.test("decode returns type, coin, payload and script", function()
  t.eq(address.decode("bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"), {
    type = "p2wpkh", coin = "BTC", witness_version = 0,
    payload = hex.decode("751e76e8199196d454941c45d1b3a323f1433bd6"),
    script = hex.decode("0014751e76e8199196d454941c45d1b3a323f1433bd6"),
  })
  t.eq(address.decode("1BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAMH"), {
    type = "p2pkh", coin = "BTC",
    payload = hex.decode("751e76e8199196d454941c45d1b3a323f1433bd6"),
    script = hex.decode("76a914751e76e8199196d454941c45d1b3a323f1433bd688ac"),
  })
  local tr = address.decode("bc1p5cyxnuxmeuwuvkwfem96lqzszd02n6xdcjrs20cac6yqjjwudpxqkedrcr")
  t.eq(tr.type, "p2tr")
  t.eq(tr.witness_version, 1)
  t.eq(hex.encode(tr.script), "5120a60869f0dbcf1dc659c9cecbaf8050135ea9e8cdc487053f1dc6880949dc684c") -- BIP86
  local p2sh = address.decode("2Mww8dCYPUpKHofjgcXcBCEGmniw9CoaiD2", { coin = "test" })
  t.eq(p2sh.type, "p2sh")
  t.eq(hex.encode(p2sh.payload), "336caa13e08b96080a32b5d818d59b4ab3b36742") -- BIP49 script_hash
  t.eq(p2sh.coin, "TEST")
  local eth = address.decode("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", { coin = "eth" })
  t.eq(eth, { type = "ethereum", coin = "ETH", payload = hex.decode("5aaeb6053f3e94c9b9a09f33669435e7ef1beaed") })
  -- BIP350 (bech32m) P2WSH example from BIP173
  local wsh = address.decode("bc1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3qccfmv3")
  t.eq(wsh.type, "p2wsh")
  t.eq(#wsh.payload, 32)
end)

t.test("validate raises with the reason; is_valid answers yes or no", function()
  t.eq(address.validate(BIP84_ADDR), true)
  t.eq(address.is_valid(BIP84_ADDR), true)
  local bad_checksum = BIP84_ADDR:sub(1, -2) .. "v"
  t.raises(function() address.validate(bad_checksum) end, "invalid address: bad checksum")
  t.eq(address.is_valid(bad_checksum), false)
  t.raises(function() address.validate(BIP84_ADDR, { coin = "test" }) end, "wrong network")
  t.raises(function() address.validate("tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx") end, "wrong network")
  t.raises(function() address.validate("LaMT348PWRnrqeeWArpwQPbuanpXDZGEUz") end,
    "wrong network, expected Bitcoin version byte 0x00 or 0x05 but found version byte 0x30 %(Litecoin%)")
  t.raises(function() address.validate("1BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAM0") end, 'character "0" at position 33 is not in the Base58 alphabet')
  t.raises(function() address.validate("bc1qW508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4") end, "mixed upper and lower case")
  t.raises(function() address.validate("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD", { coin = "eth" }) end, "EIP%-55 mixed%-case checksum does not match")
  t.raises(function() address.validate(BIP84_ADDR, { coin = "nope" }) end, 'bad argument #2 to \'validate\' %(option \'coin\': unknown coin "nope"')
  t.eq(address.is_valid(BIP84_ADDR, { coin = "ltc" }), false)
  t.raises(function() address.is_valid(5) end, "bad argument #1 to 'is_valid' %(string expected, got number%)")
end)

t.test("EIP-55: checksum the spec's test cases", function()
  local normal = { "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
                   "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB", "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb" }
  for _, a in ipairs(normal) do
    t.eq(address.eth_checksum(a:lower()), a)
    t.eq(address.eth_checksum("0x" .. a:sub(3):upper()), a)
    t.eq(address.eth_checksum(a), a)
    t.eq(address.eth_checksum(hex.decode(a)), a, "20 raw bytes")
    t.eq(address.validate(a, { coin = "eth" }), true)
  end
  t.eq(address.eth_checksum("0x52908400098527886E0F7030069857D2E4169EE7"), "0x52908400098527886E0F7030069857D2E4169EE7")
  t.eq(address.eth_checksum("0xde709f2102306220921060314715629080e2fb77"), "0xde709f2102306220921060314715629080e2fb77")
  t.raises(function() address.eth_checksum("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD") end, "EIP%-55 mixed%-case checksum does not match")
  t.raises(function() address.eth_checksum("0x1234") end, "20 bytes %(40 hex digits after 0x%)")
  t.raises(function() address.eth_checksum("5aaeb6053f3e94c9b9a09f33669435e7ef1beaed") end, "starts with 0x")
end)

t.test("coins.get and coins.list", function()
  local btc = coins.get("btc")
  t.eq(btc, { symbol = "BTC", name = "Bitcoin", slip44 = 0, testnet = false, default_kind = "p2wpkh",
              kinds = { "p2wpkh", "p2tr", "p2sh-p2wpkh", "p2pkh" } })
  t.eq(coins.get("BTC"), btc)
  t.eq(coins.get("Bitcoin"), btc)
  t.eq(coins.get(0), btc)
  t.eq(coins.get(60).symbol, "ETH")
  t.eq(coins.get("eth").kinds, { "ethereum" })
  t.eq(coins.get("test").testnet, true)
  t.eq(coins.get("doge").default_kind, "p2pkh")
  t.eq(coins.get(btc), btc, "a coin table names its coin")
  local list = coins.list()
  t.ok(#list >= 8)
  local symbols = {}
  for _, c in ipairs(list) do symbols[c.symbol] = true end
  for _, s in ipairs({ "BTC", "TEST", "LTC", "DOGE", "ETH" }) do t.ok(symbols[s], s) end
  t.raises(function() coins.get("xyz") end, 'bad argument #1 to \'get\' %(coin: unknown coin "xyz"; use one of btc, test')
  t.raises(function() coins.get(99999) end, "no coin with SLIP%-44 number 99999")
  t.raises(function() coins.get() end, "bad argument #1 to 'get' %(coin symbol or SLIP%-44 number expected, got no value%)")
  -- a coin table works as an option anywhere
  t.eq(address.encode(G, { coin = coins.get("ltc"), kind = "p2pkh" }), address.encode(G, { coin = "ltc", kind = "p2pkh" }))
end)

t.run()
