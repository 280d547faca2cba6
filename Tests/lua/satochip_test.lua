-- keyhost.card's Satochip in process: set up, seeded, then signing through the one signer interface.
-- Keys are checked against BIP32 test vector 1 and keyhost.hd, signatures with keyhost.ec; PSBTs through
-- keyhost.psbt against the same seed in software. (The maker's client judges the twin: Tests/e2e/test_satochip_py.py.)
local t = require "keyhost.test"
local card = require "keyhost.card"
local hd = require "keyhost.hd"
local ec = require "keyhost.ec"
local hash = require "keyhost.hash"
local hex = require "keyhost.hex"

local VECTOR_SEED = hex.decode("000102030405060708090a0b0c0d0e0f")
local DIGEST = hash.sha256("keyhost satochip test")

local function seeded()
  local s = card.open_satochip { reader = "virtual", seed = 5 }
  s:setup { pin = "1234", puk = "87654321" }
  s:verify_pin("1234")
  s:import_seed(VECTOR_SEED)
  return s
end

t.test("a Satochip's signer gives the vector's keys, its master xpub included", function()
  local s <close> = seeded()
  local g = s:signer()
  t.eq(g:info().family, "Satochip")
  t.eq(g:info().abilities.master_extended_key, true)
  t.eq(g:xpub("m"), hd.from_seed(VECTOR_SEED):xpub())
  t.eq(g:xpub("m/0'/1/2'"), "xpub6D4BDPcP2GT577Vvch3R8wDkScZWzQzMMUm3PWbmWvVJrZwQY4VUNgqFJPMM3No2dFDFGTsxxpG5uJh7n7epu4trkrX7x7DogT5Uv6fcLW5")
  local key = hd.from_seed(VECTOR_SEED):derive("m/84'/0'/0'/0/1"):public_key()
  local sig = g:sign(DIGEST, { path = "m/84'/0'/0'/0/1" })
  t.eq(sig.public_key, key)
  t.ok(ec.verify(key, DIGEST, sig))
  local ok, err = pcall(g.sign_schnorr, g, DIGEST, { path = "m/86'/0'/0'/0/0" })
  t.ok(not ok)
  t.eq(err.kind, "unsupported")
  t.ok(tostring(err):find("ECDSA", 1, true), tostring(err))
  ok, err = pcall(g.public_key, g, "m/0/1/2/3/4/5/6/7/8/9/10")
  t.ok(not ok)
  t.eq(err.kind, "invalid_path")
end)

t.test("a signer needs a seed; card.signer{} opens the Satochip of a state file", function()
  local blank <close> = card.open_satochip { reader = "virtual" }
  blank:setup { pin = "1234", puk = "87654321" }
  blank:verify_pin("1234")
  local ok, err = pcall(blank.signer, blank)
  t.ok(not ok)
  t.eq(err.kind, "no_key")

  local path = os.tmpname()
  os.remove(path)
  do
    local s <close> = card.open_satochip { reader = "virtual", state = path }
    s:setup { pin = "1234", puk = "87654321" }
    s:verify_pin("1234")
    s:import_seed(VECTOR_SEED)
  end
  local g <close> = card.signer { reader = "virtual", state = path, pin = "1234" }
  t.eq(g:info().family, "Satochip")
  t.eq(g:public_key("m/44'/0'/0'/0/0"), hd.from_seed(VECTOR_SEED):derive("m/44'/0'/0'/0/0"):public_key())
  t.raises(function() card.signer { reader = "virtual", state = path, pin = "0000" } end, "wrong PIN")
  t.raises(function() card.signer { reader = "virtual", state = path, family = "keycard", pin = "1234" } end, "holds a Satochip")
  os.remove(path)
end)

t.run()
