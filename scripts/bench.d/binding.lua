-- Cost of one call to a keyhost binding vs a plain C function in the same Lua state.
-- Run as: KEYHOST_BENCH=1 keyhost run binding.lua [calls] [repetitions] (the variable registers keyhost.bench)
-- Prints "swift_ns=<median> c_ns=<median>": ns per call net of an empty loop, median over repetitions.
local bench = require "keyhost.bench"
local add, c_add = bench.add, bench.c_add
assert(add(2, 3) == 5 and c_add(2, 3) == 5)
local clock = os.clock
local n = tonumber(arg and arg[1]) or 3000000
local reps = tonumber(arg and arg[2]) or 7

local function empty_loop()
  local t = clock()
  for i = 1, n do end
  return clock() - t
end

local function call_loop(f)  -- f is a local here, so the loop body is MOVE, LOADI, CALL
  local t = clock()
  for i = 1, n do f(i, 1) end
  return clock() - t
end

local function median(xs)
  table.sort(xs)
  local m = #xs // 2
  return #xs % 2 == 1 and xs[m + 1] or (xs[m] + xs[m + 1]) / 2
end

call_loop(add); call_loop(c_add)  -- warm up
local swift, c = {}, {}
for r = 1, reps do  -- interleaved, so load drift affects both alike
  local e = empty_loop()
  swift[r] = (call_loop(add) - e) / n * 1e9
  c[r] = (call_loop(c_add) - e) / n * 1e9
end
print(string.format("swift_ns=%.1f c_ns=%.1f", median(swift), median(c)))
