-- The keyhost.card command set through real PC/SC: libpcsclite -> pcscd -> vpcd -> `keyhost card serve`.
-- Run by Tests/e2e/test_card_over_pcsc.py with the reader name and the applet the card was served with.
local card = require "keyhost.card"
local hd = require "keyhost.hd"
local ec = require "keyhost.ec"
local hash = require "keyhost.hash"
local t = require "keyhost.test"

local reader, applet, store = ...
local phrase = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"
local master = hd.from_mnemonic(phrase)
local PIN, PUK, PASSWORD = "123456", "987654321098", "KeycardTest"

-- The served software card is certified by its own test CA, which real readers do not trust by default.
local function open() return card.open { reader = reader, pairing_store = store, trusted_ca_keys = { card.test_ca_key() } } end

local function kind_of(fn, ...)
  local ok, err = pcall(fn, ...)
  assert(not ok, "expected a card error")
  return err.kind, err
end

t.test("init, auto session, seed, derive and sign on every path through PC/SC", function()
  local s <close> = open()
  local info = s:select()
  t.eq(info.initialized, false)
  s:init { pin = PIN, puk = PUK, pairing_password = PASSWORD }
  t.eq(s:select().applet, applet)
  local session = s:auto { pin = PIN, pairing_password = PASSWORD }
  t.eq(session.secure_channel, applet == "3.2" and 1 or 2)
  s:load_seed(hd.mnemonic_to_seed(phrase))
  for _, path in ipairs { "m/44'/60'/0'/0/0", "m/84'/0'/0'/0/7", "m/0" } do
    local digest = hash.sha256(path)
    local sig = s:sign(digest, { path = path })
    local expected = master:derive(path):public_key()
    t.eq(sig.public_key, expected)
    t.ok(ec.verify(expected, digest, sig), "signature on " .. path .. " verifies")
    t.eq(ec.recover(digest, sig.rsv), expected)
  end
end)

t.test("exports equal local BIP32 derivation", function()
  local s <close> = open()
  s:auto { pin = PIN, pairing_password = PASSWORD }
  local account = s:export_key { path = "m/84'/0'/0'", kind = "extended", family = "zpub" }
  t.eq(account.xpub, master:derive("m/84'/0'/0'"):xpub("zpub"))
  local public = s:export_key { path = "m/44'/0'/0'/0/3", kind = "public" }
  t.eq(public.public_key, master:derive("m/44'/0'/0'/0/3"):public_key())
  local path = hd.eip1581 { key_type = "whisper", index = 0 }
  local private = s:export_key { path = path, kind = "private" }
  t.eq(private.private_key, master:derive(path):private_key())
  t.eq(kind_of(s.export_key, s, { path = "m/44'/60'/0'/0/0", kind = "private" }), "conditions_not_satisfied")
end)

t.test("data, counters and errors through PC/SC", function()
  local s <close> = open()
  s:auto { pin = PIN, pairing_password = PASSWORD }
  s:store_data("keyhost over pcsc", { type = "public" })
  t.eq(s:get_data { type = "public" }, "keyhost over pcsc")
  local kind, err = kind_of(s.verify_pin, s, "000000")
  t.eq(kind, "wrong_pin")
  t.eq(err.sw, 0x63C2)
  t.eq(err.retries_left, 2)
  s:verify_pin(PIN)
  t.eq(s:status().pin_retries, 3)
  local data, sw = s:transmit("\x00\xA4\x04\x00\x05\xA0\x00\x00\x00\x00")
  t.eq(sw, 0x6A82)
end)

t.test("a fresh session reuses the stored pairing, then unpairs and resets", function()
  local s <close> = open()
  local session = s:auto { pin = PIN, pairing_password = PASSWORD }
  if applet == "3.2" then t.eq(session.new_pairing, false) end -- 4.x cards have no pairing
  s:factory_reset()
  t.eq(s:select().initialized, false)
end)

t.run()
