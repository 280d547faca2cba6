-- Lua 5.4.4 bug 9: lcorolib.c luaB_close -> lapi/lstate.c lua_resetthread ->
-- luaE_resetthread -> luaD_closeprotected -> luaF_close -> __close ... runs the
-- closed coroutine with the C-call count it had when it last yielded, not the
-- caller's, so a chain of coroutine.close calls made from __close handlers
-- recurses on the C stack with no limit: SIGSEGV.
-- Fixed: the chain stops with an error ("C stack overflow") and close returns false.
local N = 20000
local count = 0
local coro = false
for _ = 1, N do
  local previous = coro
  coro = coroutine.create(function()
    local cc <close> = setmetatable({}, { __close = function()
      count = count + 1
      if previous then assert(coroutine.close(previous)) end
    end })
    coroutine.yield()
  end)
  assert(coroutine.resume(coro))
end
local st, msg = coroutine.close(coro)
assert(not st, "closing " .. N .. " nested coroutines should fail")
msg = tostring(msg)
assert(string.find(msg, "C stack overflow", 1, true) or string.find(msg, "nested", 1, true), msg)
assert(count < N)
print("ok")
