-- Lua bug listed for 5.4.7 (present in Debian's 5.4.4): lcode.c luaK_exp2val()
-- did not treat a whole comparison (a VJMP expression) as having jumps, so a
-- comparison used as a table index is coded wrong: _ENV[1 < 2] indexes the
-- wrong value. Wrong code, no memory corruption observed.
local t = { [true] = 10, [false] = 20 }
local function aux(x, y) return t[x < y] end
assert(aux(1, 2) == 10 and aux(2, 1) == 20, "comparison used as index gave a wrong result")
local f = assert(load("local _ENV = ...; return _ENV[1 < 2]"))
assert(f({ [true] = 10 }) == 10, "_ENV[1 < 2] gave a wrong result")
print("ok")
