-- Tests for keyhost.card.signer, the one signer interface, over the virtual Keycard (applets 3.2 and 4.0).
-- Keys are checked against BIP32 test vector 1 and keyhost.hd derivation, signatures with keyhost.ec.
-- (The Satochip signer is checked against its maker's client in Tests/e2e/test_card_signer.py.)
local t = require "keyhost.test"
local card = require "keyhost.card"
local hd = require "keyhost.hd"
local ec = require "keyhost.ec"
local hash = require "keyhost.hash"
local hex = require "keyhost.hex"

local PIN, PUK, PASSWORD = "123456", "987654321098", "KeycardTest"
local VECTOR_SEED = hex.decode("000102030405060708090a0b0c0d0e0f")
local VECTOR_XPUB = "xpub6D4BDPcP2GT577Vvch3R8wDkScZWzQzMMUm3PWbmWvVJrZwQY4VUNgqFJPMM3No2dFDFGTsxxpG5uJh7n7epu4trkrX7x7DogT5Uv6fcLW5"
local DIGEST = hash.sha256("keyhost card signer test")

--- A virtual card of `applet` holding BIP32 vector 1's seed, PIN verified.
local function loaded(applet)
  local s = card.open { reader = "virtual", applet = applet, seed = 11 }
  s:select()
  s:init { pin = PIN, puk = PUK, pairing_password = PASSWORD }
  s:auto { pin = PIN, pairing_password = PASSWORD }
  s:load_seed(VECTOR_SEED)
  return s
end

for _, applet in ipairs { "3.2", "4.0" } do
  t.test("a Keycard " .. applet .. " session's signer gives BIP32 vector keys and verified signatures", function()
    local s <close> = loaded(applet)
    local g = s:signer()
    local info = g:info()
    t.eq(info.family, "Keycard")
    t.eq(info.abilities.schnorr, applet == "4.0")
    t.eq(g:xpub("m/0'/1/2'"), VECTOR_XPUB)
    local node = hd.from_seed(VECTOR_SEED):derive("m/44'/0'/0'/0/3")
    t.eq(g:public_key("m/44'/0'/0'/0/3"), node:public_key())
    local sig = g:sign(DIGEST, { path = "m/44'/0'/0'/0/3" })
    t.eq(sig.public_key, node:public_key())
    t.ok(ec.verify(node:public_key(), DIGEST, sig))
    t.raises(function() g:sign(DIGEST, { path = "0/1" }) end, "must start at the master key")
    t.raises(function() g:sign(DIGEST) end, "option 'path' is required")
    t.raises(function() g:sign("short", { path = "m/0" }) end, "32%-byte hash")
    if applet == "3.2" then
      local ok, err = pcall(g.sign_schnorr, g, DIGEST, { path = "m/86'/0'/0'/0/0" })
      t.ok(not ok)
      t.eq(err.kind, "unsupported")
    else
      local signed = g:sign_schnorr(DIGEST, { path = "m/86'/0'/0'/0/0" })
      t.eq(#signed.signature, 64)
      t.eq(signed.public_key, hd.from_seed(VECTOR_SEED):derive("m/86'/0'/0'/0/0"):public_key())
    end
    -- The master's chain code no Keycard gives: refused before anything is sent.
    local ok, err = pcall(g.xpub, g, "m")
    t.ok(not ok)
    t.eq(err.kind, "unsupported")
    -- Closing the signer leaves the session open.
    g:close()
    t.raises(function() g:info() end, "is closed")
    t.eq(s:info().initialized, true)
    t.ok(tostring(s):find("PIN verified", 1, true), tostring(s))
  end)
end

t.test("a signer needs a verified PIN, and card.signer{} opens the virtual Keycard ready to sign", function()
  local s <close> = card.open { reader = "virtual", applet = "3.2" }
  s:select()
  t.raises(function() s:signer() end, "needs the PIN verified")
  t.raises(function() card.signer { reader = "virtual", family = "tapsigner2" } end, "option 'family'")
  t.raises(function() card.signer { reader = "virtual" } end, "the virtual card is blank")
end)

t.run()
