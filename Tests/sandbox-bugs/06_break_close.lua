-- Lua 5.4.4 bug 6: lparser.c leaveblock() created the loop's "break" label
-- before removing the block's variables, so a 'break' out of a generic 'for'
-- whose body captures an upvalue closed at the wrong level: the closing value
-- (4th value of the generic for) was not closed. Wrong behaviour, not memory.
local closed = false
local o1 = setmetatable({}, { __close = function() closed = true end })
local function test()
  for k in next, {}, nil, o1 do
    local function f() return k end -- creates an upvalue
    break
  end
  return closed
end
-- an empty table: the loop body never runs, the closing value must be closed anyway
assert(test() == true, "for-loop closing value was not closed")
closed = false
local function test2()
  for k in next, { 1, 2 }, nil, o1 do
    local function f() return k end
    break
  end
  return closed
end
assert(test2() == true, "for-loop closing value was not closed after break")
print("ok")
