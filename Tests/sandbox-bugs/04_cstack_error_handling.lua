-- Lua 5.4.4 bug 4 (CVE-2022-33099): when the C stack overflows while an error
-- is being handled, ldebug.c luaG_runerror() pushes the message and then the
-- "source:line:" prefix without room on the Lua stack (heap write past the
-- stack). Fixed: the calls fail with an error; nothing is corrupted.
local function loop()
  assert(pcall(loop))
end
local ok = xpcall(loop, loop)
assert(ok == false, "xpcall should report failure")
-- the same with the host's own message handler (top-level error path)
local ok2 = pcall(function() loop() end)
assert(ok2 == false)
print("ok")
