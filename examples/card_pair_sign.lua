-- Set up a virtual Keycard, open an automatic session (pair, secure channel, PIN), load the BIP39 test
-- mnemonic's seed, sign a message hash on the card with a derivation path, and check the signature locally.
-- Run: keyhost run examples/card_pair_sign.lua [3.2|4.0]
-- On a real card: card.open{} (first reader) and s:auto{} alone; the PIN and pairing password then come from
-- KEYHOST_PIN / KEYHOST_PAIRING_PASSWORD or a prompt that does not echo.
local card = require "keyhost.card"
local hd = require "keyhost.hd"
local ec = require "keyhost.ec"
local hex = require "keyhost.hex"

local phrase = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"
local pin, puk, pairing_password = "123456", "987654321098", "KeycardTest"

local s <close> = card.open { reader = "virtual", applet = arg[1] or "3.2" }
s:select()
s:init { pin = pin, puk = puk, pairing_password = pairing_password }

-- SELECT, pair (or reuse the stored pairing), open the secure channel, verify the PIN.
local session = s:auto { pin = pin, pairing_password = pairing_password }
print(tostring(s))
if session.pairing_index then print("pairing slot:  " .. session.pairing_index) end

local key_uid = s:load_seed(hd.mnemonic_to_seed(phrase))
print("key UID:       " .. hex.encode(key_uid))

local path = hd.standard_path { coin = "eth", index = 0 }     -- m/44'/60'/0'/0/0
local message = "keyhost card example"
local digest = ec.eth_message_hash(message)
local sig = s:sign(digest, { path = path })
print("path:          " .. path)
print("public key:    " .. hex.encode(sig.public_key))
print("signature:     0x" .. hex.encode(sig.rsv))

-- The card's key is the one keyhost.hd derives from the same mnemonic.
local master <close> = hd.from_mnemonic(phrase)
local node <close> = master:derive(path)
assert(sig.public_key == node:public_key(), "the card signed with the key at " .. path)
assert(ec.verify(node, digest, sig), "the signature verifies")
local signer = ec.eth_recover_message(message, sig.rsv)
print("signer:        " .. signer)
assert(signer == node:address "ethereum")
print("verified")
