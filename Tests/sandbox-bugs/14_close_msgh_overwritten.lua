-- Lua 5.4 bug listed for 5.4.7 (present in 5.4.4): lstate.c luaE_resetthread
-- lets a __close metamethod overwrite a message handler left on the closed
-- coroutine's stack, so coroutine.close may call a non-function as handler.
-- Wrong error value; checks that close returns the __close error itself.
local c = coroutine.create(function()
  local clo <close> = setmetatable({}, { __close = function()
    local x = 134
    error(x)
  end })
  xpcall(coroutine.yield, function() return "XXX" end)
end)
assert(coroutine.resume(c))
local st, msg = coroutine.close(c)
assert(not st and msg == 134, "close returned " .. tostring(st) .. ", " .. tostring(msg))
print("ok")
