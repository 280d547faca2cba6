-- Token runs through the Lua API, for scripts/bench (driven by token_runs.py, which keeps the time).
--   keyhost run token_runs.lua WALLET COUNT MODE
-- Creates WALLET with COUNT tokens (a trivial program), prints "ready", waits for a line on standard input,
-- then runs them all and prints "done <runs>". MODE:
--   run        w:run on each token in turn (one durable commit per run)
--   run_many   w:run_many in batches of 100 (one durable commit per batch)
--   prepare    only create the wallet and print the token ids, one per line (for the CLI loops)
local token = require "keyhost.token"
local ec = require "keyhost.ec"
local hex = require "keyhost.hex"

local path, count, mode = arg[1], tonumber(arg[2]), arg[3]
assert(path and count and mode, "usage: keyhost run token_runs.lua WALLET COUNT run|run_many|prepare")
local issuer = ec.private_key(hex.decode(string.rep("41", 32)))
local w <close> = token.wallet.create(path)
local texts, ids = {}, {}
for i = 1, count do
  texts[i] = token.issue { program = "local t = ... t.emit(t.token.value)", value = i, unit = "pt",
                           to = w:holder().public_key, issuer_key = issuer }
end
for i, row in ipairs(w:import(table.concat(texts, "\n"))) do ids[i] = row.id end

if mode == "prepare" then
  for _, id in ipairs(ids) do print(hex.encode(id)) end
  return
end
print("ready")
io.stdout:flush()
io.read("l")
local ran = 0
if mode == "run" then
  for _, id in ipairs(ids) do
    assert(w:run(id).effects[1])
    ran = ran + 1
  end
elseif mode == "run_many" then
  for first = 1, #ids, 100 do
    local batch = table.move(ids, first, math.min(first + 99, #ids), 1, {})
    for _, r in ipairs(w:run_many(batch)) do
      assert(r.ok, r.error and r.error.message)
      ran = ran + 1
    end
  end
else
  error("unknown mode " .. mode)
end
print("done " .. ran)
io.stdout:flush()
