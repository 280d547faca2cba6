-- Lua 5.4.4 bug 5: lapi.c lua_settop() (and lua_closeslot) kept a StkId across
-- luaF_close(), whose __close call may reallocate the stack. Only C code that
-- marks a slot with lua_toclose and then pops it reaches lua_settop's close path;
-- in the standard libraries that is lauxlib's buffer box, whose __close (boxgc)
-- is C and cannot be replaced from Lua. This file drives the Lua-reachable
-- siblings the same upstream commit touched (ldo.c moveresults, finishpcallk):
-- a __close metamethod that forces a stack reallocation on return and on error.
local function grow(n) if n < 400 then return grow(n + 1) + 1 end return 0 end
local closed = 0
local mt = { __close = function() grow(0); closed = closed + 1 end }
local function returns(...)
  local o <close> = setmetatable({}, mt)
  return ...
end
for _ = 1, 3 do
  collectgarbage(); collectgarbage() -- lets Lua shrink the stack first
  local a, b, c = returns(1, 2, 3)
  assert(a == 1 and b == 2 and c == 3)
  local ok, err = pcall(function()
    local o <close> = setmetatable({}, mt)
    error("boom", 0)
  end)
  assert(not ok and err == "boom")
end
assert(closed == 6)
-- string buffers (the lua_toclose user) with a large result
assert(#string.rep("x", 100000, ",") == 199999)
print("ok")
