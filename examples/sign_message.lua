-- Sign and verify an Ethereum personal message (EIP-191) and a Bitcoin signed message.
-- Uses the BIP39 test mnemonic so the output is reproducible (RFC 6979 signatures are deterministic).
-- Run: keyhost run examples/sign_message.lua
local hd = require "keyhost.hd"
local ec = require "keyhost.ec"
local hex = require "keyhost.hex"

local phrase = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"
local master <close> = hd.from_mnemonic(phrase)
local message = "I control this address. keyhost example"

-- Ethereum personal_sign: 65 bytes r || s || v, v = 27 or 28.
local eth_key <close> = master:derive(hd.standard_path { coin = "eth", index = 0 })
local eth_address = eth_key:address { coin = "eth" }
local eth_sig = ec.eth_sign_message(eth_key, message)
print("ethereum address:   " .. eth_address)
print("signature:          0x" .. hex.encode(eth_sig))
local signer = ec.eth_recover_message(message, eth_sig)
print("recovered signer:   " .. signer)
assert(signer == eth_address, "the recovered signer must be the address")
assert(ec.eth_recover_message(message .. "!", eth_sig) ~= eth_address, "another message has another signer")

-- Bitcoin signed message (base64, as Bitcoin Core's signmessage / Electrum), for a native segwit address.
local btc_key <close> = master:derive(hd.standard_path { coin = "btc", kind = "p2wpkh", index = 0 })
local btc_address = btc_key:address("p2wpkh")
local btc_sig = ec.btc_sign_message(btc_key, message, { kind = "p2wpkh" })
print("bitcoin address:    " .. btc_address)
print("signature:          " .. btc_sig)
local ok = ec.btc_verify_message(btc_address, message, btc_sig)
print("verifies:           " .. tostring(ok))
assert(ok, "the signature must verify")
assert(not ec.btc_verify_message(btc_address, message .. "!", btc_sig), "a changed message must not verify")
