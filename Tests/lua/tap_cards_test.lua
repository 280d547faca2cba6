-- keyhost.card's TAPSIGNER and SATSCARD in process: their own methods and their signer. Keys are checked with
-- keyhost.hd derivation of the xpub the card proves, signatures with keyhost.ec, the unsealed key against the address
-- the card's read proved. (The maker's client judges the twins: Tests/e2e/test_cktap.py, test_tap_cards_cli.py.)
local t = require "keyhost.test"
local card = require "keyhost.card"
local hd = require "keyhost.hd"
local ec = require "keyhost.ec"
local hash = require "keyhost.hash"

local DIGEST = hash.sha256("keyhost tap card test")

t.test("a TAPSIGNER set up from Lua signs through its signer at the path it derived to", function()
  local s <close> = card.open_tapsigner { reader = "virtual", seed = 3, cvc = "123456" }
  t.eq(s:status().path, nil)
  s:setup { chain_code = hash.sha256("user entropy") }
  local derived = s:xpub()
  t.eq(derived.path, "m/84'/0'/0'")
  local g = s:signer()
  t.eq(g:info().family, "TAPSIGNER")
  -- The card's own xpub leaves depth and parent fingerprint unset (as cktap's does); key and chain code are the same.
  local ours = hd.from_extended(g:xpub("m/84'/0'/0'"))
  t.eq(ours:depth(), 3)
  t.eq(ours:derive("1/2"):public_key(), hd.from_extended(derived.xpub):derive("1/2"):public_key())
  local key = hd.from_extended(derived.xpub):derive("0/5"):public_key()
  t.eq(g:public_key("m/84'/0'/0'/0/5"), key)
  local sig = g:sign(DIGEST, { path = "m/84'/0'/0'/0/5" })
  t.ok(ec.verify(key, DIGEST, sig))
  local ok, err = pcall(g.sign, g, DIGEST, { path = "m/84'/0'/0'/0/5/1/2" })
  t.ok(not ok)
  t.eq(err.kind, "invalid_path")
  t.raises(function() s:change_cvc("12") end, "6 to 32 digits")
  t.ok(#s:backup() > 0)
end)

t.test("a SATSCARD slot read, unsealed and renewed from Lua", function()
  local s <close> = card.open_satscard { reader = "virtual", seed = 4, cvc = "123456" }
  local read = s:read()
  t.eq(read.slot, 0)
  t.raises(function() s:unseal { slot = 1 } end, "active slot")
  local unsealed = s:unseal { slot = 0 }
  t.eq(unsealed.address, read.address)
  t.eq(ec.private_key(unsealed.private_key):public_key(), read.public_key)
  t.eq(ec.private_key(unsealed.private_key):address { kind = "p2wpkh" }, read.address)
  local renewed = s:new { chain_code = hash.sha256("next slot") }
  t.eq(renewed.slot, 1)
  t.ok(renewed.address ~= read.address)
  t.eq(#s:slots().slots, 10)
end)

t.run()
