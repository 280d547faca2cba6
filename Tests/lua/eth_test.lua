-- Tests for keyhost.eth. Run: keyhost run Tests/lua/eth_test.lua
-- Known answers: the Mail example of EIP-712 (digest and the signature by keccak256("cow")); ethereum/tests RLP;
-- the card path is checked against the mnemonic path for the same seed.
local t = require "keyhost.test"
local eth = require "keyhost.eth"
local hex = require "keyhost.hex"
local hash = require "keyhost.hash"
local hd = require "keyhost.hd"
local card = require "keyhost.card"

local WORDS = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"
local PATH = "m/44'/60'/0'/0/0"

local MAIL = {
  types = {
    EIP712Domain = {
      { name = "name", type = "string" }, { name = "version", type = "string" },
      { name = "chainId", type = "uint256" }, { name = "verifyingContract", type = "address" },
    },
    Person = { { name = "name", type = "string" }, { name = "wallet", type = "address" } },
    Mail = { { name = "from", type = "Person" }, { name = "to", type = "Person" }, { name = "contents", type = "string" } },
  },
  primaryType = "Mail",
  domain = { name = "Ether Mail", version = "1", chainId = 1, verifyingContract = "0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC" },
  message = {
    from = { name = "Cow", wallet = "0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826" },
    to = { name = "Bob", wallet = "0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB" },
    contents = "Hello, Bob!",
  },
}

local function transfer(extra)
  local tx = {
    chain_id = 1, nonce = 7, gas = 21000, max_fee_per_gas = "30000000000", max_priority_fee_per_gas = "0x3b9aca00",
    to = "0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045", value = "1000000000000000000",
  }
  for k, v in pairs(extra or {}) do tx[k] = v end
  return tx
end

t.test("RLP: ethereum/tests cases and round trips", function()
  t.eq(hex.encode(eth.rlp_encode("dog")), "83646f67")
  t.eq(hex.encode(eth.rlp_encode({ "dog", "god", "cat" })), "cc83646f6783676f6483636174")
  t.eq(hex.encode(eth.rlp_encode({ "zw", { 4 }, 1 })), "c6827a77c10401")
  t.eq(hex.encode(eth.rlp_encode(0)), "80")
  t.eq(hex.encode(eth.rlp_encode(1000)), "8203e8")
  t.eq(hex.encode(eth.rlp_encode({})), "c0")
  t.eq(eth.rlp_decode(hex.decode("c7c0c1c0c3c0c1c0")), { {}, { {} }, { {}, { {} } } })
  t.raises(function() eth.rlp_decode(hex.decode("8100")) end, "non%-canonical")
  t.raises(function() eth.rlp_decode(hex.decode("c5010203")) end, "truncated")
  t.raises(function() eth.rlp_encode(-1) end, "0 or more")
  t.raises(function() eth.rlp_encode({ a = 1 }) end, "named fields")
end)

