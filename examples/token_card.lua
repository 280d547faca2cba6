-- A card-bound token wallet: the holder key lives on a Keycard (here the software card, applet 3.2 or 4.0).
-- The wallet file keeps only the card's key UID, the path and the public key; each run signs its receipt
-- on the card, and a different card is refused before anything runs.
-- Run: keyhost run examples/token_card.lua [3.2|4.0]
-- On a real card: card.open{} (first reader) and s:auto{} alone; the PIN and pairing password then come from
-- KEYHOST_PIN / KEYHOST_PAIRING_PASSWORD or a prompt that does not echo. From the shell:
--   keyhost token wallet init --card --path "m/44'/60'/0'/0/0"   and   keyhost token run ID
local token = require "keyhost.token"
local card = require "keyhost.card"
local hd = require "keyhost.hd"
local ec = require "keyhost.ec"
local hex = require "keyhost.hex"

local phrase = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"
local pin, puk, pairing_password = "123456", "987654321098", "KeycardTest"
local key_path = "m/44'/60'/0'/0/0"

-- A software card with the BIP39 test mnemonic's seed.
local s <close> = card.open { reader = "virtual", applet = arg[1] or "3.2" }
s:select()
s:init { pin = pin, puk = puk, pairing_password = pairing_password }
s:auto { pin = pin, pairing_password = pairing_password }
s:load_seed(hd.mnemonic_to_seed(phrase))

local path = os.tmpname()
os.remove(path)
local wallet <close> = token.wallet.create(path, { card = s, path = key_path })
local holder = wallet:holder()
print(tostring(wallet))
print("card key UID:  " .. hex.encode(holder.card_key_uid))
print("holder key:    " .. hex.encode(holder.public_key) .. " at " .. holder.card_path)

local issuer = ec.generate()
local text = token.issue { program = "local t = ... t.emit { kind = 'paid', amount = t.token.value, to = t.args.to }",
                           value = 1250, unit = "EUR-cent", to = holder.public_key, issuer_key = issuer }
local id = token.parse(text)[1].id
wallet:import(text)

-- Without the card there is no signer.
local ok, err = pcall(wallet.run, wallet, id, { to = "landlord" })
assert(not ok and err.kind == "card_required")
print("without card:  refused (" .. err.kind .. ")")

local run = wallet:run(id, { to = "landlord" }, { card = s })
print(("paid:          %d %s to %s"):format(run.effects[1].amount, "EUR-cent", run.effects[1].to))
local report = token.verify_receipt(run.receipt)
assert(report.valid and report.holder_signature_valid)
print("receipt:       " .. hex.encode(run.receipt_id) .. ", signed by the card, valid")

wallet:close()
os.remove(path)
