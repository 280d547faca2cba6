-- Tests for keyhost.inspect. Run: LUA_PATH='stdlib/?.lua;;' lua5.4 Tests/lua/inspect_test.lua
local t = require "keyhost.test"
local inspect = require "keyhost.inspect"

t.test("module is callable and has inspect.inspect", function()
  t.eq(inspect(1), "1")
  t.eq(inspect.inspect(1), "1")
  t.eq(type(inspect.values), "function")
end)

t.test("scalars", function()
  t.eq(inspect(nil), "nil")
  t.eq(inspect(true), "true")
  t.eq(inspect(false), "false")
  t.eq(inspect(0), "0")
  t.eq(inspect(-42), "-42")
  t.eq(inspect(math.maxinteger), "9223372036854775807")
  t.eq(inspect(math.mininteger), "math.mininteger")
end)

t.test("floats stay distinct from integers", function()
  t.eq(inspect(1.0), "1.0")
  t.eq(inspect(-0.0), "-0.0")
  t.eq(inspect(0.1), "0.1")
  t.eq(inspect(1 / 3), "0.3333333333333333")
  t.eq(inspect(1e100), "1e+100")
  t.eq(inspect(2 ^ 63), "9.223372036854776e+18")
  t.eq(inspect(math.huge), "math.huge")
  t.eq(inspect(-math.huge), "-math.huge")
  t.eq(inspect(0 / 0), "0/0")
  -- every finite float prints as something that reads back exactly
  math.randomseed(7)
  for _ = 1, 500 do
    local x = (math.random() - 0.5) * 10 ^ math.random(-300, 300)
    local s = inspect(x)
    t.eq(load("return " .. s)(), x, s)
    t.eq(math.type(load("return " .. s)()), "float", s)
  end
end)

t.test("strings are quoted and escaped", function()
  t.eq(inspect("abc"), '"abc"')
  t.eq(inspect(""), '""')
  t.eq(inspect('a"b\\c'), '"a\\"b\\\\c"')
  t.eq(inspect("line\nnext\ttab\r"), '"line\\nnext\\ttab\\r"')
  t.eq(inspect("\0\1\31\127", { bytes = false }), '"\\x00\\x01\\x1f\\x7f"')
  t.eq(inspect("\255\128\1", { bytes = false }), '"\\xff\\x80\\x01"', "invalid UTF-8 bytes escaped")
  t.eq(inspect("héllo π 😀"), '"héllo π 😀"', "valid UTF-8 kept")
  t.eq(inspect("h\xc3", { bytes = false }), '"h\\xc3"', "truncated sequence escaped")
  t.eq(inspect("\xed\xa0\x80", { bytes = false }), '"\\xed\\xa0\\x80"', "encoded surrogate escaped")
  t.eq(inspect("\xc0\xaf", { bytes = false }), '"\\xc0\\xaf"', "overlong form escaped")
  t.eq(inspect("a\u{85}b\u{2028}"), '"a\\u{85}b\\u{2028}"', "invisible code points escaped")
  t.eq(inspect("héllo", { ascii = true }), '"h\\xc3\\xa9llo"')
end)

t.test("bytes show as <N bytes hex…> by default, in full when asked", function()
  -- SHA-256("abc") (FIPS 180-2)
  local digest = ("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"):gsub("..", function(h) return string.char(tonumber(h, 16)) end)
  t.eq(inspect(digest), "<32 bytes ba7816bf…>")
  t.eq(inspect(digest, { bytes = "full" }), "<32 bytes ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad>")
  t.eq(inspect("\1"), "<1 byte 01>")
  t.eq(inspect({ sig = "\0\255", text = "tab\there" }), '{sig = <2 bytes 00ff>, text = "tab\\there"}')
  t.eq(inspect({ ["\255"] = 1 }), "{[<1 byte ff>] = 1}")
  t.eq(inspect("héllo π"), '"héllo π"', "text stays text")
  t.eq(select(2, pcall(inspect, "x", { bytes = "hex" })):match("opts.bytes must be"), "opts.bytes must be")
end)

t.test("quoted strings read back as the same bytes", function()
  math.randomseed(11)
  for _ = 1, 300 do
    local b = {}
    for i = 1, math.random(0, 20) do b[i] = string.char(math.random(0, 255)) end
    local s = table.concat(b)
    if math.random() < 0.3 then s = s .. "é😀" end
    t.eq(load("return " .. inspect(s, { bytes = false }))(), s)
  end
end)

