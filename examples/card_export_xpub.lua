-- Export an account's extended public key from a (virtual) Keycard and derive its receive addresses
-- locally with keyhost.hd: the watch-only half of a hardware wallet.
-- Run: keyhost run examples/card_export_xpub.lua [3.2|4.0]
local card = require "keyhost.card"
local hd = require "keyhost.hd"

local phrase = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"
local pin = "123456"

local s <close> = card.open { reader = "virtual", applet = arg[1] or "3.2" }
s:select()
s:init { pin = pin, puk = "987654321098", pairing_password = "KeycardTest" }
s:auto { pin = pin, pairing_password = "KeycardTest" }
s:load_seed(hd.mnemonic_to_seed(phrase))

-- BIP84 account 0: the card exports public key and chain code; keyhost builds the zpub.
local account_path = hd.standard_path { coin = "btc", kind = "p2wpkh" }   -- m/84'/0'/0'
local exported = s:export_key { path = account_path, kind = "extended", family = "zpub" }
print(account_path .. "  " .. exported.xpub)

local account = hd.from_extended(exported.xpub)
for i, address in ipairs(account:addresses(0, 0, 5)) do
  print(string.format("  0/%d  %s", i - 1, address))
end

-- The same account from the mnemonic, for comparison (BIP84's test vector address comes first).
local master <close> = hd.from_mnemonic(phrase)
assert(exported.xpub == master:derive(account_path):xpub "zpub")
assert(account:addresses(0, 0, 1)[1] == "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu")
