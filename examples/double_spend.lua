-- A double spend caught at deposit (docs/payments.md): A's wallet file is copied, the original pays B and
-- the copy pays C with the same token. Offline, nothing can stop that; but both payees deposit, the ledger
-- records the token once, and the second deposit gets a fraud proof that anyone can check with the issuer's
-- key alone: it shows the key that signed two different transfers of one token, A's.
-- Run: keyhost run examples/double_spend.lua
local token = require "keyhost.token"
local ec = require "keyhost.ec"
local hex = require "keyhost.hex"

local function stdlib_source(name)
  for _, searcher in ipairs(package.searchers) do
    local loader, path = searcher(name)
    if type(loader) == "function" and type(path) == "string" then
      local file = assert(io.open(path, "rb"))
      local text = file:read("a")
      file:close()
      return text
    end
  end
  error("keyhost's stdlib has no " .. name)
end

local files = {}
local function scratch()
  local path = os.tmpname()
  os.remove(path)
  files[#files + 1] = path
  return path
end
-- Copies a file into a new one of mode 0600 (os.tmpname makes it so; a wallet others can read is refused).
local function copy(from, to)
  local input = io.open(from, "rb")
  if not input then return end
  local private = os.tmpname()
  assert(os.rename(private, to))
  local output = assert(io.open(to, "wb"))
  output:write(input:read("a"))
  input:close()
  output:close()
end
local function short(bytes) return hex.encode(bytes):sub(1, 12) .. "…" end

local issuer = ec.generate()
local a_path = scratch()
local a = token.wallet.create(a_path)
local a_key = a:holder().public_key
a:import(token.issue { program = stdlib_source("keyhost.cash"), value = 100, unit = "EUR-cent", to = a_key, issuer_key = issuer })
print("A holds one token of 100 EUR-cent; A's key " .. short(a_key))

-- The clone: the wallet file copied while no run is active (closed first, so SQLite has folded its
-- write-ahead log into the file; a leftover log is copied too).
a:close()
local clone_path = scratch()
copy(a_path, clone_path)
copy(a_path .. "-wal", clone_path .. "-wal")
local a1 <close> = token.wallet.open(a_path)
local a2 <close> = token.wallet.open(clone_path)

local b <close> = token.wallet.create(scratch())
local c <close> = token.wallet.create(scratch())
local to_b = a1:pay(b:request { amount = 100, unit = "EUR-cent", issuers = { issuer } })
local to_c = a2:pay(c:request { amount = 100, unit = "EUR-cent", issuers = { issuer } })
assert(b:receive(to_b).complete and c:receive(to_c).complete)
print("the original paid B, the clone paid C: both accepted the token offline")

local ledger <close> = token.ledger.open("sqlite:" .. scratch(), { issuers = { issuer } })
local id = token.parse_payment(to_b).chains[1].token_id
local first = ledger:deposit(b:deposit_chains { id })[1]
local second = ledger:deposit(c:deposit_chains { id })[1]
print(("B deposits token %s: %s"):format(short(first.token_id), first.result))
print(("C deposits token %s: %s"):format(short(second.token_id), second.result))
assert(first.result == "accepted" and second.result == "double_spend" and second.proof)

-- The proof, checked on its own: it names the key that signed twice.
local check = token.verify_proof(second.proof)
assert(check.valid and check.key == a_key and check.token_id == id)
print(("proof:    valid; signed twice by %s (A's key) at link %d"):format(hex.encode(check.key), check.position))
print(("ledger:   %d token(s), %d double spend(s)"):format(ledger:stats().tokens, ledger:stats().double_spends))

for _, w in ipairs { a1, a2, b, c } do w:close() end
ledger:close()
for _, path in ipairs(files) do
  for _, suffix in ipairs { "", "-wal", "-shm" } do os.remove(path .. suffix) end
end
