-- Sign a PSBT on a (software) Keycard, finalize it and extract the transaction, offline.
-- The PSBT in examples/data/psbt_card.psbt was made by embit (an independent Python library,
-- Tests/Oracles/psbt_oracle.py make) for the BIP39 test mnemonic on testnet: a P2WPKH, a P2SH-P2WPKH
-- and a taproot (BIP86) input, a payment and a change output.
-- Run: keyhost run examples/psbt_card.lua [4.0|3.2]   (3.2 has no Schnorr: the taproot input is skipped)
local card = require "keyhost.card"
local hd = require "keyhost.hd"
local hex = require "keyhost.hex"
local psbt = require "keyhost.psbt"

local phrase = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"
local pin = "123456"
local applet = (...) or "4.0"

-- The data file sits next to this script.
local here = (arg and arg[0] or "examples/psbt_card.lua"):match("^(.*)/") or "."
local file = assert(io.open(here .. "/data/psbt_card.psbt", "rb"))
local p = psbt.parse(file:read("a"))
file:close()

local s <close> = card.open { reader = "virtual", applet = applet }
s:select()
s:init { pin = pin, puk = "987654321098", pairing_password = "KeycardTest" }
s:auto { pin = pin, pairing_password = "KeycardTest" }
s:load_seed(hd.mnemonic_to_seed(phrase))

-- What is being signed: check this before signing (on a real device, on its screen).
local summary = p:inspect(s, { coin = "test" })
print(string.format("PSBT v%d  unsigned txid %s  fingerprint %s", summary.version, summary.unsigned_txid, summary.master_fingerprint))
for _, input in ipairs(summary.inputs) do
  print(string.format("  in  %d  %-12s %-64s %8d sat%s", input.index, input.script_type, input.address, input.amount, input.ours and "  ours" or ""))
end
for _, output in ipairs(summary.outputs) do
  print(string.format("  out %d  %-12s %-64s %8d sat%s", output.index, output.script_type, output.address, output.amount, output.change and "  change" or ""))
end
print(string.format("  fee %d sat (about %.1f sat/vB)", summary.fee, summary.fee_rate))
for _, warning in ipairs(summary.warnings or {}) do print("  warning: " .. warning) end
assert(summary.fee == 1500 and summary.outputs[2].change)

-- The card signs each input's sighash with the key at its BIP32 path: ECDSA, and BIP340 Schnorr
-- with the BIP86 tweak for the taproot input (applet 4.0).
local report = p:sign(s)
for _, signed in ipairs(report.signed) do
  print(string.format("  signed input %d (%s, %s) with %s", signed.input, signed.script_type, signed.sighash, signed.path))
end
for _, skipped in ipairs(report.skipped) do
  print(string.format("  skipped input %d: %s", skipped.input, skipped.reason))
end
if #report.skipped > 0 then
  assert(applet ~= "4.0" and report.signatures == 2)
  return
end
assert(report.signatures == 3)

p:finalize()
local raw = p:extract()
print("transaction " .. p:txid())
print(hex.encode(raw))
