-- Tests for keyhost.discovery. Run: keyhost run Tests/lua/discovery_test.lua
-- Addresses come from keyhost.hd (private derivation from the master), independently of the scan's public derivation.
local t = require "keyhost.test"
local discovery = require "keyhost.discovery"
local card = require "keyhost.card"
local hd = require "keyhost.hd"

local WORDS = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"
local master = hd.from_mnemonic(WORDS)
local function addr(path, kind) return master:derive(path):address { kind = kind or "p2wpkh" } end
local function bip84(account, chain, index) return addr(string.format("m/84'/0'/%d'/%d/%d", account, chain, index)) end
local ZPUB0 = master:derive("m/84'/0'/0'"):xpub "zpub"

local function set(list) local s = {} for _, a in ipairs(list) do s[a] = true end return s end
local function indexes(account, chain)
  local out = {}
  for _, u in ipairs(account.used) do if u.chain == chain then out[#out + 1] = u.index end end
  return out
end

t.test("gap semantics: found at gap - 1 unused addresses, not at gap", function()
  -- gap 5: receive 0/0 used, then 4 unused (1..4), 0/5 used: found; then 5 unused (6..10), 0/11 used: not found.
  local used = set { bip84(0, 0, 0), bip84(0, 0, 5), bip84(0, 0, 11) }
  local r = discovery.scan { xpub = ZPUB0, gap_limit = 5, source = used }
  local a = r.accounts[1]
  t.eq(indexes(a, "receive"), { 0, 5 })
  t.eq(a.last_used, { receive = 5 })
  t.eq(a.receive_checked, 11)          -- 0..10: the gap closed after 6..10
  t.eq(a.change_checked, 5)
  t.eq(a.xpub, ZPUB0)
  t.eq(a.used[2].path, "m/84'/0'/0'/0/5")
  t.eq(a.used[2].address, bip84(0, 0, 5))
  t.eq(r.totals.used_addresses, 2)
  t.eq(r.scheme, "bip84")
  -- the same with gap 6 finds 0/11
  local r6 = discovery.scan { xpub = ZPUB0, gap_limit = 6, source = used }
  t.eq(indexes(r6.accounts[1], "receive"), { 0, 5, 11 })
end)

t.test("change_gap_limit applies to the change chain only", function()
  local used = set { bip84(0, 1, 3) }
  local r = discovery.scan { xpub = ZPUB0, gap_limit = 5, change_gap_limit = 3, source = used }
  t.eq(indexes(r.accounts[1], "change"), {})      -- 0..2 unused closes a gap of 3
  r = discovery.scan { xpub = ZPUB0, gap_limit = 2, change_gap_limit = 4, source = used }
  t.eq(indexes(r.accounts[1], "change"), { 3 })
  t.eq(r.accounts[1].receive_checked, 2)
end)

t.test("account gap 2 crosses an empty account; account gap 1 stops there", function()
  local used = set { bip84(0, 0, 0), bip84(2, 0, 1) }
  local r1 = discovery.scan { mnemonic = WORDS, gap_limit = 3, account_gap = 1, source = used }
  t.eq(#r1.accounts, 2)
  t.eq(r1.accounts[2].is_used, false)
  local r2 = discovery.scan { mnemonic = WORDS, gap_limit = 3, account_gap = 2, source = used }
  t.eq(#r2.accounts, 5)                      -- 0 used, 1 empty, 2 used, 3 and 4 empty
  t.eq(r2.accounts[3].account, 2)
  t.eq(indexes(r2.accounts[3], "receive"), { 1 })
  t.eq(r2.totals.accounts_used, 2)
  t.eq(r2.totals.accounts_scanned, 5)
end)

t.test("an account used only on its change chain counts as used", function()
  local used = set { bip84(0, 1, 0), bip84(1, 1, 2) }
  local r = discovery.scan { mnemonic = WORDS, gap_limit = 3, source = used }
  t.eq(#r.accounts, 3)
  t.eq(r.accounts[2].is_used, true)
  t.eq(r.accounts[2].last_used, { change = 2 })
  t.eq(indexes(r.accounts[2], "receive"), {})
end)

t.test("a Lua function source: list of booleans or a set, asked once per address", function()
  local used = set { bip84(0, 0, 1) }
  local asked = 0
  local r = discovery.scan { mnemonic = WORDS, gap_limit = 4, source = function(list)
    local out = {}
    for i, a in ipairs(list) do out[i] = used[a] == true end
    asked = asked + #list
    return out
  end }
  t.eq(indexes(r.accounts[1], "receive"), { 1 })
  t.eq(asked, r.totals.addresses_checked)
  local r2 = discovery.scan { mnemonic = WORDS, gap_limit = 4, source = function(list)
    local out = {}
    for _, a in ipairs(list) do if used[a] then out[a] = true end end
    return out
  end }
  t.eq(r2.accounts, r.accounts)
end)

t.test("a source function's answer is checked: one boolean per address, or a set of booleans", function()
  local function scan(answer) return discovery.scan { xpub = ZPUB0, gap_limit = 3, source = answer } end
  t.raises(function() scan(function(list) local o = {} for i = 1, #list do o[i] = "used" end return o end) end,
    "usage function: answer #1 is a string, expected a boolean")
  t.raises(function() scan(function(list) return { true, false } end) end, "usage function: returned 2 answers for 3 addresses")
  t.raises(function() scan(function(list) return { [list[1]] = "yes" } end) end, "usage function: set entry %[.*%] is a string, expected true or false")
  t.raises(function() scan(function(list) return 1 end) end, "usage function: returned a number")
  -- {} is the empty set, as documented: nothing used.
  t.eq(scan(function() return {} end).totals.used_addresses, 0)
end)

t.test("max_addresses caps a scan whose source calls everything used", function()
  local asked = 0
  local function all(list) local o = {} for i = 1, #list do o[i] = true end asked = asked + #list return o end
  t.raises(function() discovery.scan { xpub = ZPUB0, source = all, max_addresses = 120 } end,
    "stopped after checking 120 addresses.*max_addresses = N")
  t.eq(asked, 120)
  t.raises(function() discovery.scan { xpub = ZPUB0, source = all, max_addresses = 0 } end, "option 'max_addresses' is 0")
end)

t.test("index file source and on_progress", function()
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write("# comment\n", bip84(0, 0, 2), "\n", bip84(0, 1, 0), "\n")
  f:close()
  local calls, last = 0, nil
  local r = discovery.scan { mnemonic = WORDS, purpose = 84, gap_limit = 5, source = "index:" .. path,
    on_progress = function(p) calls = calls + 1; last = p end }
  os.remove(path)
  t.eq(indexes(r.accounts[1], "receive"), { 2 })
  t.eq(indexes(r.accounts[1], "change"), { 0 })
  t.ok(calls > 0, "progress reported")
  t.eq(last.addresses_checked, r.totals.addresses_checked)
end)

t.test("ethereum schemes", function()
  local eth = addr("m/44'/60'/0'/0/1", "ethereum")
  local r = discovery.scan { mnemonic = WORDS, scheme = "ethereum", gap_limit = 3, source = { eth } }
  t.eq(r.scheme, "ethereum")
  t.eq(r.accounts[1].used[1].address, eth)
  t.eq(r.accounts[1].change_checked, 0)
  local ledger = addr("m/44'/60'/2'/0/0", "ethereum")
  local l = discovery.scan { mnemonic = WORDS, scheme = "ethereum_per_index", gap_limit = 3, source = { ledger } }
  t.eq(l.accounts[1].used[1].index, 2)
  local tpl = discovery.scan { mnemonic = WORDS, template = "m/44'/60'/{account}'/0/{index}", kind = "ethereum", gap_limit = 3, source = { eth } }
  t.eq(tpl.accounts[1].used, r.accounts[1].used)
end)

t.test("errors are raised and name the option", function()
  t.raises(function() discovery.scan { mnemonic = WORDS, gap_limit = 0, source = {} } end, "option 'gap_limit' is 0.*at least 1")
  t.raises(function() discovery.scan { mnemonic = WORDS, change_gap_limit = 0, source = {} } end, "option 'change_gap_limit' is 0")
  t.raises(function() discovery.scan { mnemonic = WORDS, account_gap = 0, source = {} } end, "option 'account_gap' is 0")
  t.raises(function() discovery.scan { mnemonic = WORDS, source = "foo:bar" } end, 'unknown usage source "foo:bar"')
  t.raises(function() discovery.scan { mnemonic = WORDS, source = "http://x" } end, "esplora:http://x")
  t.raises(function() discovery.scan { mnemonic = WORDS, source = "index:" } end, "needs a file")
  t.raises(function() discovery.scan { mnemonic = WORDS, source = "index:/nonexistent/used.txt" } end, "index file /nonexistent/used.txt")
  t.raises(function() discovery.scan { mnemonic = WORDS } end, "option 'source' is missing")
  t.raises(function() discovery.scan { source = {} } end, "no key source")
  t.raises(function() discovery.scan { mnemonic = WORDS, xpub = ZPUB0, source = {} } end, "exclude each other")
  t.raises(function() discovery.scan { mnemonic = WORDS, source = {}, gap_limt = 3 } end, "unknown option 'gap_limt'")
  t.raises(function() discovery.scan { mnemonic = WORDS, source = {}, purpose = 84, template = "m/{index}" } end, "exclude each other")
  t.raises(function() discovery.scan { mnemonic = WORDS, source = {}, purpose = 84, kind = "p2tr" } end, "purpose 84 derives p2wpkh")
  t.raises(function() discovery.scan { xpub = ZPUB0, purpose = 86, source = {} } end, "zpub is for p2wpkh")
  t.raises(function() discovery.scan { mnemonic = WORDS, source = {}, accounts = { 3, 1 } } end, "from must not be above to")
  t.raises(function() discovery.scan { mnemonic = "abandon abandon", source = {} } end, "option 'mnemonic'")
end)

t.test("a source function that raises stops the scan with that error", function()
  t.raises(function() discovery.scan { mnemonic = WORDS, source = function() error("indexer down") end } end, "indexer down")
  local err = { code = 42 }
  local ok, got = pcall(discovery.scan, { mnemonic = WORDS, source = function() error(err) end })
  t.eq(ok, false)
  t.ok(rawequal(got, err), "the very error object comes back")
  t.raises(function() discovery.scan { mnemonic = WORDS, source = function() return { true } end } end, "returned 1 answers for 20 addresses")
  t.raises(function() discovery.scan { mnemonic = WORDS, source = function() return 7 end } end, "returned a number, expected a list of booleans")
  t.raises(function() discovery.scan { mnemonic = WORDS, source = {}, on_progress = function() error("stop here") end } end, "stop here")
end)

t.test("checkpoint: a second run takes the used addresses from a finished scan's file and asks about the rest", function()
  local path = os.tmpname()
  os.remove(path)
  local used = set { bip84(0, 0, 3) }
  local r1 = discovery.scan { mnemonic = WORDS, gap_limit = 4, source = used, checkpoint = path }
  local r2 = discovery.scan { mnemonic = WORDS, gap_limit = 4, checkpoint = path, source = used }
  t.eq(r2.accounts, r1.accounts)
  t.eq(r2.totals.addresses_from_checkpoint, 1)
  t.eq(r2.totals.addresses_queried, r1.totals.addresses_checked - 1)
  t.raises(function() discovery.scan { mnemonic = WORDS, gap_limit = 5, source = used, checkpoint = path } end, "other parameters")
  os.remove(path)
end)

for _, applet in ipairs { "3.2", "4.0" } do
  t.test("card source (applet " .. applet .. "): one EXPORT KEY per account (+ the shared parent and the master), same result as the seed", function()
    local transcript = os.tmpname()
    local used = set { bip84(0, 0, 4), bip84(0, 1, 1), bip84(1, 0, 0) }
    local s2 = card.open { reader = "virtual", applet = applet, seed = 3, record = transcript }
    s2:init { pin = "123456", puk = "987654321098", pairing_password = "KeycardTest" }
    s2:auto { pin = "123456", pairing_password = "KeycardTest" }
    s2:load_seed(hd.mnemonic_to_seed(WORDS))
    local r = discovery.scan { card = s2, gap_limit = 5, account_gap = 2, source = used }
    s2:close()
    local exports = 0
    for line in io.lines(transcript) do if line:sub(1, 6) == "> 80c2" then exports = exports + 1 end end
    os.remove(transcript)
    t.eq(#r.accounts, 4)                                 -- 0, 1 used; 2, 3 empty
    -- one per account, one for m/84'/0' (the xpubs' parent fingerprint), one for m (the master fingerprint the
    -- descriptors' origins name). Secure channel v1 leaves CLA/INS in clear, so the transcript shows them; v2 wraps
    -- whole commands, so there the binding's count is checked.
    if applet == "3.2" then t.eq(exports, #r.accounts + 2) end
    t.eq(r.totals.key_exports, #r.accounts + 2)

    local x = discovery.scan { mnemonic = WORDS, gap_limit = 5, account_gap = 2, source = used }
    t.eq(r.accounts, x.accounts)
    -- and account 0 equals the zpub's scan
    local z = discovery.scan { xpub = ZPUB0, gap_limit = 5, source = used }
    -- except the descriptors' origin, which an account xpub cannot know
    t.ok(r.accounts[1].descriptors.receive:find("[73c5da0a/84h/0h/0h]", 1, true))
    t.ok(not z.accounts[1].descriptors.receive:find("[", 1, true))
    r.accounts[1].descriptors, z.accounts[1].descriptors = nil, nil
    t.eq(r.accounts[1], z.accounts[1])
  end)
end

t.test("card source needs a verified PIN", function()
  local s <close> = card.open { reader = "virtual" }
  t.raises(function() discovery.scan { card = s, source = {} } end, "no verified PIN")
  t.raises(function() discovery.scan { card = "virtual", source = {} } end, "option 'card' must be a keyhost.card.session")
end)

t.test("a bad mnemonic's error names the position, never the word", function()
  for _, bad in ipairs({ WORDS:gsub("about$", "abouts"), WORDS:gsub("about$", "ABOUTS"), (WORDS:gsub("about$", "ab")) }) do
    local ok, err = pcall(discovery.scan, { mnemonic = bad, source = {} })
    t.eq(ok, false)
    t.ok(tostring(err):find("word 12 is not in the BIP39 English wordlist", 1, true), tostring(err))
    for _, piece in ipairs({ "abo", "bou", "uts", "ab\"", "about" }) do
      t.ok(not tostring(err):lower():find(piece, 1, true), "error shows " .. piece .. ": " .. tostring(err))
    end
  end
end)

t.test("option 'xpub' refuses private keys by their decoded version, whatever the text looks like", function()
  local keys = {
    "Ltpv71G8qDifUiNetExQFUsQdYezsBDUaB814BhGZsphfZBrT3zqfeXTed3NqdFEoARcM1uJVNKbqmXwJscuMY753LZUtc36GiKqV5anTrnqWfr",
    "dgpv51eADS3spNJh98bWAfYnAW8K1gMy86HKmH1dpyT8kLsUKBqssT3jsLLFWyK4zbruL51UjejFDzrFzBcwjjA57rSv6D2978QigKG4xbCfJV6",
    " zprvAWgYBBk7JR8Gjrh4UJQ2uJdG1r3WNRRfURiABBE3RvMXYSrRJL62XuezvGdPvG6GFBZduosCc1YP5wixPox7zhZLfiUm8aunE96BBa4Kei5",
    "xprv9s21ZrQH143K3GJpoapnV8SFfukcVBSfeCficPSGfubmSFDxo1kuHnLisriDvSnRRuL2Qrg5ggqHKNVpxR86QEC8w35uxmGoggxtQTPvfUu",
    "pGoh3VSiBwoWmRoSExBVSRonRkTSE7G3q8V2EDXZoZ17QvBAav1RiF43Cc8ccf6HrG7j6Es5GZTi3bBRBT3LB7hdHNHWWHKqq529AE3ev8KERAQS",
  }
  for _, key in ipairs(keys) do
    local ok, err = pcall(discovery.scan, { xpub = key, source = {} })
    t.eq(ok, false)
    t.ok(tostring(err):find("private", 1, true), tostring(err))
    t.ok(not tostring(err):find(key:gsub("^ ", ""):sub(5, 24), 1, true), "the key is echoed: " .. tostring(err))
  end
  -- hd.from_extended parses private keys of every known version as private, by version bytes
  t.eq(hd.from_extended(keys[1]):is_private(), true)
  t.eq(hd.from_extended(keys[2]):is_private(), true)
  local ok, err = pcall(hd.from_extended, keys[5])
  t.eq(ok, false)
  t.ok(not tostring(err):find(keys[5]:sub(5, 24), 1, true), tostring(err))
end)

t.run()
