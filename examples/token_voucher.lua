-- A voucher token: the issuer signs a small Lua program worth 500 EUR-cent to the wallet's holder key; the
-- wallet runs it once, in a separate sandboxed worker process, and gets a redemption record and a receipt
-- signed by the holder, which anyone can check by re-running the program.
-- Run: keyhost run examples/token_voucher.lua
local token = require "keyhost.token"
local ec = require "keyhost.ec"
local hex = require "keyhost.hex"

-- A throw-away wallet file (a real one lives at ~/.local/state/keyhost/wallet.db, see `keyhost token wallet init`).
local path = os.tmpname()
os.remove(path)
local wallet <close> = token.wallet.create(path)
local holder = wallet:holder().public_key
print("holder key:   " .. hex.encode(holder))

-- The program receives one capability object: the token's fields, the run's arguments, the fixed time, and emit.
local program = [[
local t = ...
assert(type(t.args.shop) == "string", "say where the voucher is redeemed: {shop = ...}")
t.emit {
  kind = "redemption",
  voucher = t.hex.encode(t.token.id),
  amount = t.token.value,
  unit = t.token.unit,
  shop = t.args.shop,
  at = t.now,
}
]]

local issuer = ec.generate()
local text = token.issue { program = program, value = 500, unit = "EUR-cent", to = holder, issuer_key = issuer,
                           meta = { campaign = "spring" } }
local voucher = token.inspect(text)
print("voucher:      " .. hex.encode(voucher.id) .. " (" .. voucher.value .. " " .. voucher.unit .. ", signature "
      .. (voucher.signature_valid and "valid" or "INVALID") .. ")")

for _, row in ipairs(wallet:import(text)) do print("imported:     " .. hex.encode(row.id):sub(1, 16) .. "… " .. row.result) end

local run = wallet:run(hex.encode(voucher.id):sub(1, 8), { shop = "bakery on the corner" })
local record = run.effects[1]
print(("redeemed:     %d %s at %s (%s)"):format(record.amount, record.unit, record.shop, os.date("!%Y-%m-%dT%H:%M:%SZ", record.at)))
print("receipt:      " .. hex.encode(run.receipt_id))

-- A token runs once.
local ok, err = pcall(wallet.run, wallet, voucher.id, { shop = "elsewhere" })
assert(not ok and err.kind == "already_spent")
print("second run:   refused (" .. err.kind .. ")")

-- Anyone holding the receipt can check it without trusting the wallet.
local report = token.verify_receipt(run.receipt)
print("verified:     " .. tostring(report.valid))
assert(report.valid)

wallet:close()
os.remove(path)
