-- Discovery figures for scripts/bench. Run as: keyhost run discovery.lua [accounts] [repetitions]
-- Prints one line: "index_us=<median total> checked=<addresses> card_us=<median total> card_accounts=<n> card_exports=<n>"
--   index: a BIP84 scan of `accounts` used accounts (one used address each, at index 0) plus the empty one that
--          ends it, gap 20 on both chains, against an index file: ~accounts x 2 chains x 20 addresses.
--   card:  the same scan with the software card (applet 3.2) as the key source; EXPORT KEY commands counted from
--          the session transcript (secure channel v1 leaves CLA/INS in clear).
local discovery = require "keyhost.discovery"
local card = require "keyhost.card"
local hd = require "keyhost.hd"

local accounts = tonumber(arg and arg[1]) or 100
local reps = tonumber(arg and arg[2]) or 5
local words = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"
local master = hd.from_mnemonic(words)

local index = os.tmpname()
local f = assert(io.open(index, "w"))
for a = 0, accounts - 1 do f:write(master:derive(string.format("m/84'/0'/%d'/0/0", a)):address(), "\n") end
f:close()

local function median(xs)
  table.sort(xs)
  local m = #xs // 2
  return #xs % 2 == 1 and xs[m + 1] or (xs[m] + xs[m + 1]) / 2
end
-- Wall-clock microseconds via date +%s%N would fork; the scan is multi-core, so CPU time (os.clock) over-counts.
-- Use the result's own elapsed time, reported by on_progress at the end.
local function timed(opts)
  local elapsed
  opts.on_progress = function(p) elapsed = p.elapsed end
  local r = discovery.scan(opts)
  return r, elapsed * 1e6
end

local checked
local index_us = {}
for i = 1, reps do
  local r, us = timed { mnemonic = words, purpose = 84, gap_limit = 20, source = "index:" .. index }
  assert(r.totals.accounts_used == accounts and #r.accounts == accounts + 1, "unexpected scan result")
  checked = r.totals.addresses_checked
  index_us[i] = us
end

local card_us, exports, card_accounts = {}, 0, 0
for i = 1, reps do
  local transcript = os.tmpname()
  local s = card.open { reader = "virtual", seed = i, record = transcript }
  s:init { pin = "123456", puk = "987654321098", pairing_password = "KeycardTest" }
  s:auto { pin = "123456", pairing_password = "KeycardTest" }
  s:load_seed(hd.mnemonic_to_seed(words))
  local r, us = timed { card = s, purpose = 84, gap_limit = 20, source = "index:" .. index }
  s:close()
  card_us[i] = us
  card_accounts = #r.accounts
  exports = 0
  for line in io.lines(transcript) do if line:sub(1, 6) == "> 80c2" then exports = exports + 1 end end
  os.remove(transcript)
end
os.remove(index)
print(string.format("index_us=%.0f checked=%d card_us=%.0f card_accounts=%d card_exports=%d",
  median(index_us), checked, median(card_us), card_accounts, exports))