t.test("sequences print as lists", function()
  t.eq(inspect({}), "{}")
  t.eq(inspect({ 1, 2, 3 }), "{1, 2, 3}")
  t.eq(inspect({ "a", { "b" } }), '{"a", {"b"}}')
  t.eq(inspect({ 1, 2, nil, 4 }), "{1, 2, [4] = 4}")
  t.eq(inspect({ [2] = "x" }), '{[2] = "x"}')
end)

t.test("keys: identifiers bare, others bracketed, sorted by type then value", function()
  t.eq(inspect({ b = 1, a = 2 }), "{a = 2, b = 1}")
  t.eq(inspect({ ["key with space"] = 1 }), '{["key with space"] = 1}')
  t.eq(inspect({ ["end"] = 1, _x1 = 2 }), '{_x1 = 2, ["end"] = 1}')
  t.eq(inspect({ ["1a"] = 1 }), '{["1a"] = 1}')
  t.eq(inspect({ [true] = 1, [false] = 0 }), "{[false] = 0, [true] = 1}")
  t.eq(inspect({ "x", "y", z = 1, [10] = 2, [1.5] = 3, [-1] = 4, [true] = 5, B = 6 }),
    '{"x", "y", [-1] = 4, [1.5] = 3, [10] = 2, B = 6, z = 1, [true] = 5}')
  t.eq(inspect({ [math.huge] = 1 }), "{[math.huge] = 1}")
  t.eq(inspect({ ["a\nb"] = 1 }), '{["a\\nb"] = 1}')
end)

t.test("tables as keys", function()
  t.eq(inspect({ [{ 1 }] = 2 }), "{[{1}] = 2}")
end)

t.test("output is deterministic", function()
  local v = {}
  for i = 1, 50 do v["k" .. i] = i; v[i * 3] = i end
  local first = inspect(v)
  for _ = 1, 5 do
    local copy = {}
    for k, x in pairs(v) do copy[k] = x end
    t.eq(inspect(copy), first)
  end
end)

t.test("functions, threads and userdata are numbered", function()
  local f, g = function() end, function() end
  t.eq(inspect({ f, g, f }), "{<function 1>, <function 2>, <function 1>}")
  t.eq(inspect(coroutine.create(f)), "<thread 1>")
  t.eq(inspect.values(f, g), "<function 1>\t<function 1>", "each value numbered separately")
end)

t.test("__tostring is used for tables and userdata", function()
  local obj = setmetatable({}, { __tostring = function() return "Point(1, 2)" end })
  t.eq(inspect(obj), "Point(1, 2)")
  t.eq(inspect({ p = obj }), "{p = Point(1, 2)}")
  t.ok(inspect(io.stdout):find("^file %("), "userdata with __tostring")
end)

t.test("a failing __tostring never raises", function()
  local bad = setmetatable({}, { __tostring = function() error("boom", 0) end })
  t.eq(inspect(bad), "<error in __tostring: boom>")
  local wrong = setmetatable({}, { __tostring = function() return {} end })
  t.ok(inspect(wrong):find("^<error in __tostring: "), inspect(wrong))
  local tbl_err = setmetatable({}, { __tostring = function() error({}) end })
  t.ok(inspect(tbl_err):find("^<error in __tostring: "))
end)

t.test("metamethods are not triggered", function()
  local trap = function() error("metamethod called") end
  local v = setmetatable({ a = 1, 10 }, { __index = trap, __pairs = trap, __len = trap, __eq = trap, __newindex = trap })
  t.eq(inspect(v), "{10, a = 1}")
  local protected = setmetatable({ x = 1 }, { __metatable = "locked", __index = trap })
  t.eq(inspect(protected), "{x = 1}")
end)

t.test("metatables shown with opts.metatables", function()
  local mt = { __index = { y = 2 } }
  local v = setmetatable({ x = 1 }, mt)
  t.eq(inspect(v), "{x = 1}")
  t.eq(inspect(v, { metatables = true }), "{x = 1, <metatable> = {__index = {y = 2}}}")
  t.eq(inspect(setmetatable({}, mt), { metatables = true }), "{<metatable> = {__index = {y = 2}}}")
  local a, b = setmetatable({}, mt), setmetatable({}, mt)
  t.eq(inspect({ a, b }, { metatables = true }),
    "{{<metatable> = <table 1>{__index = {y = 2}}}, {<metatable> = <table 1>}}")
end)

