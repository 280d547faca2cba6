-- A precompiled token: the issuer ships Lua 5.4 bytecode instead of source. Lua does not verify bytecode (a
-- hostile chunk can corrupt memory), so a wallet accepts it only from issuers it trusts; the run still
-- happens in the sandboxed worker process.
-- Run: keyhost run examples/token_precompiled.lua
local token = require "keyhost.token"
local ec = require "keyhost.ec"
local hex = require "keyhost.hex"

local path = os.tmpname()
os.remove(path)
local wallet <close> = token.wallet.create(path)
local issuer = ec.generate()
local issuer_id = ec.public_key(issuer, { x_only = true })

local text = token.issue {
  program = [[
    local t = ...
    local digest = t.hash.sha256(t.token.id .. t.args.ticket)
    t.emit { kind = "admitted", ticket = t.args.ticket, proof = t.hex.encode(digest):sub(1, 16) }
  ]],
  value = 1, unit = "ticket", to = wallet:holder().public_key, issuer_key = issuer, precompile = true,
}
local tok = token.inspect(text)
print(("token:     %s, %d bytes of %s"):format(hex.encode(tok.id):sub(1, 16) .. "…", tok.program_size, tok.program_kind))

-- Not trusted yet: refused at import.
local ok, err = pcall(wallet.import, wallet, text)
assert(not ok and err.kind == "untrusted_bytecode")
print("import:    refused (" .. err.kind .. ")")

-- Trust the issuer (its x-only key), then import and run.
wallet:trust(issuer_id)
print("trusted:   " .. hex.encode(wallet:trusted()[1]))
wallet:import(text)
local run = wallet:run(tok.id, { ticket = "A-17" })
print(("run:       %s %s, proof %s"):format(run.effects[1].kind, run.effects[1].ticket, run.effects[1].proof))

-- A verifier re-runs bytecode only when it trusts it too.
assert(not token.verify_receipt(run.receipt).valid)
assert(token.verify_receipt(run.receipt, { trust_bytecode = true }).valid)
print("receipt:   valid (with trust_bytecode = true)")

wallet:close()
os.remove(path)
