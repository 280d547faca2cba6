-- Lua 5.4.4 bug 2 (CVE-2022-28805): a <const> _ENV holding a non-table constant
-- made lparser.c singlevar() index a constant as if it were a register
-- (heap over-read). Fixed: the global access is an ordinary "index a number" error.
local function foo()
  local _ENV <const> = 11
  X = "hi"
end
local ok, msg = pcall(foo)
assert(not ok and string.find(tostring(msg), "number", 1, true),
  "expected 'attempt to index a number value', got: " .. tostring(msg))
print("ok")
