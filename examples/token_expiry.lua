-- Two kinds of expiry. A token's `expires` field is enforced by the wallet: an expired token never runs. A
-- program can also enforce its own dates, read from the issuer's `meta`, against the run's fixed time `t.now`
-- (the only clock a program has).
-- Run: keyhost run examples/token_expiry.lua
local token = require "keyhost.token"
local ec = require "keyhost.ec"
local hex = require "keyhost.hex"

local path = os.tmpname()
os.remove(path)
local wallet <close> = token.wallet.create(path)
local holder = wallet:holder().public_key
local issuer = ec.generate()
local now = os.time()

-- The program refuses after meta.redeem_until; before it, it emits a record.
local program = [[
local t = ...
local deadline = t.token.meta.redeem_until
if t.now > deadline then
  error(("this offer ended at %d (now %d)"):format(deadline, t.now))
end
t.emit { kind = "redeemed", amount = t.token.value, deadline = deadline }
]]

local function issue(opts)
  opts.program, opts.to, opts.issuer_key, opts.unit = opts.program or program, holder, issuer, "EUR-cent"
  local text = token.issue(opts)
  wallet:import(text)
  return token.parse(text)[1].id
end

-- Still open: runs.
local open = issue { value = 100, meta = { redeem_until = now + 3600 } }
print("open offer:       " .. wallet:run(open).effects[1].kind)

-- The program's own date has passed: the run fails, and the token stays HELD with no effects.
local ended = issue { value = 200, meta = { redeem_until = now - 60 } }
local ok, err = pcall(wallet.run, wallet, ended)
assert(not ok and err.kind == "program")
print("ended offer:      refused by the program (" .. err.kind .. "), token " .. wallet:inspect(ended).state)

-- The token itself has expired: the wallet refuses before any program runs.
local expired = issue { value = 300, expires = now - 1, meta = { redeem_until = now + 3600 } }
ok, err = pcall(wallet.run, wallet, expired)
assert(not ok and err.kind == "expired")
print("expired token:    refused by the wallet (" .. err.kind .. ")")

for _, row in ipairs(wallet:list()) do
  print(("  %s…  %-5s  %d %s"):format(hex.encode(row.id):sub(1, 12), row.state, row.value, row.unit))
end

wallet:close()
os.remove(path)
