-- Lua 5.4.4 bug 7: lgc.c did not set a proper pause (GC debt) after a full
-- collection in generational mode, so the next cycle starts at the wrong time.
-- A tuning/performance bug only. The sandbox must not let code switch modes.
local ok, err = pcall(collectgarbage, "generational")
if not ok then
  assert(string.find(tostring(err), "not allowed", 1, true), tostring(err))
  print("ok")
  return
end
-- Unsandboxed: show the effect (memory after a full collection + churn).
collectgarbage()
local peak = 0
for i = 1, 200000 do
  local t = { i, i, i }
  if i % 1000 == 0 then
    local kb = collectgarbage("count")
    if kb > peak then peak = kb end
    if i % 50000 == 0 then collectgarbage() end
  end
end
collectgarbage("incremental")
print(string.format("generational peak %.0f KiB", peak))
print("ok")
