-- Tests for keyhost.json. Run: LUA_PATH='stdlib/?.lua;;' lua5.4 Tests/lua/json_test.lua
-- (or ./.build/debug/keyhost run Tests/lua/json_test.lua). The fixtures under
-- fixtures/json/ come from Python's json module (see fixtures/json/make.py).
local t = require "keyhost.test"
local json = require "keyhost.json"

local plain = t.plain

-- The directory this file is in, to find the fixtures.
local here = (debug.getinfo(1, "S").source:match("^@(.*[/\\])")) or "./"

-- The message of the error fn raises, without the "json_test.lua:N: " prefix
-- (which must be there: errors are raised at the caller's level).
local function err_of(fn)
  local ok, e = pcall(fn)
  t.ok(not ok, "expected an error, but none was raised")
  e = tostring(e)
  local rest = e:match("^[^\n]-json_test%.lua:%d+: (.*)$")
  t.ok(rest, "the error names the caller's location: " .. e)
  return rest
end

-- (not tail calls, so that the caller's frame exists for the error location)
local function derr(doc, opts) return err_of(function() local v = json.decode(doc, opts); return v end) end
local function eerr(v, opts) return err_of(function() local s = json.encode(v, opts); return s end) end

local function tohex(s)
  return (s:gsub(".", function(c) return string.format("%02x", c:byte()) end))
end

local function fromhex(h)
  return (h:gsub("%x%x", function(x) return string.char(tonumber(x, 16)) end))
end

local function read_file(path)
  local f = assert(io.open(path, "rb"))
  local data = f:read("a")
  f:close()
  return data
end

-- Deterministic pseudo-random numbers (64-bit LCG, wraps around).
local function rng(seed)
  local x = seed
  return function(n)
    x = x * 6364136223846793005 + 1442695040888963407
    local r = (x >> 33)
    if n then return r % n end
    return r
  end
end

---------------------------------------------------------------------------
-- The null sentinel, markers and constructors

t.test("null: a sentinel that prints as null", function()
  t.eq(tostring(json.null), "null")
  t.ok(json.decode("null") == json.null, "null decodes to json.null")
  t.ok(rawequal(json.decode("[null]")[1], json.null))
  t.eq(json.encode(json.null), "null")
  t.eq(json.encode(nil), "null")
  t.eq(json.encode({ json.null, 1 }), "[null,1]")
  t.raises(function() json.null.x = 1 end, "read%-only")
  t.eq(next(json.null), nil)
end)

t.test("decode options: null, null_as_nil, metatables", function()
  t.eq(json.decode("[1,null,2]", { null = false }), { 1, false, 2 })
  local v = json.decode('{"a":null,"b":1}', { null_as_nil = true })
  t.eq(v, { b = 1 })
  local a = json.decode("[null,2]", { null_as_nil = true })
  t.eq(a[1], nil)
  t.eq(a[2], 2)
  local p = json.decode('{"a":[]}', { metatables = false })
  t.eq(getmetatable(p), nil)
  t.eq(getmetatable(p.a), nil)
  t.eq(p, { a = {} })
end)

t.test("decoded arrays and objects carry marker metatables; [] and {} survive", function()
  local v = json.decode('{"a":[],"o":{},"n":[[],{}]}')
  t.ok(getmetatable(v) == json.object_mt, "top level is an object")
  t.ok(getmetatable(v.a) == json.array_mt, "a is an array")
  t.ok(getmetatable(v.o) == json.object_mt, "o is an object")
  t.ok(getmetatable(v.n[1]) == json.array_mt)
  t.ok(getmetatable(v.n[2]) == json.object_mt)
  t.eq(json.encode(v), '{"a":[],"n":[[],{}],"o":{}}')
  t.eq(json.encode(json.decode("[]")), "[]")
  t.eq(json.encode(json.decode("{}")), "{}")
  t.eq(json.encode(json.decode('{"1":"a","2":"b"}')), '{"1":"a","2":"b"}', "an object with integer-like keys stays an object")
end)

t.test("json.array and json.object", function()
  local a = json.array()
  t.ok(getmetatable(a) == json.array_mt)
  t.eq(json.encode(a), "[]")
  t.eq(json.encode(json.object()), "{}")
  t.eq(json.encode({}), "{}", "a plain empty table is an object")
  local src = { 1, 2 }
  t.ok(rawequal(json.array(src), src), "marks the table in place")
  t.eq(json.encode(src), "[1,2]")
  t.eq(json.encode(json.object({ 1, 2 })), '{"1":1,"2":2}')
  t.eq(json.encode(json.array({ 1, nil, 3 })), "[1,null,3]", "holes in a marked array are null")
  t.eq(json.encode(json.array({ [2] = "x" })), '[null,"x"]')
  t.eq(json.encode(json.object({ a = json.array() })), '{"a":[]}')
  t.ok(rawequal(json.array(json.array(src)), src), "marking twice is fine")
  t.raises(function() json.array(setmetatable({}, {})) end, plain("json.array: the table already has a metatable"))
  t.raises(function() json.object(json.array()) end, plain("json.object: the table already has a metatable"))
  t.raises(function() json.array(5) end, plain("bad argument #1 to 'array' (table expected, got number)"))
  t.raises(function() json.object("x") end, plain("bad argument #1 to 'object' (table expected, got string)"))
end)

---------------------------------------------------------------------------
-- Decoding scalars and numbers

t.test("decode: RFC 8259 scalars at the top level and whitespace", function()
  t.eq(json.decode("true"), true)
  t.eq(json.decode("false"), false)
  t.eq(json.decode("42"), 42)
  t.eq(json.decode('"x"'), "x")
  t.eq(json.decode(" \t\r\n 7 \t\r\n "), 7)
  t.eq(json.decode(' \t\r\n{ "a" :\t[ 1 ,\r\n2 ] ,\n"b":{\r\n}\t}\r\n'), { a = { 1, 2 }, b = {} })
  t.eq(json.decode('{"a":1,"a":2}'), { a = 2 }, "duplicate keys: the last wins")
  t.eq(json.decode('{"":0}'), { [""] = 0 })
  t.eq(json.decode('{"a\\u0000b":1}'), { ["a\0b"] = 1 })
end)

t.test("decode: integers vs floats (math.type)", function()
  local cases = {
    { "0", 0, "integer" }, { "-0", 0, "integer" }, { "1", 1, "integer" }, { "-123", -123, "integer" },
    { "9223372036854775807", math.maxinteger, "integer" },
    { "-9223372036854775808", math.mininteger, "integer" },
    { "1.0", 1.0, "float" }, { "-0.0", -0.0, "float" }, { "0.5", 0.5, "float" },
    { "1e2", 100.0, "float" }, { "1E2", 100.0, "float" }, { "1e+2", 100.0, "float" }, { "1e-2", 0.01, "float" },
    { "20e1", 200.0, "float" }, { "0e1", 0.0, "float" }, { "123.456e78", 123.456e78, "float" },
    { "0.1", 0.1, "float" }, { "5e-324", 5e-324, "float" }, { "2.2250738585072014e-308", 2.2250738585072014e-308, "float" },
    { "1.7976931348623157e308", 1.7976931348623157e308, "float" }, { "1e-400", 0.0, "float" },
    { "9007199254740993", 9007199254740993, "integer" }, { "9223372036854775807.0", 9223372036854775807.0, "float" },
  }
  for _, c in ipairs(cases) do
    local v = json.decode(c[1])
    t.eq(math.type(v), c[3], c[1])
    t.eq(v, c[2], c[1])
  end
  t.eq(1 / json.decode("-0.0"), -math.huge, "negative zero keeps its sign")
  t.eq(1 / json.decode("-1e-400"), -math.huge)
  t.eq(1 / json.decode("0.0"), math.huge)
end)

t.test("decode: integers outside int64 stay exact as json.number", function()
  local function big(text)
    local v = json.decode(text)
    t.ok(json.is_number(v), text .. " is a json.number")
    t.eq(v.text, text)
    t.eq(tostring(v), text)
    return v
  end
  big("9223372036854775808")
  big("-9223372036854775809")
  big("18446744073709551616")
  big("123456789012345678901234567890")
  big(string.rep("9", 400))
  local doc = '{"id":123456789012345678901234567890,"ids":[-98765432109876543210,1],"x":1e400,"y":-2E+999}'
  local v = json.decode(doc)
  t.eq(json.encode(v), doc, "re-encoded verbatim")
  t.ok(v.id == json.number("123456789012345678901234567890"), "__eq compares the text")
  t.ok(v.id ~= json.number("123456789012345678901234567891"))
  t.ok(json.is_number(v.x) and v.x.text == "1e400", "a float overflowing to inf is kept exact")
  t.eq(v.y.text, "-2E+999")
  t.eq(math.type(v.ids[2]), "integer")
end)

t.test("json.number constructor", function()
  t.eq(json.number("12345678901234567890").text, "12345678901234567890")
  t.eq(json.encode({ json.number("1e400"), json.number("-0"), json.number("1.50") }), "[1e400,-0,1.50]")
  t.eq(json.number(5).text, "5")
  t.eq(json.number(math.mininteger).text, "-9223372036854775808")
  t.eq(json.number(0.1).text, "0.1")
  t.eq(json.number(2.0).text, "2.0")
  t.eq("n=" .. json.number("7") .. "!", "n=7!")
  t.ok(json.number("1") == json.number("1"))
  t.ok(json.number("1") ~= json.number("1.0"), "different literals are different")
  t.eq(json.is_number(json.number("3")), true)
  t.eq(json.is_number(3), false)
  t.eq(json.is_number({ text = "3" }), false)
  for _, ok in ipairs({ "0", "-0", "1.5e-3", "1E+2", "-12.0", "0.0", "1e400" }) do
    t.eq(json.number(ok).text, ok)
  end
  for _, bad in ipairs({ "", "abc", "01", "-01", "1.", ".5", "+1", "1e", "1e+", "0x10", " 1", "1 ", "NaN", "Infinity", "-", "1.e5", "--1" }) do
    t.raises(function() json.number(bad) end, "is not a JSON number literal", bad)
  end
  t.raises(function() json.number(0 / 0) end, "cannot be written as JSON")
  t.raises(function() json.number(math.huge) end, "cannot be written as JSON")
  t.raises(function() json.number() end, plain("bad argument #1 to 'number' (string expected, got no value)"))
  t.raises(function() json.number({}) end, plain("bad argument #1 to 'number' (string expected, got table)"))
end)

---------------------------------------------------------------------------
-- Decoding strings

t.test("decode: every escape", function()
  t.eq(json.decode([["\"\\\/\b\f\n\r\t"]]), "\"\\/\b\f\n\r\t")
  t.eq(json.decode([["a\/b"]]), "a/b")
  t.eq(json.decode([["\\u0000"]]), "\\u0000")
  t.eq(json.decode([["\u0041\u00e9\u00E9\u20AC\u4e2d\uffff"]]), "A\195\169\195\169\226\130\172\228\184\173\239\191\191")
  t.eq(json.decode([["\u0000\u001f\u007f"]]), "\0\31\127")
  t.eq(json.decode('"\127"'), "\127", "DEL need not be escaped")
  t.eq(json.decode('"/*a*/ //b"'), "/*a*/ //b")
end)

t.test("decode: surrogate pairs become 4-byte UTF-8", function()
  t.eq(json.decode([["\uD83D\uDE00"]]), "\240\159\152\128")
  t.eq(json.decode([["\ud83d\ude00"]]), "\240\159\152\128")
  t.eq(json.decode([["\uD800\uDC00"]]), "\240\144\128\128", "U+10000")
  t.eq(json.decode([["\uDBFF\uDFFF"]]), "\244\143\191\191", "U+10FFFF")
  t.eq(json.decode([["\uD834\uDd1e"]]), "\240\157\132\158", "mixed case")
  t.eq(json.decode([["x\uD83D\uDE39\uD83D\uDC8Dy"]]), "x\240\159\152\185\240\159\146\141y")
end)

t.test("decode: lone surrogates are errors", function()
  local docs = {
    [["\uD800"]], [["\uD800x"]], [["\uD800\u0041"]], [["\uD800\uD800"]], [["\uDBFF"]],
    [["\uDC00"]], [["\uDFFF\uD800"]], [["a\uDE00b"]], [["\uD800\n"]], [["\uD83D\uDE0"]],
  }
  for _, doc in ipairs(docs) do
    t.ok(derr(doc):find("lone surrogate", 1, true), doc)
  end
  t.eq(derr([["ab\uD800"]]),
    "json.decode: line 1, column 4 (byte 4): lone surrogate \\uD800: a high surrogate must be followed by a \\uDC00-\\uDFFF low surrogate")
  t.eq(derr([["\udc12"]]),
    "json.decode: line 1, column 2 (byte 2): lone surrogate \\udc12: a low surrogate must follow a high surrogate")
end)

t.test("decode: bad escapes and control characters", function()
  for _, doc in ipairs({ [["\x41"]], [["\a"]], [["\U0041"]], [["\'"]], [["\0"]], '"\\ "', '"\\\1"' }) do
    t.ok(derr(doc):find("invalid escape", 1, true), doc)
  end
  for _, doc in ipairs({ [["\u12"]], [["\u12G4"]], [["\u"]], [["\u-123"]] }) do
    t.ok(derr(doc):find("expected 4 hex digits", 1, true), doc)
  end
  for i = 0, 31 do
    local msg = derr('["a' .. string.char(i) .. 'b"]')
    t.eq(msg, string.format("json.decode: line 1, column 4 (byte 4): unescaped control character U+%04X in string; write it as \\u%04x", i, i))
  end
  t.eq(derr('"abc'), "json.decode: line 1, column 1 (byte 1): string is never closed (missing '\"')")
  t.eq(derr('"abc\\"'), "json.decode: line 1, column 1 (byte 1): string is never closed (missing '\"')")
  t.eq(derr('"abc\\'), "json.decode: line 1, column 1 (byte 1): string is never closed (missing '\"')")
end)

t.test("decode: invalid UTF-8 is rejected by default", function()
  local bad = {
    { "\128", "lone continuation byte" }, { "\192\175", "overlong '/'" }, { "\224\128\175", "overlong 3-byte" },
    { "\237\160\128", "UTF-8 encoded surrogate" }, { "\244\144\128\128", "above U+10FFFF" },
    { "\248\136\128\128\128", "5-byte form" }, { "\226\130", "truncated" }, { "\255", "0xff" }, { "\254", "0xfe" },
    { "\195", "truncated at the end" },
  }
  for _, c in ipairs(bad) do
    t.ok(derr('["ab' .. c[1] .. '"]'):find("invalid UTF-8", 1, true), c[2])
    t.ok(derr('[1]' .. c[1]):find("invalid UTF-8", 1, true), c[2] .. " (outside a string)")
  end
  t.eq(derr('["ab\255"]'),
    "json.decode: line 1, column 5 (byte 5): invalid UTF-8 (byte 0xff); JSON text must be UTF-8 (pass opts.allow_invalid_utf8 to accept raw bytes)")
  t.eq(json.decode('["ab\255", "\192\175"]', { allow_invalid_utf8 = true }), { "ab\255", "\192\175" })
  t.eq(json.decode('"\244\143\191\191\240\144\128\128"'), "\244\143\191\191\240\144\128\128", "valid 4-byte sequences pass")
end)

---------------------------------------------------------------------------
-- Rejected documents (JSONTestSuite n_ style)

t.test("decode: JSONTestSuite-style n_ documents are rejected", function()
  local docs = {
    -- structure
    "", " ", "[", "]", "{", "}", "[[]", "[]]", '{"a":1}}', "[1,]", "[,1]", "[1,,2]", "[,]", '{"a":1,}', "{,}",
    '{"a"}', '{"a":}', '{"a" 1}', "{a:1}", "{'a':1}", '{"a":1 "b":2}', '{"a":1;"b":2}', "[1] [2]", '["a" "b"]',
    "[true false]", "[1 2]", '{"a":1}x', "[1]x", "1 2", '"a" "b"', "[1:2]", '{"a"::1}', '{1:1}', '{null:1}',
    '{"a":1,"a"}', "[}", "{]", '["a",]', "[\"\\", "[\"a\\\"]",
    -- literals
    "tru", "nul", "fals", "True", "NULL", "[nulll]", "[truee]", "undefined", "[NaN]", "[Infinity]", "[-Infinity]",
    "nan", "inf", "'a'", "['a']",
    -- numbers
    "01", "-01", "00", "[01]", "[-012]", "1.", "[1.]", ".1", "[.1]", "+1", "[+1]", "1e", "1e+", "1E-", "1.e1",
    "2.e3", "0.e1", "1ee2", "1e1.5", "0x10", "0x1F", "-", "--1", "- 1", "1.5.3", "[1.2a]", "[-]", "[1e+-2]",
    "[0.1.2]", "[\"x\"1]", "1_000", "١",
    -- comments and extra characters
    "/* c */ []", "[] // c", "[1] /**/", "#[]",
    -- byte order mark, NUL and unusual whitespace
    "\239\187\191[]", "[1]\0", "\0", "[\12]", "[\11 1]", "[\194\160]", "[\226\128\168 1]",
    -- strings
    '["\\x00"]', '["\\u00"]', '["\\uqqqq"]', '["a\tb"]', '["\n"]', '"\\', '"',
  }
  for _, doc in ipairs(docs) do
    local ok, e = pcall(json.decode, doc)
    t.ok(not ok, "should be rejected: " .. string.format("%q", doc))
    t.ok(tostring(e):find("json.decode: ", 1, true), "decode error for " .. string.format("%q", doc) .. ": " .. tostring(e))
  end
end)

t.test("decode: specific rejection messages", function()
  t.eq(derr("[1,2,]"), "json.decode: line 1, column 6 (byte 6): trailing comma before ']'")
  t.eq(derr('{"a":1,}'), "json.decode: line 1, column 8 (byte 8): trailing comma before '}'")
  t.eq(derr("[01]"), "json.decode: line 1, column 2 (byte 2): leading zeros are not allowed in numbers")
  t.eq(derr("-012"), "json.decode: line 1, column 1 (byte 1): leading zeros are not allowed in numbers")
  t.eq(derr('{"a":1} {"b":2}'),
    "json.decode: line 1, column 9 (byte 9): unexpected '{' after the JSON value; only whitespace may follow it")
  t.eq(derr("[1]x"), "json.decode: line 1, column 4 (byte 4): unexpected 'x' after the JSON value; only whitespace may follow it")
  t.eq(derr(""), "json.decode: line 1, column 1 (byte 1): expected a JSON value, got end of input")
  t.eq(derr("   "), "json.decode: line 1, column 4 (byte 4): expected a JSON value, got end of input")
  t.eq(derr("[1,2"), "json.decode: line 1, column 5 (byte 5): expected ',' or ']' after array element, got end of input")
  t.eq(derr('{"a" 1}'), "json.decode: line 1, column 6 (byte 6): expected ':' after object key, got '1'")
  t.eq(derr("{a:1}"), "json.decode: line 1, column 2 (byte 2): expected a string key in object, got 'a'")
  t.eq(derr("['a']"), "json.decode: line 1, column 2 (byte 2): expected a JSON value, got a single quote (JSON strings use double quotes)")
  t.eq(derr("[NaN]"), "json.decode: line 1, column 2 (byte 2): expected a JSON value, got 'NaN'")
  t.eq(derr("[1.]"), "json.decode: line 1, column 4 (byte 4): expected a digit after the decimal point, got ']'")
  t.eq(derr("[1e]"), "json.decode: line 1, column 4 (byte 4): expected digits in the exponent, got ']'")
  t.eq(derr("[-x]"), "json.decode: line 1, column 3 (byte 3): expected a digit after '-', got 'x'")
  t.eq(derr("\239\187\191{}"), "json.decode: line 1, column 1 (byte 1): input starts with a UTF-8 byte order mark; remove it before decoding")
  t.eq(derr("[\1]"), "json.decode: line 1, column 2 (byte 2): expected a JSON value, got control character U+0001")
  t.eq(derr('"\\q"'):match("invalid escape '\\q'"), "invalid escape '\\q'")
end)

t.test("decode: error positions name line, column and byte exactly", function()
  -- the example from the documentation: line 3, column 7, byte 42
  local doc = '{"first": 1234567890,\n  "b": null,\n"c":12x}'
  t.eq(#'{"first": 1234567890,\n  "b": null,\n', 35)
  t.eq(derr(doc), "json.decode: line 3, column 7 (byte 42): expected ',' or '}' after object member, got 'x'")
  -- columns count characters, bytes count bytes
  t.eq(derr('["\195\169", x]'), "json.decode: line 1, column 7 (byte 8): expected a JSON value, got 'x'")
  t.eq(derr('["\240\159\152\128\240\159\152\128"]]'),
    "json.decode: line 1, column 7 (byte 13): unexpected ']' after the JSON value; only whitespace may follow it")
  -- CRLF: the \r belongs to the previous line
  t.eq(derr("[1,\r\n2,\r\n x]"), "json.decode: line 3, column 2 (byte 11): expected a JSON value, got 'x'")
  -- a newline right before the error
  t.eq(derr("[\n\n\n}"), "json.decode: line 4, column 1 (byte 5): expected a JSON value, got '}'")
  -- an error inside a string on a later line
  t.eq(derr('{\n "k": "a\\qb"\n}'):match("^json.decode: line 2, column 9 %(byte 11%): invalid escape"),
    "json.decode: line 2, column 9 (byte 11): invalid escape")
  t.eq(derr('[\n  "x",\n  tru\n]'), "json.decode: line 3, column 3 (byte 12): expected a JSON value, got 'tru'")
  -- long words are shortened
  t.eq(derr("[abcdefghijklmnopqrstuvwxyz]"),
    "json.decode: line 1, column 2 (byte 2): expected a JSON value, got 'abcdefghijklmnop...'")
end)

t.test("decode: errors are raised at the caller's level", function()
  t.raises(function() json.decode("[") end, "json_test%.lua:%d+: json%.decode: line 1")
  t.raises(function() json.encode(print) end, "json_test%.lua:%d+: json%.encode: value at %$")
  t.raises(function() json.decode(nil) end, "json_test%.lua:%d+: bad argument #1 to 'decode'")
end)

t.test("argument errors use Lua's wording", function()
  t.raises(function() json.decode() end, plain("bad argument #1 to 'decode' (string expected, got no value)"))
  t.raises(function() json.decode(nil) end, plain("bad argument #1 to 'decode' (string expected, got nil)"))
  t.raises(function() json.decode({}) end, plain("bad argument #1 to 'decode' (string expected, got table)"))
  t.raises(function() json.decode("1", 5) end, plain("bad argument #2 to 'decode' (table expected, got number)"))
  t.raises(function() json.encode() end, plain("bad argument #1 to 'encode' (value expected)"))
  t.raises(function() json.encode(1, true) end, plain("bad argument #2 to 'encode' (table expected, got boolean)"))
  t.eq(json.decode("1", nil), 1)
  t.eq(json.encode(1, nil), "1")
end)

---------------------------------------------------------------------------
-- Depth limits

t.test("decode: nesting depth limit (default 512)", function()
  local function nest(n) return string.rep("[", n) .. string.rep("]", n) end
  local v = json.decode(nest(512))
  local depth = 0
  while type(v) == "table" do depth = depth + 1; v = v[1] end
  t.eq(depth, 512, "512 nested arrays")
  t.eq(derr(nest(513)),
    "json.decode: line 1, column 513 (byte 513): nesting deeper than 512 levels; pass opts.max_depth to allow more")
  t.eq(derr(string.rep('{"a":', 513) .. "1" .. string.rep("}", 513)):match("nesting deeper than 512 levels"),
    "nesting deeper than 512 levels")
  -- far too deep, default limit: a clean error, no stack overflow
  t.ok(derr(string.rep("[", 1000000)):find("nesting deeper than 512 levels", 1, true))
  -- custom limits
  t.eq(json.decode("[[1]]", { max_depth = 2 }), { { 1 } })
  t.eq(derr("[[[1]]]", { max_depth = 2 }),
    "json.decode: line 1, column 3 (byte 3): nesting deeper than 2 levels; pass opts.max_depth to allow more")
  t.eq(json.decode("1", { max_depth = 1 }), 1)
  t.eq(json.decode(nest(2000), { max_depth = 2000 })[1][1][1] ~= nil, true)
  t.eq(derr("[]", { max_depth = 0 }), "json.decode: opts.max_depth must be a positive integer, got 0")
  t.eq(derr("[]", { max_depth = 1.5 }), "json.decode: opts.max_depth must be a positive integer, got 1.5")
  -- a huge limit that the Lua stack cannot honour still gives a clear error
  local msg = derr(nest(300000), { max_depth = 10000000 })
  t.eq(msg, "json.decode: nesting too deep for the Lua stack; lower opts.max_depth (default 512)")
end)

t.test("encode: nesting depth limit", function()
  local function nest(n)
    local root = {}
    local cur = root
    for _ = 2, n do local nxt = {}; cur[1] = nxt; cur = nxt end
    return root
  end
  local s = json.encode(nest(512))
  t.eq(s, string.rep("[", 511) .. "{}" .. string.rep("]", 511))
  t.eq(json.encode(json.decode(s)), s, "the 512-deep document round-trips")
  local msg = eerr(nest(513))
  t.ok(msg:find("^json.encode: value at %$%[1%]%[1%]"), msg)
  t.ok(msg:find("is nested deeper than 512 levels; pass opts.max_depth to allow more", 1, true), msg)
  t.ok(#msg < 300, "a long path is shortened: " .. #msg)
  t.eq(eerr({ a = { b = {} } }, { max_depth = 2 }),
    "json.encode: value at $.a.b is nested deeper than 2 levels; pass opts.max_depth to allow more")
  t.eq(json.encode({ a = { b = 1 } }, { max_depth = 2 }), '{"a":{"b":1}}')
  t.eq(eerr({}, { max_depth = 0 }), "json.encode: opts.max_depth must be a positive integer, got 0")
  t.eq(eerr(nest(300000), { max_depth = 10000000 }),
    "json.encode: value nested too deep for the Lua stack; lower opts.max_depth (default 512)")
end)

---------------------------------------------------------------------------
-- Encoding

t.test("encode: scalars", function()
  t.eq(json.encode(true), "true")
  t.eq(json.encode(false), "false")
  t.eq(json.encode(0), "0")
  t.eq(json.encode(-17), "-17")
  t.eq(json.encode(math.maxinteger), "9223372036854775807")
  t.eq(json.encode(math.mininteger), "-9223372036854775808")
  t.eq(json.encode(""), '""')
  t.eq(json.encode("hello"), '"hello"')
end)

t.test("encode: floats are written like Python's repr and read back exactly", function()
  local cases = {
    { 1.0, "1.0" }, { -1.5, "-1.5" }, { 100.0, "100.0" }, { 0.0, "0.0" }, { -0.0, "-0.0" },
    { 0.1, "0.1" }, { 1 / 3, "0.3333333333333333" }, { 2 / 3, "0.6666666666666666" },
    { 0.1 + 0.2, "0.30000000000000004" }, { math.pi, "3.141592653589793" },
    { 1e15, "1000000000000000.0" }, { 1e16, "1e+16" }, { 123456789012345680.0, "1.2345678901234568e+17" },
    { 2.0 ^ 53, "9007199254740992.0" }, { 2.0 ^ 63, "9.223372036854776e+18" },
    { 1e22, "1e+22" }, { 1e23, "1e+23" }, { 1.5e300, "1.5e+300" },
    { 1e-4, "0.0001" }, { 0.000123, "0.000123" }, { 1e-5, "1e-05" }, { 1.5e-7, "1.5e-07" },
    { 5e-324, "5e-324" }, { 2.5e-310, "2.5e-310" }, { 2.2250738585072014e-308, "2.2250738585072014e-308" },
    { 1.7976931348623157e308, "1.7976931348623157e+308" }, { 4.35, "4.35" }, { 2.675, "2.675" },
    { 123.456, "123.456" }, { 123456789.12345679, "123456789.12345679" },
  }
  for _, c in ipairs(cases) do
    t.eq(json.encode(c[1]), c[2], c[2])
    t.eq(json.format_float(c[1]), c[2])
  end
end)

t.test("encode: random doubles round-trip bit for bit", function()
  local r = rng(20240601)
  local count = 0
  for _ = 1, 3000 do
    local bits = (r() << 33) ~ r()
    local x = string.unpack("<d", string.pack("<i8", bits))
    if x == x and x ~= math.huge and x ~= -math.huge then
      count = count + 1
      local s = json.encode(x)
      local back = json.decode(s)
      t.eq(back, x, s)
      t.eq(string.pack("<d", back), string.pack("<d", x), "same bits for " .. s)
      local digits = s:gsub("e.*", ""):gsub("[^%d]", ""):gsub("^0+", "")
      t.ok(#digits <= 17, "at most 17 significant digits: " .. s)
    end
  end
  t.ok(count > 2900, "enough finite doubles were tried")
  -- and a few magnitudes of "nice" decimals
  for e = -320, 308, 7 do
    local x = tonumber("1.25e" .. e)
    t.eq(json.decode(json.encode(x)), x)
  end
end)

t.test("encode: NaN and infinities are errors naming the path", function()
  t.eq(eerr(0 / 0), "json.encode: value at $ is NaN, which JSON cannot represent")
  t.eq(eerr({ x = math.huge }), "json.encode: value at $.x is infinity, which JSON cannot represent")
  t.eq(eerr({ 1, { -math.huge } }), "json.encode: value at $[2][1] is -infinity, which JSON cannot represent")
end)

t.test("encode: string escaping", function()
  local named = { [8] = "\\b", [9] = "\\t", [10] = "\\n", [12] = "\\f", [13] = "\\r" }
  for i = 0, 31 do
    local want = named[i] or string.format("\\u%04x", i)
    t.eq(json.encode(string.char(i)), '"' .. want .. '"', "control character " .. i)
  end
  t.eq(json.encode('a"b\\c/d'), [["a\"b\\c/d"]], "slash is not escaped")
  t.eq(json.encode("\127"), '"\127"', "DEL stays raw without opts.ascii")
  t.eq(json.encode("é中😀\226\128\168"), '"é中😀\226\128\168"', "UTF-8 passes through")
  t.eq(json.encode("\0x"), '"\\u0000x"')
end)

t.test("encode: opts.ascii escapes non-ASCII with surrogate pairs", function()
  local a = { ascii = true }
  t.eq(json.encode("é", a), [["\u00e9"]])
  t.eq(json.encode("\127", a), [["\u007f"]])
  t.eq(json.encode("\194\128", a), [["\u0080"]])
  t.eq(json.encode("\223\191", a), [["\u07ff"]])
  t.eq(json.encode("\224\160\128", a), [["\u0800"]])
  t.eq(json.encode("\239\191\191", a), [["\uffff"]])
  t.eq(json.encode("😀", a), [["\ud83d\ude00"]])
  t.eq(json.encode("\240\144\128\128", a), [["\ud800\udc00"]])
  t.eq(json.encode("\244\143\191\191", a), [["\udbff\udfff"]])
  t.eq(json.encode({ ["clé"] = "a\n€" }, a), [[{"cl\u00e9":"a\n\u20ac"}]])
  t.eq(json.encode("plain", a), [["plain"]])
  t.eq(json.decode(json.encode("x😀é\127y", a)), "x😀é\127y")
end)

t.test("encode: invalid UTF-8 is an error naming the path", function()
  t.eq(eerr({ a = { 1, 2, "\255" } }), "json.encode: value at $.a[3] is not valid UTF-8; encode binary data as hex first")
  t.eq(eerr("abc\128"), "json.encode: value at $ is not valid UTF-8; encode binary data as hex first")
  t.eq(eerr({ ["\255"] = 1 }), [[json.encode: key at $["\xff"] is not valid UTF-8; encode binary data as hex first]])
  t.eq(eerr({ ["my key"] = { x = "\192\175" } }),
    [[json.encode: value at $["my key"].x is not valid UTF-8; encode binary data as hex first]])
  for _, s in ipairs({ "\128", "\192\175", "\224\128\175", "\237\160\128", "\237\191\191", "\244\144\128\128", "\226\130", "\248\136\128\128\128" }) do
    t.ok(eerr({ s }):find("is not valid UTF-8", 1, true), tohex(s))
    t.ok(eerr({ s }, { ascii = true }):find("is not valid UTF-8", 1, true), tohex(s) .. " (ascii)")
  end
end)

t.test("encode: tables become arrays or objects", function()
  t.eq(json.encode({ 1, 2, 3 }), "[1,2,3]")
  t.eq(json.encode({ "a", { true, false } }), '["a",[true,false]]')
  t.eq(json.encode({ a = 1 }), '{"a":1}')
  t.eq(json.encode({ 1, 2, x = 3 }), '{"1":1,"2":2,"x":3}', "mixed keys: an object")
  t.eq(json.encode({ 1, nil, 3 }), '{"1":1,"3":3}', "a plain table with holes is not a sequence")
  t.eq(json.encode({ [0] = "z" }), '{"0":"z"}')
  t.eq(json.encode({ [-1] = "m", [2] = "t" }), '{"-1":"m","2":"t"}')
  t.eq(json.encode({ b = 1, a = 2, ["é"] = 3, Z = 4, [""] = 5, aa = 6 }), '{"":5,"Z":4,"a":2,"aa":6,"b":1,"é":3}', "keys sorted bytewise")
  t.eq(json.encode({ [10] = "a", [2] = "b", x = 1 }), '{"10":"a","2":"b","x":1}', "integer keys sorted as strings")
  t.eq(json.encode({ ["a\nb"] = 1 }), '{"a\\nb":1}', "keys are escaped")
end)

t.test("encode: bad keys are errors naming the key", function()
  t.eq(eerr({ [1.5] = 1 }), "json.encode: table at $ has the float key 1.5; JSON object keys must be strings")
  t.eq(eerr({ x = { [true] = 1 } }), "json.encode: table at $.x has the boolean key true; JSON object keys must be strings")
  t.ok(eerr({ [{}] = 1 }):find("^json.encode: table at %$ has a table key %(table: "), "table key")
  t.ok(eerr({ [print] = 1 }):find("has a function key", 1, true), "function key")
  t.eq(eerr({ [1] = "a", ["1"] = "b" }),
    'json.encode: table at $ has both the integer key 1 and the string key "1", which are the same JSON key')
  t.eq(eerr(json.array({ 1, x = 2 })),
    'json.encode: table at $ is marked as a JSON array but has the key "x"; arrays only have integer keys 1..n')
  t.eq(eerr({ a = json.array({ [0] = 1 }) }),
    "json.encode: table at $.a is marked as a JSON array but has the integer key 0; arrays only have integer keys 1..n")
end)

t.test("encode: cycles are errors naming both paths", function()
  local a = {}
  a.self = a
  t.eq(eerr(a), "json.encode: table at $.self contains itself (it is also at $); JSON cannot represent cycles")
  local b = { x = { y = {} } }
  b.x.y.z = { b.x }
  t.eq(eerr(b), "json.encode: table at $.x.y.z[1] contains itself (it is also at $.x); JSON cannot represent cycles")
  local arr = json.array({ 1 })
  arr[2] = arr
  t.eq(eerr(arr), "json.encode: table at $[2] contains itself (it is also at $); JSON cannot represent cycles")
  -- shared, non-cyclic references are fine
  local shared = { 1 }
  t.eq(json.encode({ a = shared, b = shared, c = { shared } }), '{"a":[1],"b":[1],"c":[[1]]}')
  -- a cycle through __tojson
  local obj = setmetatable({}, { __tojson = function(self) return { inner = self } end })
  t.ok(eerr({ obj }):find("contains itself", 1, true), "cycle via __tojson")
end)

t.test("encode: functions, threads and userdata need __tojson", function()
  t.eq(eerr({ f = print }),
    "json.encode: value at $.f is a function, which JSON cannot represent; convert it first or give it a __tojson metamethod")
  t.eq(eerr({ 1, coroutine.create(print) }),
    "json.encode: value at $[2] is a thread, which JSON cannot represent; convert it first or give it a __tojson metamethod")
  t.eq(eerr({ out = { io.stdout } }),
    "json.encode: value at $.out[1] is a userdata, which JSON cannot represent; convert it first or give it a __tojson metamethod")
  t.eq(eerr(print), "json.encode: value at $ is a function, which JSON cannot represent; convert it first or give it a __tojson metamethod")
end)

t.test("encode: __tojson is honoured", function()
  local Point = { __tojson = function(p) return { x = p.x, y = p.y } end }
  local p = setmetatable({ x = 1, y = 2, hidden = print }, Point)
  t.eq(json.encode(p), '{"x":1,"y":2}')
  t.eq(json.encode({ pts = { p, p } }), '{"pts":[{"x":1,"y":2},{"x":1,"y":2}]}')
  local Hex = { __tojson = function(h) return "0x" .. h.v end }
  t.eq(json.encode({ setmetatable({ v = "ff" }, Hex) }), '["0xff"]')
  local Wrapper = { __tojson = function(w) return w.inner end }
  t.eq(json.encode(setmetatable({ inner = setmetatable({ v = "01" }, Hex) }, Wrapper)), '"0x01"', "nested __tojson")
  t.eq(json.encode(setmetatable({}, { __tojson = function() return nil end })), "null")
  t.eq(json.encode(setmetatable({}, { __tojson = function() return json.array() end })), "[]")
  local Self = { __tojson = function(s) return s end }
  t.eq(eerr({ a = setmetatable({}, Self) }),
    "json.encode: __tojson of the value at $.a returned the value itself; return a plain table or string")
  local Boom = { __tojson = function() error("no way") end }
  local msg = eerr({ k = { setmetatable({}, Boom) } })
  t.ok(msg:find("^json.encode: __tojson of the value at %$%.k%[1%] raised an error: .*no way"), msg)
  -- the result of __tojson is checked like any value
  t.eq(eerr({ setmetatable({}, { __tojson = function() return "\255" end }) }),
    "json.encode: value at $[1] is not valid UTF-8; encode binary data as hex first")
end)

t.test("encode: opts.indent pretty-prints like Python's json.dumps(indent=...)", function()
  local v = { a = { 1, 2 }, b = {}, c = json.array(), d = "x", e = { f = json.null } }
  t.eq(json.encode(v, { indent = 2 }), table.concat({
    "{",
    '  "a": [',
    "    1,",
    "    2",
    "  ],",
    '  "b": {},',
    '  "c": [],',
    '  "d": "x",',
    '  "e": {',
    '    "f": null',
    "  }",
    "}",
  }, "\n"))
  t.eq(json.encode({ 1, { 2 } }, { indent = "\t" }), "[\n\t1,\n\t[\n\t\t2\n\t]\n]")
  t.eq(json.encode({ 1, 2 }, { indent = 0 }), "[\n1,\n2\n]")
  t.eq(json.encode(5, { indent = 4 }), "5")
  t.eq(json.encode({}, { indent = 4 }), "{}")
  t.eq(json.encode({ 1 }, { indent = false }), "[1]")
  t.eq(json.decode(json.encode(v, { indent = 3 })), v)
  t.raises(function() json.encode({}, { indent = -1 }) end, "opts.indent must be a non%-negative integer or a string")
  t.raises(function() json.encode({}, { indent = 1.5 }) end, "opts.indent must be a non%-negative integer or a string")
  t.raises(function() json.encode({}, { indent = true }) end, "opts.indent must be a number or a string, got boolean")
end)

---------------------------------------------------------------------------
-- Round trips on generated values

-- A pseudo-random JSON-able value: marked arrays/objects, every scalar kind.
local function generator(seed)
  local r = rng(seed)
  local function rand_string()
    local n = ({ 0, 1, 2, 5, 12, 30 })[r(6) + 1]
    local out = {}
    for i = 1, n do
      local kind = r(6)
      local cp
      if kind == 0 then cp = r(32)                 -- control characters
      elseif kind == 1 then cp = 32 + r(96)         -- printable ASCII and DEL
      elseif kind == 2 then cp = 0x80 + r(0x780)    -- 2 bytes
      elseif kind == 3 then
        cp = 0x800 + r(0xF800)                      -- 3 bytes, no surrogates
        if cp >= 0xD800 and cp <= 0xDFFF then cp = cp - 0x1000 end
      elseif kind == 4 then cp = 0x10000 + r(0x100000) -- 4 bytes
      else cp = ({ 34, 92, 47, 0x2028, 0xFEFF, 0xFFFF })[r(6) + 1]
      end
      out[i] = utf8.char(cp)
    end
    return table.concat(out)
  end
  local function rand_number()
    local kind = r(8)
    if kind == 0 then return r(2001) - 1000
    elseif kind == 1 then return (r() << 31) ~ r() ~ (r() << 62)
    elseif kind == 2 then return ({ math.maxinteger, math.mininteger, 0, -1, 1 << 53 })[r(5) + 1]
    elseif kind == 3 then
      local x
      repeat x = string.unpack("<d", string.pack("<i8", (r() << 33) ~ r())) until x == x and x - x == 0
      return x
    elseif kind == 4 then return (r(2000001) - 1000000) / 8
    elseif kind == 5 then return ({ 0.0, -0.0, 0.5, 1e16, 1e-7, 123.0, 5e-324, 1.7976931348623157e308 })[r(8) + 1]
    elseif kind == 6 then return json.number(({ "", "-" })[r(2) + 1] .. tostring(r(9) + 1) .. string.rep("0", 19 + r(30)) .. tostring(r(10)))
    else return json.number(({ "1e400", "-1e400", "2.5E+999" })[r(3) + 1])
    end
  end
  local function value(depth)
    local kind = r(depth < 4 and 10 or 6)
    if kind == 0 then return json.null
    elseif kind == 1 then return r(2) == 0
    elseif kind <= 3 then return rand_number()
    elseif kind <= 5 then return rand_string()
    end
    local n = ({ 0, 1, 2, 3, 5, 8 })[r(6) + 1]
    if kind <= 7 then
      local a = json.array()
      for i = 1, n do a[i] = value(depth + 1) end
      return a
    end
    local o = json.object()
    for _ = 1, n do o[rand_string()] = value(depth + 1) end
    return o
  end
  return value
end

t.test("round trip: decode(encode(x)) == x on generated values", function()
  local value = generator(8259)
  local total = 0
  for i = 1, 300 do
    local x = value(0)
    local s = json.encode(x)
    total = total + #s
    local back = json.decode(s)
    t.eq(back, x, "value " .. i)
    t.eq(json.encode(back), s, "stable encoding (shape and key order) for value " .. i)
    t.eq(json.decode(json.encode(x, { ascii = true })), x, "ascii, value " .. i)
    t.ok(not json.encode(x, { ascii = true }):find("[\128-\255]"), "ascii output is ASCII")
    t.eq(json.decode(json.encode(x, { indent = 2 })), x, "indented, value " .. i)
    t.eq(json.encode(json.decode(json.encode(x, { indent = "\t" }))), s, "indented shape, value " .. i)
  end
  t.ok(total > 20000, "the generator made sizeable documents: " .. total)
end)

t.test("round trip: integer vs float is preserved", function()
  local v = json.decode(json.encode({ 1, 1.0, -0.0, 0, 2 ^ 53, 1 << 53, 1e300, math.mininteger }))
  t.eq(math.type(v[1]), "integer")
  t.eq(math.type(v[2]), "float")
  t.eq(1 / v[3], -math.huge)
  t.eq(math.type(v[4]), "integer")
  t.eq(math.type(v[5]), "float")
  t.eq(math.type(v[6]), "integer")
  t.eq(v[7], 1e300)
  t.eq(v[8], math.mininteger)
end)

---------------------------------------------------------------------------
-- Python's json module as an independent oracle (fixtures/json/make.py)

local function check_stream(v, tokens, i, where)
  local tok = tokens[i]
  t.ok(tok ~= nil, where .. ": value stream ended early")
  if tok == "n" then
    t.ok(rawequal(v, json.null), where .. ": expected null, got " .. tostring(v))
  elseif tok == "t" or tok == "f" then
    t.eq(v, tok == "t", where)
  elseif tok == "[" then
    t.ok(type(v) == "table" and getmetatable(v) == json.array_mt, where .. ": expected an array")
    local n = 0
    i = i + 1
    while tokens[i] ~= "]" do
      n = n + 1
      i = check_stream(v[n], tokens, i, where .. "[" .. n .. "]")
    end
    local count = 0
    for _ in next, v do count = count + 1 end
    t.eq(count, n, where .. ": array length")
    t.eq(#v, n, where .. ": array length")
  elseif tok == "{" then
    t.ok(type(v) == "table" and getmetatable(v) == json.object_mt, where .. ": expected an object")
    local keys = {}
    for k in next, v do keys[#keys + 1] = k end
    table.sort(keys)
    local n = 0
    i = i + 1
    while tokens[i] ~= "}" do
      n = n + 1
      local key = fromhex(tokens[i]:match("^s:(%x*)$"))
      t.eq(keys[n], key, where .. ": key " .. n)
      i = check_stream(v[key], tokens, i + 1, where .. "." .. tokens[i])
    end
    t.eq(#keys, n, where .. ": number of keys")
  else
    local kind, text = tok:match("^(%a):(.*)$")
    if kind == "i" then
      t.eq(math.type(v), "integer", where .. ": " .. tok)
      t.eq(v, math.tointeger(tonumber(text)), where)
    elseif kind == "b" or kind == "x" then
      t.ok(json.is_number(v), where .. ": expected a json.number for " .. tok)
      t.eq(v.text, text, where)
    elseif kind == "d" then
      local want = tonumber(text)
      t.eq(math.type(v), "float", where .. ": " .. tok)
      t.eq(string.pack("<d", v), string.pack("<d", want), where .. ": " .. tok .. " vs " .. tostring(v))
    elseif kind == "s" then
      t.eq(type(v), "string", where)
      t.eq(tohex(v), text, where)
    else
      error("bad token in fixture: " .. tok)
    end
  end
  return i + 1
end

t.test("fixtures: keyhost.json agrees with Python's json module", function()
  local dir = here .. "fixtures/json/"
  local names = {}
  for name in io.lines(dir .. "index.txt") do
    if name ~= "" then names[#names + 1] = name end
  end
  t.ok(#names >= 130, "expected at least 130 fixture cases, found " .. #names)
  local kinds, pretty_checked = {}, 0
  for _, name in ipairs(names) do
    local doc = read_file(dir .. "cases/" .. name .. ".json")
    local exp = read_file(dir .. "expected/" .. name .. ".txt")
    local decoded, compact, ascii, rest = exp:match("^decoded: ([^\n]*)\ncompact: ([^\n]*)\nascii: ([^\n]*)\n(.*)$")
    t.ok(decoded, name .. ": malformed expected file")
    local ok, v = pcall(json.decode, doc)
    t.ok(ok, name .. ": decode failed: " .. tostring(v))
    local tokens = {}
    for tok in decoded:gmatch("%S+") do
      tokens[#tokens + 1] = tok
      kinds[tok:sub(1, 1)] = true
    end
    t.eq(check_stream(v, tokens, 1, name .. " $"), #tokens + 1, name .. ": whole stream consumed")
    t.eq(json.encode(v), compact, name .. " (compact)")
    t.eq(json.encode(v, { ascii = true }), ascii, name .. " (ascii)")
    local pretty = rest:match("^pretty:\n(.*)$")
    if pretty then
      t.eq(json.encode(v, { indent = 2 }), pretty, name .. " (pretty)")
      pretty_checked = pretty_checked + 1
    else
      t.eq(rest, "", name .. ": unexpected trailing text")
    end
    t.eq(json.decode(json.encode(v)), v, name .. " (round trip)")
  end
  t.ok(pretty_checked >= 120, "most fixtures have a pretty form: " .. pretty_checked)
  for _, k in ipairs({ "n", "t", "f", "i", "b", "x", "d", "s", "[", "{" }) do
    t.ok(kinds[k], "the fixtures exercise token kind " .. k)
  end
end)

---------------------------------------------------------------------------
-- Performance sanity (no timing is asserted)

t.test("performance: a ~1 MB document decodes and re-encodes", function()
  local parts = {}
  for i = 1, 8000 do
    parts[i] = string.format(
      '{"id":%d,"name":"item \\u00e9 %d \\ud83d\\ude00","tags":["a","b\\n","c"],"v":%d.25,"ok":true,"n":null,"big":1234567890123456789012}',
      i, i, i)
  end
  local doc = "[" .. table.concat(parts, ",\n") .. "]"
  t.ok(#doc > 900000 and #doc < 1300000, "document size " .. #doc)
  local v = json.decode(doc)
  t.eq(#v, 8000)
  t.eq(v[4321].id, 4321)
  t.eq(v[4321].name, "item é 4321 😀")
  t.eq(v[4321].v, 4321.25)
  t.eq(v[8000].big.text, "1234567890123456789012")
  t.ok(rawequal(v[1].n, json.null))
  local s = json.encode(v)
  t.eq(json.decode(s), v)
  t.eq(json.encode(json.decode(s)), s)
end)

t.test("module creates no globals", function()
  t.eq(rawget(_G, "json"), nil)
end)

t.run()
