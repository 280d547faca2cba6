-- What keyhost.card operations cost: APDUs (counted in a recorded transcript), wall time, and keyhost's
-- own CPU time (os.clock: this process only, so a card served by another process is not in it).
--
--   keyhost run card_ops.lua READER N DIR
--
-- READER is "virtual" (the software card in this process) or a PC/SC reader name (a card served by
-- `keyhost card serve --vpcd`); N the iterations per timed figure; DIR a scratch folder (pairing store,
-- card state, transcripts). The card is set up on first use: INIT, PAIR, LOAD KEY of the test mnemonic;
-- every figure then runs with the pairing stored, as a user's second and later runs do.
-- Prints "name apdus=<n> cmds=<INS list> wall_us=<per op> cpu_us=<per op>" lines, and for READER
-- "virtual" also "sign_rate ns=<per SIGN>".
local card = require "keyhost.card"
local hd = require "keyhost.hd"
local hash = require "keyhost.hash"
local ec = require "keyhost.ec"

local reader, n, dir = arg[1], math.tointeger(tonumber(arg[2])), arg[3]
assert(reader and n and dir, "usage: card_ops.lua READER N DIR")
local PIN, PUK, PASSWORD = "123456", "987654321098", "KeycardTest"
local WORDS = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"
local SIGN_PATH, ACCOUNT = "m/44'/60'/0'/0/0", "m/84'/0'/0'"
local DIGEST = hash.sha256("keyhost card bench")
local virtual = reader == "virtual"

local function open(record)
  return card.open {
    reader = reader, pairing_store = dir .. "/pairings.json", record = record,
    state = virtual and (dir .. "/card.json") or nil,
  }
end

-- Wall clock through date(1): called outside the CPU-timed span, so its fork does not count as keyhost's.
local function wall()
  local p = assert(io.popen("date +%s%N"))
  local ns = math.tointeger(tonumber(p:read("l")))
  p:close()
  return ns
end

-- ---------------------------------------------------------------- set-up (once per card)
do
  local s <close> = open()
  local info = s:select()
  if not info.initialized then
    s:init { pin = PIN, puk = PUK, pairing_password = PASSWORD }
  end
  s:auto { pin = PIN, pairing_password = PASSWORD }
  if not s:status().has_master_key then s:load_seed(hd.mnemonic_to_seed(WORDS)) end
  local sig = s:sign(DIGEST, { path = SIGN_PATH })
  local want <close> = hd.from_mnemonic(WORDS):derive(SIGN_PATH)
  assert(sig.public_key == want:public_key(), "the card holds another key")
  assert(ec.verify(sig.public_key, DIGEST, sig))
end

-- ---------------------------------------------------------------- operations
local function auto(s) s:auto { pin = PIN, pairing_password = PASSWORD } end
local function sign(s) s:sign(DIGEST, { path = SIGN_PATH }) end
local function xpub(s)
  local k = s:export_key { path = ACCOUNT, kind = "extended", family = "zpub" }
  assert(k.xpub:sub(1, 4) == "zpub")
end
local function extended(s)  -- public key and chain code, no xpub: no parent EXPORT
  local k = s:export_key { path = ACCOUNT, kind = "extended", xpub = false }
  assert(#k.chain_code == 32 and k.xpub == nil)
end
local function none() end

local INS = {
  a4 = "SELECT", ["10"] = "OPEN SECURE CHANNEL", ["11"] = "MUTUALLY AUTHENTICATE", ["12"] = "PAIR",
  ["20"] = "VERIFY PIN", c0 = "SIGN", c2 = "EXPORT KEY", f2 = "GET STATUS", d1 = "DERIVE KEY", ["18"] = "SECURE",
}

--- The commands of a transcript file, as instruction names.
local function commands(path)
  local out = {}
  for line in io.lines(path) do
    local ins = line:match("^> %x%x(%x%x)")
    if ins then out[#out + 1] = INS[ins] or ("INS " .. ins) end
  end
  os.remove(path)
  return out
end

--- The APDUs `op` sends after `setup`: a recorded session with both, less one with the set-up alone.
local function count(setup, op)
  local base, full = dir .. "/base.txt", dir .. "/full.txt"
  do local s <close> = open(base); setup(s) end
  do local s <close> = open(full); setup(s); op(s) end
  local a, b = commands(base), commands(full)
  for i = 1, #a do assert(a[i] == b[i], "set-up sent other commands the second time") end
  return table.move(b, #a + 1, #b, 1, {})
end

--- Per operation: wall and keyhost CPU microseconds over n runs (after 2 warm-up runs).
local function timed(setup, op)
  local s <close> = open()
  setup(s)
  op(s); op(s)
  local t0 = wall()
  local c0 = os.clock()
  for _ = 1, n do op(s) end
  local c1 = os.clock()
  local t1 = wall()
  return (t1 - t0) / n / 1e3, (c1 - c0) / n * 1e6
end

local figures = {
  { "sign", auto, sign },
  { "xpub", auto, xpub },
  { "extended", auto, extended },
  { "auto", none, auto },
  { "auto_sign", none, function(s) auto(s); sign(s) end },
}
for _, f in ipairs(figures) do
  local name, setup, op = f[1], f[2], f[3]
  local cmds = count(setup, op)
  local wall_us, cpu_us = timed(setup, op)
  print(string.format("%s apdus=%d cmds=%s wall_us=%.1f cpu_us=%.1f", name, #cmds,
    table.concat(cmds, ","):gsub(" ", "_"), wall_us, cpu_us))
end

-- In process only: SIGN with path per second, CPU time (card and host are both this process).
if virtual then
  local s <close> = card.open { reader = "virtual" }  -- in memory, as scripts and tests use it
  s:select()
  s:init { pin = PIN, puk = PUK, pairing_password = PASSWORD }
  auto(s)
  s:load_seed(hd.mnemonic_to_seed(WORDS))
  for _ = 1, 20 do sign(s) end
  local best
  for _ = 1, 3 do
    local c0 = os.clock()
    for _ = 1, n do sign(s) end
    local ns = (os.clock() - c0) / n * 1e9
    best = best and math.min(best, ns) or ns
  end
  print(string.format("sign_rate ns=%.1f", best))
end
