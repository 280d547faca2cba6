-- Lua 5.4.4 bug 10: lvm.c did not save the pc (savestate) before integer
-- division/modulo, so "attempt to perform 'n%%0'" named a wrong line.
-- Wrong error message only.
local f = assert(load("local a = 0\nlocal b = 1\nlocal c = b % a\n", "=chunk"))
local ok, msg = pcall(f)
assert(not ok)
assert(string.find(msg, "chunk:3:", 1, true), "wrong line: " .. msg)
local g = assert(load("local a = 0\nlocal b = 1\nlocal c = b // a\n", "=chunk"))
ok, msg = pcall(g)
assert(not ok and string.find(msg, "chunk:3:", 1, true), "wrong line: " .. tostring(msg))
print("ok")
