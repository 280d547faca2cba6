-- Account discovery against an index file of used addresses.
-- Run: keyhost run examples/discover_index.lua
--
-- The BIP39 test wallet ("abandon ... about") stands in for a real one. We pretend a few of its addresses
-- were used (computed with keyhost.hd), write them to an index file, and let discovery find them from the
-- seed. With gap_limit = 5 a chain's scan ends after 5 consecutive unused addresses, so:
--   receive 0/2 and 0/6 are found (0/6 lies 3 unused addresses after 0/2: inside the gap),
--   receive 0/13 is NOT found (6 unused addresses, 0/7..0/12, lie before it: the gap closed at 0/11),
--   change 1/1 is found, account 1 is used through its change chain only, account 2 is empty: the scan stops.
local discovery = require "keyhost.discovery"
local hd = require "keyhost.hd"

local words = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"
local master <close> = hd.from_mnemonic(words)
local function address(path) return master:derive(path):address { kind = "p2wpkh" } end

local used = {
  address "m/84'/0'/0'/0/2",
  address "m/84'/0'/0'/0/6",
  address "m/84'/0'/0'/0/13",   -- beyond the gap: a wallet following BIP44 would never hand it out
  address "m/84'/0'/0'/1/1",
  address "m/84'/0'/1'/1/0",    -- account 1: change only
}

-- One address per line; '#' starts a comment (CSV with an 'address' column and JSON lists work too).
local index = os.tmpname()
local f = assert(io.open(index, "w"))
f:write("# used addresses of the test wallet\n", table.concat(used, "\n"), "\n")
f:close()

local result = discovery.scan {
  mnemonic = words,
  purpose = 84,                 -- BIP84: m/84'/0'/{account}'/{change}/{index}, P2WPKH
  gap_limit = 5,                -- both chains (change_gap_limit overrides the change chain's)
  account_gap = 1,              -- stop at the first empty account, as BIP44 says
  source = "index:" .. index,
}
os.remove(index)

for _, account in ipairs(result.accounts) do
  print(string.format("account %d  %s  %s", account.account, account.path, account.is_used and "used" or "empty"))
  if account.xpub then print("  " .. account.xpub) end
  for _, u in ipairs(account.used) do
    print(string.format("  %-7s %3d  %s  %s", u.chain, u.index, u.path, u.address))
  end
  print(string.format("  last used: receive %s, change %s; checked %d receive, %d change",
    tostring(account.last_used.receive), tostring(account.last_used.change), account.receive_checked, account.change_checked))
end
local t = result.totals
print(string.format("%d of %d accounts used, %d used addresses, %d addresses checked",
  t.accounts_used, t.accounts_scanned, t.used_addresses, t.addresses_checked))

assert(#result.accounts == 3 and #result.accounts[1].used == 3 and #result.accounts[2].used == 1)
assert(result.accounts[1].last_used.receive == 6, "0/13 lies beyond the gap and must not be found")
