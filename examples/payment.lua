-- Paying with one-time tokens (docs/payments.md): an issuer gives wallet A cash tokens (a withdrawal),
-- B asks A for 150 EUR-cent, A pays, B receives and pays 50 on to C, and C deposits at the issuer's ledger.
-- Every hop is a run of the token's program (stdlib/keyhost/cash.lua) that hands it to a one-time key of
-- the payee; the token travels with its signed chain of transfers, which the ledger checks.
-- Run: keyhost run examples/payment.lua
local token = require "keyhost.token"
local ec = require "keyhost.ec"
local hex = require "keyhost.hex"

-- The stdlib's cash program, found the way `require` finds modules, read as text.
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
local cash = stdlib_source("keyhost.cash")

-- Throw-away files: three wallets and the issuer's ledger.
local files = {}
local function scratch()
  local path = os.tmpname()
  os.remove(path)
  files[#files + 1] = path
  return path
end
local function short(bytes) return hex.encode(bytes):sub(1, 12) .. "…" end

local issuer = ec.generate()
local a <close> = token.wallet.create(scratch())
local b <close> = token.wallet.create(scratch())
local c <close> = token.wallet.create(scratch())
print("issuer:   " .. short(issuer:public_key()))
print("A holds:  " .. short(a:holder().public_key))

-- Withdrawal: the issuer signs cash tokens of 100, 50, 20 and 10 to A's holder key.
for _, value in ipairs { 100, 50, 20, 10 } do
  a:import(token.issue { program = cash, value = value, unit = "EUR-cent", to = a:holder().public_key, issuer_key = issuer })
end
print("withdrawn: 180 EUR-cent to A in 4 tokens")

-- B asks for 150 from this issuer, with 8 one-time exchange keys; A pays with tokens that make it exactly.
local request = b:request { amount = 150, unit = "EUR-cent", issuers = { issuer }, memo = "groceries" }
local asked = token.parse_request(request)
print(("B asks:   %d %s (%q), %d keys, request %s"):format(asked.amount, asked.unit, asked.memo, #asked.keys, short(asked.id)))
local payment, paid = a:pay(request)
print(("A pays:   %d %s with %d tokens"):format(paid.amount, paid.unit, #paid.tokens))
local received = b:receive(payment)
print(("B gets:   %d of %d %s, %s"):format(received.amount, received.requested, received.unit,
                                          received.complete and "complete" or "PARTIAL"))
assert(received.complete and #received.tokens == 2)
-- The same payment again changes nothing.
assert(b:receive(payment).tokens[1].result == "already_present")

-- Multi-hop: B pays 50 on to C with a token it received; the chain grows by one link.
local onward, sent = b:pay(c:request { amount = 50, unit = "EUR-cent", issuers = { issuer } })
assert(c:receive(onward).complete)
local chain = token.parse_payment(onward).chains[1]
print(("B pays C: %d %s, token %s, %d links so far"):format(chain.value, chain.unit, short(chain.token_id), #chain.links))

-- Deposit: C hands the token to the issuer (a last link to its deposit key), the ledger records it once.
local chains = c:deposit_chains(sent.tokens)
local ledger_path = scratch()
local ledger <close> = token.ledger.open("sqlite:" .. ledger_path, { issuers = { issuer } })
for _, row in ipairs(ledger:deposit(chains)) do
  print(("C deposits: token %s %s"):format(short(row.token_id), row.result))
  assert(row.result == "accepted")
end
local path = token.parse_chain(chains[1])[1]
local hops = {}
for _, link in ipairs(path.links) do hops[#hops + 1] = short(link.to) end
print("its path: issuer → A → " .. table.concat(hops, " → ") .. " (the issuer's deposit key)")
assert(ledger:deposit(chains)[1].result == "already_deposited")
local stats = ledger:stats()
for _, unit in ipairs(stats.units) do
  print(("ledger:   %d token(s), %s %s deposited, %d double spends"):format(unit.tokens, unit.total, unit.unit, stats.double_spends))
end

for _, w in ipairs { a, b, c } do w:close() end
ledger:close()
for _, path in ipairs(files) do
  for _, suffix in ipairs { "", "-wal", "-shm" } do os.remove(path .. suffix) end
end
