-- Mnemonic -> BIP84 account xpub -> first receive addresses, plus an Ethereum address.
-- Uses the BIP39 test mnemonic, so the output matches BIP84's published test vectors.
-- Run: keyhost run examples/derive.lua
local hd = require "keyhost.hd"
local hex = require "keyhost.hex"

local phrase = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"
hd.validate_mnemonic(phrase) -- raises with the bad word / checksum problem if the phrase is wrong

local master <close> = hd.from_mnemonic(phrase, { passphrase = "" })
print(master)                                   -- position and fingerprint only, never key material

-- BIP84 account: m/84'/0'/0'
local account <close> = master:derive(hd.standard_path { coin = "btc", kind = "p2wpkh", account = 0 })
print("account path:       " .. account:path())
print("master fingerprint: " .. hex.encode(master:fingerprint()))
print("account zpub:       " .. account:xpub("zpub"))

-- The watch-only side needs nothing but the zpub.
local watch = hd.from_extended(account:xpub("zpub"))
print("first 5 receive addresses (m/84'/0'/0'/0/i):")
for i, address in ipairs(watch:addresses(0, 0, 5, { kind = "p2wpkh" })) do
  print(("  %d  %s"):format(i - 1, address))
end

-- Ethereum: m/44'/60'/0'/0/0
local eth_path = hd.standard_path { coin = "eth", index = 0 }
print(("ethereum %s: %s"):format(eth_path, master:derive(eth_path):address { coin = "eth" }))
