-- Tests for keyhost.card through the virtual card (applets 3.2 and 4.0). Run: keyhost run Tests/lua/card_test.lua
-- Keys are checked against keyhost.hd derivation of the BIP39 test mnemonic, signatures with keyhost.ec.
local t = require "keyhost.test"
local card = require "keyhost.card"
local hd = require "keyhost.hd"
local ec = require "keyhost.ec"
local hash = require "keyhost.hash"
local hex = require "keyhost.hex"

local ABANDON = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"
local PIN, PUK, PASSWORD = "123456", "987654321098", "KeycardTest"  -- the PUK does not start with the PIN (3.2 alternate PIN)
local DIGEST = hash.sha256("keyhost card test")
local APPLETS = { "3.2", "4.0" }

local temp = {}
local function tmpdir()
  local path = os.tmpname()
  os.remove(path)
  temp[#temp + 1] = path
  return path
end

local function file_mode(path)
  local p = io.popen("stat -c %a '" .. path .. "'")
  local mode = p:read("l")
  p:close()
  return mode
end

local function read_file(path)
  local f = assert(io.open(path, "rb"))
  local text = f:read("a")
  f:close()
  return text
end

--- A fresh initialised virtual card with a ready session (paired, channel open, PIN verified).
local function ready(applet, extra)
  local opts = { reader = "virtual", applet = applet, seed = 7 }
  for k, v in pairs(extra or {}) do opts[k] = v end
  local s = card.open(opts)
  s:select()
  s:init { pin = PIN, puk = PUK, pairing_password = PASSWORD }
  s:auto { pin = PIN, pairing_password = PASSWORD }
  return s
end

local function card_error(fn)
  local ok, err = pcall(fn)
  t.ok(not ok, "expected a card error")
  t.eq(type(err), "table", "structured error: " .. tostring(err))
  return err
end

t.test("readers always include the virtual card", function()
  local readers = card.readers()
  t.eq(readers[#readers], "virtual")
  t.raises(function() card.open { reader = "no such reader" } end, 'no reader is called "no such reader"')
  t.raises(function() card.open { reader = "virtual", applet = "2.0" } end, 'emulates "3.2" and "4.0"')
  t.raises(function() card.open { reader = "virtual", apllet = "3.2" } end, "unknown option 'apllet'")
  -- Numbers count real readers from 0, as `keyhost card list` prints them; the virtual reader goes by name.
  t.raises(function() card.open { reader = #readers - 1 } end, "numbered from 0 as card%.list%(%) lists them")
  local s <close> = card.open { reader = "virtual" }
  t.eq(s:reader(), "virtual")
end)

-- GET STATUS as `keyhost card status --json` prints it: no key loaded, so no key UID and no path (P1 01 is not sent).
local function fresh_status(s, applet)
  local st = s:status()
  t.eq({ st.applet, st.pin_retries, st.puk_retries, st.has_master_key, st.path == nil, st.key_uid == nil },
       { applet, 3, 5, false, true, true })
  t.eq(st.instance_uid and #st.instance_uid, applet == "3.2" and 16 or nil)
end

for _, applet in ipairs(APPLETS) do
  local v1 = applet == "3.2"
  local function name(text) return "applet " .. applet .. ": " .. text end

  t.test(name("select, init, not initialised"), function()
    local s <close> = card.open { reader = "virtual", applet = applet, seed = 1 }
    local before = s:select()
    t.eq(before.initialized, false)
    local err = card_error(function() s:auto { pin = PIN, pairing_password = PASSWORD } end)
    t.eq(err.kind, "not_initialized")
    local made = s:init { pin = PIN, puk = PUK, pairing_password = PASSWORD }
    -- keyhost card init --json's record (s:init does not pair: no pairing_index)
    t.eq({ made.applet, made.secure_channel, made.pairing_index }, { applet, v1 and 1 or 2, nil })
    t.eq(#(made.instance_uid or made.identity_public_key), v1 and 16 or 33)
    local info = s:select()
    t.eq(info.initialized, true)
    t.eq(info.applet, applet)
    t.eq(info.secure_channel, v1 and 1 or 2)
    t.eq(info.has_master_key, false)
    if v1 then
      t.eq(info.free_pairing_slots, 10)
      t.eq(#info.instance_uid, 16)
      t.eq(#info.secure_channel_public_key, 65)
    else
      t.eq(info.pin_retries, 3)
      t.eq(#info.identity_public_key, 33)
    end
    err = card_error(function() s:init { pin = PIN, puk = PUK, pairing_password = PASSWORD } end)
    t.eq(err.kind, "already_initialized")
  end)

  t.test(name("keys, export and signatures match keyhost.hd"), function()
    local s <close> = ready(applet)
    local master <close> = hd.from_mnemonic(ABANDON)
    fresh_status(s, applet)
    local key_uid = s:load_seed(hd.mnemonic_to_seed(ABANDON))
    t.eq(key_uid, hash.sha256(master:public_key { compressed = false }))
    t.eq(s:status().has_master_key, true)

    -- EXPORT KEY: public, extended (with an xpub keyhost.hd reads), private on EIP-1581 only.
    local path = "m/44'/60'/0'/0/0"
    t.eq(s:export_key { path = path }, { public_key = master:derive(path):public_key(), path = path })
    local account = s:export_key { path = "m/84'/0'/0'", kind = "extended", family = "zpub" }
    local node = master:derive "m/84'/0'/0'"
    t.eq(account.public_key, node:public_key())
    t.eq(account.chain_code, node:chain_code())
    t.eq(account.xpub, node:xpub "zpub")
    t.eq(hd.from_extended(account.xpub):addresses(0, 0, 2), node:addresses(0, 0, 2))
    t.eq(s:export_key { path = "m/44'/60'/0'/0", kind = "extended" }.xpub, master:derive("m/44'/60'/0'/0"):xpub())
    -- xpub = false: the key and chain code without the xpub (and without the parent's EXPORT KEY)
    t.eq(s:export_key { path = "m/84'/0'/0'", kind = "extended", xpub = false },
      { public_key = node:public_key(), chain_code = node:chain_code(), path = "m/84'/0'/0'" })
    t.raises(function() s:export_key { path = "m/84'/0'/0'", kind = "extended", xpub = false, family = "zpub" } end,
      "option 'family' is the xpub's")
    local eip = hd.eip1581 { key_type = 0, index = 0 }
    t.eq(s:export_key { path = eip, kind = "private" }.private_key, master:derive(eip):private_key())
    local err = card_error(function() s:export_key { path = path, kind = "private" } end)
    t.eq(err.kind, "conditions_not_satisfied")
    t.eq(err.sw, 0x6985)
    t.eq(err.command, "EXPORT KEY")

    -- SIGN with a path and with the current key; verify with keyhost.ec.
    local sig = s:sign(DIGEST, { path = "m/44'/60'/0'/0/1" })
    local expected = master:derive("m/44'/60'/0'/0/1"):public_key()
    t.eq(sig.public_key, expected)
    t.ok(ec.verify(expected, DIGEST, sig))
    t.ok(ec.verify(expected, DIGEST, sig.der))
    t.eq(ec.recover(DIGEST, sig), expected)
    t.eq(sig.rsv, sig.r .. sig.s .. string.char(sig.v))
    t.eq(sig.compact, sig.r .. sig.s)
    t.eq(sig.v, 27 + sig.recovery_id)
    -- the card's ECDSA is RFC 6979 on the virtual card: the same as keyhost.ec
    t.eq(sig.der, ec.sign(master:derive("m/44'/60'/0'/0/1"), DIGEST).der)
    t.ok(ec.verify(master:public_key(), DIGEST, s:sign(DIGEST)))
    t.raises(function() s:sign("short") end, "32%-byte hash")

    if v1 then
      s:derive "m/44'/60'/0'/0"
      t.eq(s:status().path, "m/44'/60'/0'/0")
      t.eq(s:export_key {}.public_key, master:derive("m/44'/60'/0'/0"):public_key())
      sig = s:sign(DIGEST, { path = "./3", make_current = true })
      t.eq(sig.public_key, master:derive("m/44'/60'/0'/0/3"):public_key())
      t.eq(s:status().path, "m/44'/60'/0'/0/3")
      t.eq(s:sign(DIGEST, { path = "../4" }).public_key, master:derive("m/44'/60'/0'/0/4"):public_key())
      -- PIN-less signing: unset → not_found; set → works without the PIN
      err = card_error(function() s:sign(DIGEST, { pinless = true }) end)
      t.eq(err.kind, "not_found")
      t.eq(err.sw, 0x6A88)
      s:set_pinless_path "m/44'/60'/0'/0/7"
      s:select()
      sig = s:sign(DIGEST, { pinless = true })
      t.ok(ec.verify(master:derive("m/44'/60'/0'/0/7"):public_key(), DIGEST, sig))
      s:auto { pin = PIN }
    else
      local schnorr = s:sign_schnorr(DIGEST, { path = "m/86'/0'/0'/0/0" })
      t.eq(schnorr.public_key, master:derive("m/86'/0'/0'/0/0"):public_key())
      t.ok(ec.schnorr_verify(schnorr.x_only, DIGEST, schnorr.signature))
      t.eq(#s:get_challenge(16), 16)
      err = card_error(function() s:derive "m/44'/60'/0'" end)
      t.eq(err.kind, "unsupported")
      err = card_error(function() s:sign(DIGEST, { pinless = true }) end)
      t.eq(err.kind, "unsupported")
    end

    -- GENERATE MNEMONIC, GENERATE KEY, REMOVE KEY
    local phrase, indexes = s:generate_mnemonic(12)
    t.ok(hd.validate_mnemonic(phrase))
    t.eq(#indexes, 12)
    t.eq(#s:generate_mnemonic(24):gsub("%S+", "x"):gsub(" ", ""), 24)
    local generated = s:generate_key()
    t.eq(#generated, 32)
    t.ok(generated ~= key_uid)
    s:remove_key()
    t.eq(s:status().has_master_key, false)
    err = card_error(function() s:sign(DIGEST) end)
    t.eq(err.kind, "conditions_not_satisfied")

    -- LOAD KEY from an hd node (extended key pair) and from raw bytes
    local child <close> = master:derive "m/44'/60'/0'"
    s:load_key(child)
    t.eq(s:export_key { path = "m/0/0" }.public_key, child:derive("0/0"):public_key())
    local plain = ec.private_key(hash.sha256("plain key"))
    s:load_key { private_key = plain:bytes() }
    t.ok(ec.verify(plain, DIGEST, s:sign(DIGEST)))
  end)

  t.test(name("data, credentials, PIN blocked and PUK unblock"), function()
    local s <close> = ready(applet)
    s:store_data("hello card")
    t.eq(s:get_data(), "hello card")
    -- A fresh NDEF file is zeros: the applet answers its 2-byte length, 0; cash data is empty until stored.
    t.eq(s:get_data { type = "ndef" }, "\0\0")
    t.eq(s:get_data { type = "cash" }, "")
    s:store_data("cash", { type = "cash" })
    t.eq(s:get_data { type = "cash" }, "cash")
    t.eq(s:get_data(), "hello card")
    local err = card_error(function() s:store_data(string.rep("x", 128)) end)
    t.eq(err.kind, "wrong_data")
    t.eq(err.sw, 0x6A80)

    -- wrong PIN twice, then right
    err = card_error(function() s:verify_pin "000000" end)
    t.eq(err.kind, "wrong_pin")
    t.eq(err.sw, 0x63C2)
    t.eq(err.retries_left, 2)
    t.eq(err.command, "VERIFY PIN")
    t.eq(err.sw_name, "verification failed, 2 tries left")
    t.ok(tostring(err):find("wrong PIN: 2 tries left (SW 63C2 from VERIFY PIN)", 1, true), tostring(err))
    t.ok(not tostring(err):find("000000", 1, true), "the PIN is not in the message")
    err = card_error(function() s:verify_pin "000001" end)
    t.eq(err.retries_left, 1)
    t.ok(tostring(err):find("1 try left", 1, true))
    s:verify_pin(PIN)
    t.eq(s:status().pin_retries, 3)

    -- blocked: three wrong, then even the right PIN is refused
    for i = 2, 0, -1 do
      err = card_error(function() s:verify_pin "000000" end)
      t.eq(err.retries_left, i)
    end
    t.eq(err.kind, "pin_blocked")
    t.eq(err.sw, 0x63C0)
    err = card_error(function() s:verify_pin(PIN) end)
    t.eq(err.kind, "pin_blocked")
    -- wrong PUK, then the PUK unblocks with a new PIN
    err = card_error(function() s:unblock_pin("111111111111", "654321") end)
    t.eq(err.kind, "wrong_puk")
    t.eq(err.retries_left, 4)
    t.eq(err.command, "UNBLOCK PIN")
    t.ok(not tostring(err):find("111111111111", 1, true))
    s:unblock_pin(PUK, "654321")
    fresh_status(s, applet)
    err = card_error(function() s:unblock_pin(PUK, "654321") end)
    t.eq(err.kind, "conditions_not_satisfied")

    -- change PIN and PUK (and the pairing password on 3.x), then use them
    s:change_pin "222222"
    s:change_puk "333333333333"
    if v1 then s:change_pairing_password "new password" end
    s:select()
    s:open_secure_channel()
    err = card_error(function() s:sign(DIGEST) end)
    t.eq(err.kind, "conditions_not_satisfied", "SIGN without the PIN")
    t.eq(err.sw, 0x6985)
    t.eq(err.command, "SIGN")
    s:verify_pin "222222"
    if v1 then
      local other <close> = card.open { reader = "virtual", applet = applet }
      -- another card: pairing with the wrong password
      other:select()
      other:init { pin = PIN, puk = PUK, pairing_password = PASSWORD }
      err = card_error(function() other:pair { pairing_password = "wrong", store = false } end)
      t.eq(err.kind, "wrong_pairing_password")
    end
  end)

  t.test(name("channel reset by the card, then reopened"), function()
    local s <close> = ready(applet)
    s:inject_fault { sw = 0x6982 }
    local err = card_error(function() s:status() end)
    t.eq(err.kind, "channel_reset")
    t.eq(err.sw, 0x6982)
    t.eq(err.command, "GET STATUS")
    err = card_error(function() s:status() end)
    t.eq(err.kind, "channel_not_open")
    s:open_secure_channel()
    s:verify_pin(PIN)
    t.eq(s:status().pin_retries, 3)
    -- a dropped connection is typed too; the card answers again afterwards
    s:inject_fault { drop = true }
    err = card_error(function() s:status() end)
    t.eq(err.kind, "connection_lost")
    s:auto { pin = PIN }
    t.eq(s:status().pin_retries, 3)
  end)

  t.test(name("raw transmit"), function()
    local s <close> = ready(applet)
    local data, sw = s:transmit(hex.decode "00a4040009a0000008040001010100")
    t.eq(sw, 0x9000)
    t.eq(data:byte(1), 0xA4)
    local _, sw2 = s:transmit(hex.decode "00a4040003010203", {})
    t.eq(sw2, 0x6A82)
    local err = card_error(function() s:transmit(hex.decode "00a4040003010203", { expect = 0x9000 }) end)
    t.eq(err.sw, 0x6A82)
    t.eq(err.sw_name, "file or application not found")
    t.ok(tostring(err):find("file or application not found", 1, true))
    s:auto { pin = PIN }
    local status, sw3 = s:transmit(hex.decode "80f20000", { secure = true, expect = { 0x9000 } })
    t.eq(sw3, 0x9000)
    t.eq(status:byte(1), 0xA3)
    t.raises(function() s:transmit("\1") end, "truncated")
  end)
end

t.test("applet 4.0 does not pair, and refusing keeps the open secure channel and verified PIN", function()
  local s <close> = ready("4.0")
  local err = card_error(function() s:pair { pairing_password = PASSWORD } end)
  t.eq(err.kind, "unsupported")
  t.ok(tostring(s):find("PIN verified", 1, true), "the session is still open: " .. tostring(s))
  t.eq(s:status().pin_retries, 3, "still usable without a new secure channel")
  t.eq(s:get_challenge(8):len(), 8)
  t.raises(function() s:pair { password = PASSWORD } end, "option 'password' is now 'pairing_password'")
end)

for _, applet in ipairs(APPLETS) do
  t.test("applet " .. applet .. ": init + load_seed give the mnemonic's keys; a duress PIN gives the decoy's", function()
    local master = hd.from_mnemonic(ABANDON)
    local want = master:derive("m/44'/60'/0'/0/0"):public_key()
    local s <close> = card.open { reader = "virtual", applet = applet, seed = 11 }
    s:init { pin = PIN, puk = PUK, pairing_password = PASSWORD, duress_pin = "246810" }
    s:auto { pin = PIN, pairing_password = PASSWORD }
    s:load_seed(hd.mnemonic_to_seed(ABANDON))
    t.eq(hex.encode(s:export_key { path = "m/44'/60'/0'/0/0" }.public_key), hex.encode(want))
    t.eq(s:export_key { path = "m/44'/60'/0'/0", kind = "extended" }.xpub, master:derive("m/44'/60'/0'/0"):xpub())
    local sig = s:sign(DIGEST, { path = "m/44'/60'/0'/0/0" })
    t.ok(ec.verify(want, DIGEST, sig), "the card signs with the mnemonic's key")
    s:auto { pin = "246810", pairing_password = PASSWORD }
    t.ok(hex.encode(s:export_key { path = "m/44'/60'/0'/0/0" }.public_key) ~= hex.encode(want), "the duress PIN opens the decoy")
  end)

  t.test("applet " .. applet .. ": init refuses a duress PIN equal to the PIN and a PUK starting with the PIN", function()
    local s <close> = card.open { reader = "virtual", applet = applet }
    t.raises(function() s:init { pin = PIN, puk = PUK, pairing_password = PASSWORD, duress_pin = PIN } end,
      "option 'duress_pin' equals 'pin'")
    t.raises(function() s:init { pin = PIN, puk = PIN .. "000000", pairing_password = PASSWORD } end,
      "option 'puk' starts with the PIN")
  end)
end

t.test("paths need m/, ./ or ../; 4.0 export needs a path", function()
  local s <close> = ready("4.0")
  t.raises(function() s:export_key { path = "44'/60'/0'/0/0" } end, "a key path starts with m/")
  t.raises(function() s:export_key {} end, "option 'path' is required on applet 4.x cards")
  t.raises(function() s:export_key { path = "./0" } end, "does not take a relative path")
  t.raises(function() s:sign(DIGEST, { path = "../1" }) end, "does not take a relative path")
  local v1 <close> = ready("3.2")
  t.raises(function() v1:sign_schnorr(DIGEST) end, "does not take Schnorr")
end)

t.test("pairing slots exhausted, unpair_others frees them", function()
  local s <close> = card.open { reader = "virtual", applet = "3.2", pairing_slots = 3 }
  s:select()
  s:init { pin = PIN, puk = PUK, pairing_password = PASSWORD }
  local p1 = s:pair { pairing_password = PASSWORD, store = false }
  local p2 = s:pair { pairing_password = PASSWORD, store = false }
  t.eq({ p1.index, p2.index }, { 0, 1 })
  t.eq(#p1.key, 32)
  -- keyhost card pair --json's fields besides the pairing itself
  t.eq({ p2.pairing_index, p2.new_pairing, #p2.instance_uid }, { 1, true, 16 })
  local r = s:auto { pin = PIN, pairing_password = PASSWORD }
  t.eq(r.pairing_index, 2)
  t.eq(r.new_pairing, true)
  s:select()
  t.eq(s:select().free_pairing_slots, 0)
  local err = card_error(function() s:pair { pairing_password = PASSWORD } end)
  t.eq(err.kind, "no_free_slot")
  t.eq(err.sw, 0x6A84)
  t.eq(err.command, "PAIR")
  -- the same session reuses its stored pairing, then frees the others
  r = s:auto { pin = PIN }
  t.eq(r.new_pairing, false)
  t.eq(s:unpair_others { pin = PIN }, { 0, 1 })
  t.eq(s:select().free_pairing_slots, 2)
  -- a client without a stored pairing on a full card gets an ephemeral one, enough to free slots
  s:pair { pairing_password = PASSWORD, store = false }
  s:pair { pairing_password = PASSWORD, store = false }
  local other <close> = card.open { reader = "virtual", pairing_store = false }
  t.eq(s:select().free_pairing_slots, 0)
  local ep = s:pair { pairing_password = PASSWORD, ephemeral = true, store = false }
  t.eq(ep.index, 255)
  s:open_secure_channel { index = ep.index, key = ep.key }
  s:verify_pin(PIN)
  t.eq(#s:unpair_others { pin = PIN }, 3)
  t.eq(s:select().free_pairing_slots, 3)
  -- a pairing given explicitly opens the channel
  local p = s:pair { pairing_password = PASSWORD, store = false }
  s:select()
  s:open_secure_channel { index = p.index, key = p.key }
  s:verify_pin(PIN)
  t.eq(s:select().free_pairing_slots, 2)
  s:open_secure_channel()
  s:verify_pin(PIN)
  s:unpair(p.index)
  t.eq(s:select().free_pairing_slots, 3)
end)

t.test("on a full 3.2 card, auto's temporary slot frees the others (its pairing does not survive SELECT, as on the applet)", function()
  local s <close> = card.open { reader = "virtual", applet = "3.2", pairing_slots = 2 }
  s:select()
  s:init { pin = PIN, puk = PUK, pairing_password = PASSWORD }
  s:pair { pairing_password = PASSWORD, store = false }
  s:pair { pairing_password = PASSWORD, store = false }
  local r = s:auto { pin = PIN, pairing_password = PASSWORD }
  t.eq({ r.ephemeral, r.pairing_index }, { true, 255 })
  t.eq(s:unpair_others { pin = PIN }, { 0, 1 })
  t.eq(s:status().pin_retries, 3)
  t.eq(s:select().free_pairing_slots, 2)
  -- SELECT erased the temporary pairing: the card no longer knows slot 255
  local err = card_error(function() s:open_secure_channel() end)
  t.eq(err.kind, "pairing_rejected")
end)

t.test("unpair_others frees and reports only the slots in use, as keyhost card unpair --others", function()
  local s <close> = card.open { reader = "virtual", applet = "3.2", pairing_slots = 6 }
  s:select()
  s:init { pin = PIN, puk = PUK, pairing_password = PASSWORD }
  local p0 = s:pair { pairing_password = PASSWORD, store = false }
  local p1 = s:pair { pairing_password = PASSWORD, store = false }
  local p2 = s:pair { pairing_password = PASSWORD, store = false }
  local own = s:auto { pin = PIN, pairing_password = PASSWORD }
  t.eq({ p0.index, p1.index, p2.index, own.pairing_index }, { 0, 1, 2, 3 })
  -- slot 1 freed: slots 1, 4 and 5 are free, and UNPAIR of a free slot succeeds too; none of them is reported
  s:unpair(p1.index)
  t.eq(s:unpair_others { pin = PIN }, { 0, 2 })
  t.eq(s:select().free_pairing_slots, 5)
  -- finding the slots reset the channel: it was opened again with this session's pairing and the PIN verified again
  s:auto { pin = PIN }
  t.eq(s:unpair_others { pin = PIN }, {})
  -- the PIN must have been verified in this session first, and a wrong PIN given again is the card's wrong_pin
  s:select()
  s:open_secure_channel()
  local err = card_error(function() s:unpair_others { pin = PIN } end)
  t.eq(err.kind, "conditions_not_satisfied")
  s:verify_pin(PIN)
  err = card_error(function() s:unpair_others { pin = "000000" } end)
  t.eq(err.kind, "wrong_pin")
  s:auto { pin = PIN }
  t.raises(function() s:unpair_others { pine = PIN } end, "unknown option 'pine'")
end)

t.test("auto with a pairing store file: 0600, no PIN, reused, re-paired once when rejected", function()
  local dir = tmpdir()
  local store = dir .. "/state/keyhost/pairings.json"
  local state = dir .. "-card.json"
  temp[#temp + 1] = state
  do
    local s <close> = card.open { reader = "virtual", state = state, applet = "3.2", pairing_store = store }
    s:select()
    s:init { pin = PIN, puk = PUK, pairing_password = PASSWORD }
    local r = s:auto { pin = PIN, pairing_password = PASSWORD }
    t.eq(r.new_pairing, true)
    t.eq(r.pairing_index, 0)
  end
  t.eq(file_mode(store), "600")
  t.eq(file_mode(dir .. "/state/keyhost"), "700")
  local text = read_file(store)
  t.ok(not text:find(PIN, 1, true), "no PIN in the store")
  t.ok(not text:find(PASSWORD, 1, true), "no pairing password in the store")
  t.ok(text:find('"index" : 0', 1, true) or text:find('"index": 0', 1, true), text)

  -- a new session on the same card reuses the stored pairing (no password needed)
  local s <close> = card.open { reader = "virtual", state = state, pairing_store = store }
  local r = s:auto { pin = PIN }
  t.eq(r.new_pairing, false)
  t.eq(s:select().free_pairing_slots, 9)
  -- someone unpairs us: the stored pairing is dropped and the card paired again, once
  s:auto { pin = PIN }
  s:unpair(0)
  local again <close> = card.open { reader = "virtual", state = state, pairing_store = store }
  r = again:auto { pin = PIN, pairing_password = PASSWORD }
  t.eq(r.new_pairing, true)
  t.eq(again:status().pin_retries, 3)
  -- a session with the store off does not see it
  local off <close> = card.open { reader = "virtual", state = state, pairing_store = false }
  local err = card_error(function() off:open_secure_channel() end)
  t.eq(err.kind, "not_paired")
  t.raises(function() card.open { reader = "virtual", state = state, applet = "4.0" } end, "holds applet 3.2")
end)

t.test("<close> closes the session; tostring never shows secrets", function()
  local saved
  do
    local s <close> = ready("3.2")
    saved = s
    local text = tostring(s)
    t.ok(text:find("keyhost.card.session(reader virtual, applet 3.2", 1, true), text)
    t.ok(text:find("PIN verified", 1, true), text)
    for _, secret in ipairs { PIN, PUK, PASSWORD } do t.ok(not text:find(secret, 1, true), text) end
  end
  t.eq(tostring(saved), "keyhost.card.session (closed)")
  t.raises(function() saved:select() end, "keyhost.card.session is closed")
  local s = ready("4.0")
  s:close()
  t.raises(function() s:status() end, "is closed")
end)

t.test("record a session and replay it", function()
  local file = os.tmpname()
  temp[#temp + 1] = file
  local sig1
  do
    local s <close> = card.open { reader = "virtual", applet = "3.2", seed = 42, record = file }
    s:select()
    s:init { pin = PIN, puk = PUK, pairing_password = PASSWORD }
    s:auto { pin = PIN, pairing_password = PASSWORD }
    s:load_seed(hd.mnemonic_to_seed(ABANDON))
    sig1 = s:sign(DIGEST, { path = "m/44'/60'/0'/0/0" })
  end
  t.eq(file_mode(file), "600")
  t.ok(read_file(file):find("# keyhost card transcript 1", 1, true))
  local r <close> = card.open { replay = file, seed = 42 }
  r:select()
  r:init { pin = PIN, puk = PUK, pairing_password = PASSWORD }
  r:auto { pin = PIN, pairing_password = PASSWORD }
  r:load_seed(hd.mnemonic_to_seed(ABANDON))
  t.eq(r:sign(DIGEST, { path = "m/44'/60'/0'/0/0" }), sig1)
  local err = card_error(function() r:status() end)
  t.eq(err.kind, "replay_mismatch")
end)

t.test("an account xpub costs two EXPORT KEY commands, xpub = false one", function()
  local function exports(opts)
    local dir = tmpdir()
    os.execute("mkdir -p '" .. dir .. "'")
    local record = dir .. "/t.txt"
    do
      local s <close> = ready("3.2", { record = record })
      s:load_seed(hd.mnemonic_to_seed(ABANDON))
      s:export_key(opts)
    end
    local n = 0
    for line in io.lines(record) do
      if line:match("^> 80c2") then n = n + 1 end  -- 3.x wraps the data only: CLA INS stay visible
    end
    return n
  end
  t.eq(exports { path = "m/84'/0'/0'", kind = "extended", family = "zpub" }, 2)
  t.eq(exports { path = "m/84'/0'/0'", kind = "extended", xpub = false }, 1)
  -- No Keycard gives the master's chain code right (3.2 answers the last derivation's): refused, not wrong.
  t.raises(function() exports { path = "m", kind = "extended" } end, "master key's extended public key")
  t.eq(exports { path = "m", kind = "public" }, 1, "the master has no parent")
end)

t.test("options and arguments are checked", function()
  t.raises(function() card.open { reader = "virtual", seed = "x" } end, "option 'seed' must be an integer")
  t.raises(function() card.open { reader = "virtual", trace = "loud" } end, "option 'trace'")
  t.raises(function() card.open { replay = "/nonexistent/transcript.txt" } end, "cannot read transcript")
  local s <close> = ready("3.2")
  t.raises(function() s:sign(DIGEST, { path = "m/x" }) end, "option 'path'")
  t.raises(function() s:export_key { kind = "secret" } end, 'use "public", "extended" or "private"')
  t.raises(function() s:init { pin = PIN } end, "option 'puk' is required")
  t.raises(function() s:get_data { type = "cash!" } end, "option 'type'")
end)

t.test("temporary files are removed", function()
  for _, path in ipairs(temp) do t.ok(os.execute("rm -rf '" .. path .. "'")) end
end)

t.test("signed messages with a card: byte for byte the software signature at the same path", function()
  for _, applet in ipairs(APPLETS) do
    local s <close> = card.open { reader = "virtual", applet = applet }
    s:init { pin = PIN, puk = PUK, pairing_password = PASSWORD }
    s:auto { pin = PIN, pairing_password = PASSWORD }
    s:load_seed(hd.mnemonic_to_seed(ABANDON))
    for _, case in ipairs { { "m/84'/0'/0'/0/3", "p2wpkh" }, { "m/49'/0'/0'/0/0", "p2sh-p2wpkh" }, { "m/44'/0'/0'/1/2", "p2pkh" } } do
      local path, kind = case[1], case[2]
      local node = hd.from_mnemonic(ABANDON):derive(path)
      local signed = ec.btc_sign_message(s, "keyhost message", { path = path, kind = kind })
      t.eq(signed, ec.btc_sign_message(node, "keyhost message", { kind = kind }))
      t.ok(ec.btc_verify_message(node:address { kind = kind }, "keyhost message", signed))
    end
    local eth = hd.from_mnemonic(ABANDON):derive("m/44'/60'/0'/0/0")
    local rsv = ec.eth_sign_message(s, "hello", { path = "m/44'/60'/0'/0/0" })
    t.eq(rsv, ec.eth_sign_message(eth, "hello"))
    t.eq(ec.eth_recover_message("hello", rsv), eth:address { coin = "eth" })
  end
  t.raises(function() ec.btc_sign_message(hd.from_mnemonic(ABANDON), "x", { path = "m/0" }) end, "option 'path' goes with a card session")
end)

t.run()
