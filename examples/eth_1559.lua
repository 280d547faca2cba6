-- Sign an EIP-1559 transfer with a key derived from a mnemonic, then decode the raw bytes back and
-- check the sender: what a wallet does before eth_sendRawTransaction. No network, no card.
-- Run: keyhost run examples/eth_1559.lua
-- (With a Keycard, `tx:sign(session, { path = PATH })` signs on the card instead; see docs/lua-api.md.)
local eth = require "keyhost.eth"
local hd = require "keyhost.hd"
local hex = require "keyhost.hex"

local phrase = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"
local PATH = "m/44'/60'/0'/0/0"

local master <close> = hd.from_mnemonic(phrase)
local account = master:derive(PATH)
print("sender    " .. account:address { coin = "eth" })

-- Amounts are decimal (or 0x-hex) strings: wei values do not fit in a Lua integer.
local tx = eth.tx {
  type = 2,
  chain_id = 1,
  nonce = 0,
  gas = 21000,
  max_priority_fee_per_gas = "1500000000",  -- 1.5 gwei tip
  max_fee_per_gas = "30000000000",          -- 30 gwei cap
  to = "0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045",
  value = "50000000000000000",              -- 0.05 ETH
  data = "0x",
}
print("to sign   0x" .. hex.encode(tx:signing_hash()))

local signed = tx:sign(account)
local raw = signed:serialize()
print("raw       0x" .. hex.encode(raw))
print("tx hash   0x" .. hex.encode(signed:hash()))

-- Decode what would be broadcast: the sender is recovered from the signature, not taken on trust.
local fields = eth.decode_tx(raw)
for _, name in ipairs { "type", "chain_id", "nonce", "max_priority_fee_per_gas", "max_fee_per_gas", "gas", "to", "value", "y_parity", "from" } do
  print(string.format("  %-25s %s", name, tostring(fields[name])))
end
assert(fields.from == account:address { coin = "eth" })
assert(fields.from == "0x9858EfFD232B4033E47d90003D41EC34EcaEda94")