t.test("cycles and shared references", function()
  local a = { name = "a" }
  a.self = a
  t.eq(inspect(a), '<table 1>{name = "a", self = <cycle 1>}')
  local shared = { 1 }
  t.eq(inspect({ shared, shared }), "{<table 1>{1}, <table 1>}")
  local e = {}
  t.eq(inspect({ x = e, y = e }), "{x = <table 1>{}, y = <table 1>}")
  local p, c = {}, {}
  p.child, c.parent = c, p
  t.eq(inspect(p), "<table 1>{child = {parent = <cycle 1>}}")
  -- a table referenced by a sibling after it was closed is shared, not a cycle
  local root = { a = p, b = c }
  t.eq(inspect(root), "{a = <table 1>{child = <table 2>{parent = <cycle 1>}}, b = <table 2>}")
  -- a table used as a key and as a value
  local k = { 1 }
  t.eq(inspect({ [k] = k }), "{[<table 1>{1}] = <table 1>}")
end)

t.test("depth limit", function()
  local v = { a = { b = { c = { d = 1 } } }, x = 1 }
  t.eq(inspect(v, { depth = 0 }), "{...}")
  t.eq(inspect(v, { depth = 1 }), "{a = {...}, x = 1}")
  t.eq(inspect(v, { depth = 2 }), "{a = {b = {...}}, x = 1}")
  t.eq(inspect(v, { depth = 10 }), "{a = {b = {c = {d = 1}}}, x = 1}")
  t.eq(inspect({ {} }, { depth = 1 }), "{{}}", "empty tables print as {} at the limit")
  local cyc = {}
  cyc[1] = cyc
  t.eq(inspect(cyc, { depth = 1 }), "<table 1>{<cycle 1>}")
end)

t.test("very deep nesting never raises", function()
  local deep = {}
  local c = deep
  for _ = 1, 300000 do c[1] = {}; c = c[1] end
  local s = inspect(deep)
  t.ok(s:find("^<error in inspect: ") or s:find("^{{{"), s:sub(1, 80))
  t.eq(inspect(deep, { depth = 3 }), "{{{{...}}}}")
end)

t.test("multi-line layout when wider than opts.width", function()
  local v = { alpha = string.rep("a", 30), beta = string.rep("b", 30), list = { 1, 2, 3 } }
  t.eq(inspect(v),
    '{\n  alpha = "' .. string.rep("a", 30) .. '",\n  beta = "' .. string.rep("b", 30) .. '",\n  list = {1, 2, 3}\n}')
  t.eq(inspect(v, { indent = 4 }),
    '{\n    alpha = "' .. string.rep("a", 30) .. '",\n    beta = "' .. string.rep("b", 30) .. '",\n    list = {1, 2, 3}\n}')
  t.eq(inspect(v, { indent = "\t" }),
    '{\n\talpha = "' .. string.rep("a", 30) .. '",\n\tbeta = "' .. string.rep("b", 30) .. '",\n\tlist = {1, 2, 3}\n}')
  t.eq(inspect({ 1, 2, 3 }, { width = 8 }), "{\n  1,\n  2,\n  3\n}")
  t.eq(inspect({ 1, 2, 3 }, { width = 9 }), "{1, 2, 3}", "exactly fitting stays on one line")
  t.eq(inspect({ a = { 1, 2 }, b = { 3, 4 } }, { width = 16 }), "{\n  a = {1, 2},\n  b = {3, 4}\n}")
  t.eq(inspect({ a = { 1, 2 }, b = { 3, 4 } }, { width = math.huge }), "{a = {1, 2}, b = {3, 4}}")
end)

t.test("nested multi-line output is indented per level", function()
  local long = string.rep("x", 70)
  t.eq(inspect({ outer = { inner = { long } } }),
    '{\n  outer = {\n    inner = {\n      "' .. long .. '"\n    }\n  }\n}')
end)

t.test("every line respects the width when it can", function()
  local v = {}
  for i = 1, 40 do v[i] = { id = i, name = "item " .. i, tags = { "a", "b" } } end
  for line in inspect(v, { width = 40 }):gmatch("[^\n]+") do
    t.ok(#line <= 40, "line too long: " .. line)
  end
end)

t.test("inspect.values joins with tabs", function()
  t.eq(inspect.values(), "")
  t.eq(inspect.values(nil), "nil")
  t.eq(inspect.values(1, "a", nil, { 2 }), '1\t"a"\tnil\t{2}')
  t.eq(inspect.values(nil, nil), "nil\tnil")
end)

t.test("bad options are argument errors", function()
  t.raises(function() inspect(1, 5) end, t.plain("bad argument #2 to 'inspect' (table expected, got number)"))
  t.raises(function() inspect(1, { depth = "x" }) end, "opts.depth must be a number")
  t.raises(function() inspect(1, { indent = {} }) end, "opts.indent must be")
  t.raises(function() inspect(1, { width = "x" }) end, "opts.width must be a number")
end)

t.test("module creates no globals", function()
  t.eq(rawget(_G, "inspect"), nil)
end)

t.run()
