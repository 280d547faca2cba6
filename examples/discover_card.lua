-- Account discovery from a card: one EXPORT KEY per account, every address derived on the host.
-- Run: keyhost run examples/discover_card.lua
--
-- A software Keycard (in process) is set up with the BIP39 test seed; discovery asks it for each account's
-- extended public key and derives the addresses locally, so a scan of many addresses costs a handful of APDUs.
local card = require "keyhost.card"
local discovery = require "keyhost.discovery"
local hd = require "keyhost.hd"

local words = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"
local transcript = os.tmpname()   -- the session's APDUs, written at close, to count them

local s = card.open { reader = "virtual", record = transcript }
s:init { pin = "123456", puk = "987654321098", pairing_password = "KeycardTest" }
s:auto { pin = "123456", pairing_password = "KeycardTest" }
s:load_seed(hd.mnemonic_to_seed(words))

-- Used addresses, as an indexer would report them: two in account 0, one in account 1.
local master <close> = hd.from_mnemonic(words)
local index = os.tmpname()
local f = assert(io.open(index, "w"))
for _, path in ipairs { "m/84'/0'/0'/0/0", "m/84'/0'/0'/0/4", "m/84'/0'/1'/0/1" } do
  f:write(master:derive(path):address(), "\n")
end
f:close()

local result = discovery.scan {
  card = s,
  coin = "btc", purpose = 84,
  gap_limit = 20,
  source = "index:" .. index,
}
s:close()   -- writes the transcript
os.remove(index)

for _, account in ipairs(result.accounts) do
  print(string.format("account %d %s: %d used", account.account, account.is_used and "used" or "empty", #account.used))
  if account.xpub then print("  " .. account.xpub) end
  for _, u in ipairs(account.used) do print(string.format("  %s %d  %s", u.chain, u.index, u.address)) end
end

local apdus, exports = 0, 0
for line in io.lines(transcript) do
  if line:sub(1, 1) == ">" then
    apdus = apdus + 1
    if line:sub(3, 6) == "80c2" then exports = exports + 1 end   -- CLA 80, INS C2: EXPORT KEY
  end
end
os.remove(transcript)
local accounts = #result.accounts
print(string.format("%d accounts, %d addresses checked: %d EXPORT KEY (one per account + the accounts' shared parent + the "
  .. "master key, whose fingerprint the descriptors' origins name), "
  .. "%d APDUs in the whole session (SELECT, pairing, secure channel, PIN, LOAD KEY included)",
  accounts, result.totals.addresses_checked, exports, apdus))
assert(exports == accounts + 2 and result.totals.key_exports == exports)
