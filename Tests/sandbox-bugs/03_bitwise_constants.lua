-- Lua 5.4.4 bug 3: lcode.c codebitwise() used luaK_exp2RK, so with more than
-- 256 constants in a function a bitwise operand could be coded as a register
-- instead of a constant: silent wrong results, no memory corruption.
local head = { "local x = {" }
for i = 1, 257 do head[#head + 1] = i .. ".1," end
head[#head + 1] = "};"
head = table.concat(head)
local function check(expr, expected)
  local f = assert(load(head .. "return " .. expr))
  local got = f()
  assert(got == expected, expr .. " gave " .. tostring(got) .. ", expected " .. tostring(expected))
end
check("(1 ~ (2 or 3))", 1 ~ 2)
check("(1 | (2 or 3))", 1 | 2)
check("(1 + (2 or 3))", 1 + 2)
check("(1 << (2 or 3))", 1 << 2)
print("ok")