t.test("EIP-712: the Mail example's digest, signature and recovery", function()
  t.eq(hex.encode(eth.typed_data_hash(MAIL)), "be609aee343fb3c4b28e1df9e632fca64fcfaede20f02e86244efddf30957bd2")
  local sig = eth.sign_typed_data(hash.keccak256("cow"), MAIL)
  t.eq(hex.encode(sig.r), "4355c47d63924e8a72e509b65029052eb6c299d53a04e167c5775fd466751c9d")
  t.eq(sig.v, 28)
  t.eq(eth.recover_typed_data(MAIL, sig), "0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826")
  t.eq(eth.recover_typed_data(MAIL, sig.rsv), "0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826")
  -- JSON text is accepted as well as a table.
  local json = require "keyhost.json"
  t.eq(eth.typed_data_hash(json.encode(MAIL)), eth.typed_data_hash(MAIL))
  t.eq(#sig.warnings, 0)
end)

t.test("EIP-712: a permit whose owner is not the signer is signed with a warning", function()
  local function permit(owner)
    return {
      types = {
        EIP712Domain = { { name = "name", type = "string" }, { name = "chainId", type = "uint256" } },
        Permit = { { name = "owner", type = "address" }, { name = "spender", type = "address" }, { name = "value", type = "uint256" } },
      },
      primaryType = "Permit",
      domain = { name = "Token", chainId = 1 },
      message = { owner = owner, spender = "0x1111111254EEB25477B68fb85Ed929f73A960582", value = 5 },
    }
  end
  local key = hash.keccak256("cow")
  local own = eth.sign_typed_data(key, permit("0xcd2a3d9f938e13cd947ec05abc7fe734df8dd826"))
  t.eq(#own.warnings, 0)
  local other = eth.sign_typed_data(key, permit("0x00000000000000000000000000000000000000aa"))
  t.eq(#other.warnings, 1)
  t.ok(other.warnings[1]:find("message.owner is 0x00000000000000000000000000000000000000aa, not the signer 0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826", 1, true))
end)

t.test("EIP-712: hostile documents name the problem", function()
  local bad = { types = { A = { { name = "x", type = "Persn" } } }, primaryType = "A", domain = {}, message = { x = 1 } }
  t.raises(function() eth.typed_data_hash(bad) end, "'Persn' is not defined")
  local cyclic = { types = { A = { { name = "a", type = "A" } } }, primaryType = "A", domain = {}, message = {} }
  t.raises(function() eth.typed_data_hash(cyclic) end, "contains itself")
  local missing = { types = { A = { { name = "x", type = "uint8" } } }, primaryType = "A", domain = {}, message = {} }
  t.raises(function() eth.typed_data_hash(missing) end, "message.x is missing")
  missing.message.x = 256
  t.raises(function() eth.typed_data_hash(missing) end, "does not fit in uint8")
  t.raises(function() eth.typed_data_hash(42) end, "typed%-data table or JSON text expected")
end)

t.test("transactions: build, sign, serialize, decode, recover", function()
  local node = hd.from_mnemonic(WORDS):derive(PATH)
  local address = node:address { coin = "eth" }
  local tx = eth.tx(transfer())
  t.eq(#tx:signing_hash(), 32)
  t.raises(function() tx:serialize() end, "not signed")
  t.raises(function() tx:hash() end, "signing_hash")
  local signed = tx:sign(node)
  t.eq(signed:sender(), address)
  local raw = signed:serialize()
  t.eq(raw:byte(1), 2)
  local fields = eth.decode_tx(raw)
  t.eq(fields.from, address)
  t.eq(fields.type, 2)
  t.eq(fields.nonce, 7)
  t.eq(fields.value, "1000000000000000000")
  t.eq(fields.max_priority_fee_per_gas, "1000000000")
  t.eq(fields.hash, "0x" .. hex.encode(signed:hash()))
  t.eq(eth.decode_tx("0x" .. hex.encode(raw)).hash, fields.hash)
  -- The decoded table builds the same transaction; from and hash are checked, not trusted.
  t.eq(eth.tx(fields):serialize(), raw)
  fields.from = "0x0000000000000000000000000000000000000001"
  t.raises(function() eth.tx(fields) end, "is signed by " .. address)
  -- The same key as a 32-byte string, and through a signer function.
  t.eq(tx:sign(require("keyhost.ec").private_key(node):bytes()):serialize(), raw)
  local seen
  t.eq(tx:sign(function(digest) seen = digest; return require("keyhost.ec").sign(node, digest) end):serialize(), raw)
  t.eq(seen, tx:signing_hash())
  -- TX.json text works too, with amounts beyond 64 bits as JSON numbers.
  local big = eth.tx('{"chain_id":1,"nonce":0,"gas":21000,"gas_price":1,"to":"","value":123456789012345678901234567890}')
  t.eq(big:fields().value, "123456789012345678901234567890")
  t.raises(function() eth.tx(42) end, "transaction table or JSON text expected")
end)

t.test("transactions: legacy EIP-155 and EIP-2930 with an access list", function()
  local key = hash.keccak256("legacy")
  local legacy = eth.tx { chain_id = 1, nonce = 0, gas = 21000, gas_price = "20000000000", to = "0x3535353535353535353535353535353535353535",
    value = "1000000000000000000" }:sign(key)
  local f = eth.decode_tx(legacy:serialize())
  t.eq(f.type, 0)
  t.ok(f.v == 37 or f.v == 38, "EIP-155 v for chain 1")
  local typed = eth.tx { type = 1, chain_id = 5, nonce = 1, gas = 50000, gas_price = 1, to = "",
    access_list = { { address = "0x3535353535353535353535353535353535353535", storage_keys = { "0x" .. string.rep("00", 31) .. "01" } } },
    data = "0x6001" }:sign(key)
  local g = eth.decode_tx(typed:serialize())
  t.eq(g.type, 1)
  t.eq(g.to, "")
  t.eq(#g.access_list, 1)
  t.eq(g.access_list[1].storage_keys[1], "0x" .. string.rep("00", 31) .. "01")
end)

t.test("transactions: bad fields are refused by name", function()
  t.raises(function() eth.tx(transfer { gasLimit = 1 }) end, "unknown transaction field 'gasLimit'")
  t.raises(function() eth.tx(transfer { chain_id = false }) end, "chain_id")
  t.raises(function() eth.tx(transfer { value = -1 }) end, "negative")
  t.raises(function() eth.tx(transfer { value = 1.5 }) end, "not an integer")
  t.raises(function() eth.tx(transfer { gas_price = 1 }) end, "gas_price' is not a field of type 2")
  t.raises(function() eth.tx(transfer { to = "0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96046" }) end, "checksum")
  t.raises(function() eth.tx(transfer { data = "\1\2" }) end, "0x")
  t.raises(function() eth.tx(transfer()):sign(42) end, "bad argument #1 to 'sign'")
  t.raises(function() eth.decode_tx("\3\192") end, "EIP%-4844")
end)

t.test("errors are tables with kind, and field or offset", function()
  local ok, e = pcall(eth.tx, transfer { gasLimit = 1 })
  t.ok(not ok)
  t.eq(e.kind, "invalid_transaction")
  t.eq(e.field, "gasLimit")
  ok, e = pcall(eth.tx, transfer { nonce = "0xzz" })
  t.eq(e.field, "nonce")
  ok, e = pcall(eth.rlp_decode, hex.decode("c3c58000"))
  t.eq(e.kind, "invalid_rlp")
  t.eq(e.offset, 1)
  ok, e = pcall(eth.decode_tx, hex.decode("02f8"))
  t.eq(e.kind, "invalid_transaction")
  t.eq(e.offset, 1)
  ok, e = pcall(eth.typed_data_hash, { types = {}, primaryType = "X", domain = {}, message = {} })
  t.eq(e.kind, "invalid_typed_data")
  t.ok(tostring(e):find("primaryType 'X' is not defined", 1, true))
  ok, e = pcall(eth.typed_data_hash, "{")
  t.eq(e.kind, "invalid_typed_data")
  -- Raw transactions given as 0x-text: bad hex is an invalid transaction, as bad bytes are.
  ok, e = pcall(eth.decode_tx, "0x02zz")
  t.eq(e.kind, "invalid_transaction")
  t.ok(tostring(e):find("invalid raw transaction: has a non-hex character", 1, true))
end)

t.test("a card session signs with {path = …}: the same sender as the mnemonic", function()
  local s <close> = card.open { reader = "virtual", applet = "3.2" }
  s:init { pin = "123456", puk = "987654321098", pairing_password = "KeycardTest" }
  s:auto { pin = "123456", pairing_password = "KeycardTest" }
  s:load_seed(hd.mnemonic_to_seed(WORDS))
  local address = hd.from_mnemonic(WORDS):derive(PATH):address { coin = "eth" }
  local tx = eth.tx(transfer())
  local signed = tx:sign(s, { path = PATH })
  t.eq(signed:sender(), address)
  -- RFC 6979 on the virtual card: byte for byte the software signature.
  t.eq(signed:serialize(), tx:sign(hd.from_mnemonic(WORDS):derive(PATH)):serialize())
  local sig = eth.sign_typed_data(s, MAIL, { path = PATH })
  t.eq(eth.recover_typed_data(MAIL, sig), address)
  t.raises(function() tx:sign(s, { pth = PATH }) end, "unknown option 'pth'")
end)

t.run()
