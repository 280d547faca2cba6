-- CVE-2021-43519 (Lua 5.4.0-5.4.3): ldo.c lua_resume() did not carry the
-- resumer's C-call count into the coroutine, so coroutines resuming coroutines
-- overflowed the C stack. Fixed in 5.4.4 (L->nCcalls = getCcalls(from) and a
-- "C stack overflow" check in lua_resume); this checks Debian's build.
local depth = 0
local function dive()
  depth = depth + 1
  coroutine.wrap(dive)()
end
local ok, msg = pcall(dive)
assert(not ok, "unbounded coroutine nesting should fail")
assert(string.find(tostring(msg), "C stack overflow", 1, true), tostring(msg))
-- the same through coroutine.resume, which returns the error instead
local function dive2()
  local co = coroutine.create(dive2)
  local ok2, err = coroutine.resume(co)
  if not ok2 then error(err, 0) end
end
ok, msg = pcall(dive2)
assert(not ok and string.find(tostring(msg), "C stack overflow", 1, true), tostring(msg))
print("ok")
