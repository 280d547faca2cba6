-- Tests for keyhost.hex. Run: LUA_PATH='stdlib/?.lua;;' lua5.4 Tests/lua/hex_test.lua
local t = require "keyhost.test"
local hex = require "keyhost.hex"

local all_bytes = {}
for i = 0, 255 do all_bytes[#all_bytes + 1] = string.char(i) end
all_bytes = table.concat(all_bytes)

t.test("encode: lowercase, two digits per byte", function()
  t.eq(hex.encode(""), "")
  t.eq(hex.encode("\0"), "00")
  t.eq(hex.encode("\1\171\255"), "01abff")
  t.eq(hex.encode("Hello"), "48656c6c6f")
  local e = hex.encode(all_bytes)
  t.eq(#e, 512)
  t.eq(e:sub(1, 8), "00010203")
  t.eq(e:sub(-8), "fcfdfeff")
  t.ok(not e:find("[A-F]"), "no uppercase")
end)

t.test("encode options: upper and separator", function()
  t.eq(hex.encode("\1\171", { upper = true }), "01AB")
  t.eq(hex.encode("\1\171\255", { separator = ":" }), "01:ab:ff")
  t.eq(hex.encode("\1\171", { separator = " ", upper = true }), "01 AB")
  t.eq(hex.encode("\1", { separator = ":" }), "01")
  t.eq(hex.encode("", { separator = ":" }), "")
  t.raises(function() hex.encode("a", { separator = 1 }) end, "opts.separator must be a string")
end)

t.test("decode: both cases, 0x prefix", function()
  t.eq(hex.decode(""), "")
  t.eq(hex.decode("01abff"), "\1\171\255")
  t.eq(hex.decode("01ABFF"), "\1\171\255")
  t.eq(hex.decode("01aBfF"), "\1\171\255")
  t.eq(hex.decode("0x01ab"), "\1\171")
  t.eq(hex.decode("0X01AB"), "\1\171")
  t.eq(hex.decode("0x"), "")
  t.eq(hex.decode(hex.encode(all_bytes)), all_bytes)
  t.eq(hex.decode(hex.encode(all_bytes, { upper = true })), all_bytes)
end)

t.test("decode: a bad character is named with its position", function()
  t.raises(function() hex.decode("abcdgf") end, t.plain("hex.decode: character 5 ('g') is not a hex digit"))
  t.raises(function() hex.decode("0xzz") end, t.plain("character 3 ('z')"))
  t.raises(function() hex.decode("ab\0cd") end, t.plain("character 3 ('\\x00') is not a hex digit"))
  t.raises(function() hex.decode("ab\255cd") end, t.plain("character 3 ('\\xff')"))
  t.raises(function() hex.decode("x01") end, t.plain("character 1 ('x')"), "0x only as a prefix")
  t.raises(function() hex.decode("00x1") end, t.plain("character 3 ('x')"))
  local err = t.raises(function() hex.decode("01 ab") end, t.plain("character 3 (' ') is not a hex digit"))
  t.ok(tostring(err):find("lenient", 1, true), "hints at opts.lenient")
end)

t.test("decode: odd length", function()
  t.raises(function() hex.decode("abc") end, t.plain("hex.decode: odd number of hex digits (3)"))
  t.raises(function() hex.decode("0xa") end, "odd number of hex digits %(1%)")
end)

t.test("decode: errors are raised at the caller's level", function()
  local err = t.raises(function() hex.decode("zz") end)
  t.ok(tostring(err):find("hex_test.lua:%d+: hex.decode"), "location is the caller: " .. tostring(err))
end)

t.test("decode lenient: spaces, newlines and colons are ignored", function()
  t.eq(hex.decode("01:ab:ff", { lenient = true }), "\1\171\255")
  t.eq(hex.decode("01 ab\nff\t", { lenient = true }), "\1\171\255")
  t.eq(hex.decode("0x01 AB", { lenient = true }), "\1\171")
  t.eq(hex.decode(" : ", { lenient = true }), "")
  t.raises(function() hex.decode("01-ab", { lenient = true }) end, t.plain("character 3 ('-') is not a hex digit"))
  t.raises(function() hex.decode("01 a", { lenient = true }) end, "odd number of hex digits %(3%)")
  t.raises(function() hex.decode("01:ab") end, t.plain("character 3 (':')"), "strict by default")
end)

t.test("argument errors use Lua's wording", function()
  t.raises(function() hex.decode() end, t.plain("bad argument #1 to 'decode' (string expected, got no value)"))
  t.raises(function() hex.decode(nil) end, t.plain("bad argument #1 to 'decode' (string expected, got nil)"))
  t.raises(function() hex.decode(12) end, t.plain("bad argument #1 to 'decode' (string expected, got number)"))
  t.raises(function() hex.encode({}) end, t.plain("bad argument #1 to 'encode' (string expected, got table)"))
  t.raises(function() hex.decode("00", 5) end, t.plain("bad argument #2 to 'decode' (table expected, got number)"))
  t.raises(function() hex.dump(nil) end, t.plain("bad argument #1 to 'dump' (string expected, got nil)"))
end)

t.test("is_hex", function()
  t.eq(hex.is_hex("00ff"), true)
  t.eq(hex.is_hex("00FF"), true)
  t.eq(hex.is_hex("0x00"), true)
  t.eq(hex.is_hex(""), true)
  t.eq(hex.is_hex("0"), false)
  t.eq(hex.is_hex("0g"), false)
  t.eq(hex.is_hex("00 ff"), false)
  t.eq(hex.is_hex("00 ff", { lenient = true }), true)
  t.eq(hex.is_hex(nil), false)
  t.eq(hex.is_hex(12), false)
  t.eq(hex.is_hex({}), false)
end)

t.test("dump: classic layout", function()
  t.eq(hex.dump(""), "")
  t.eq(hex.dump("Hello, world.\n"),
    "00000000  48 65 6c 6c 6f 2c 20 77  6f 72 6c 64 2e 0a        |Hello, world..|")
  local lines = {}
  for line in (hex.dump(all_bytes) .. "\n"):gmatch("(.-)\n") do lines[#lines + 1] = line end
  t.eq(#lines, 16)
  t.eq(lines[1], "00000000  00 01 02 03 04 05 06 07  08 09 0a 0b 0c 0d 0e 0f  |................|")
  t.eq(lines[3], "00000020  20 21 22 23 24 25 26 27  28 29 2a 2b 2c 2d 2e 2f  | !\"#$%&'()*+,-./|")
  t.eq(lines[8], "00000070  70 71 72 73 74 75 76 77  78 79 7a 7b 7c 7d 7e 7f  |pqrstuvwxyz{|}~.|")
  t.eq(lines[16], "000000f0  f0 f1 f2 f3 f4 f5 f6 f7  f8 f9 fa fb fc fd fe ff  |................|")
  for _, line in ipairs(lines) do t.eq(#line, #lines[1], "all full lines have the same width") end
end)

t.test("dump: options", function()
  t.eq(hex.dump("abc", { offset = 0x1000 }),
    "00001000  61 62 63                                          |abc|")
  t.eq(hex.dump("abcdefghij", { width = 4 }),
    "00000000  61 62 63 64  |abcd|\n00000004  65 66 67 68  |efgh|\n00000008  69 6a        |ij|")
  t.raises(function() hex.dump("a", { width = 0 }) end, "opts.width must be a positive integer")
  t.raises(function() hex.dump("a", { offset = -1 }) end, "opts.offset must be a non%-negative integer")
end)

t.test("round trip on random bytes", function()
  math.randomseed(42)
  for _ = 1, 200 do
    local n = math.random(0, 64)
    local b = {}
    for i = 1, n do b[i] = string.char(math.random(0, 255)) end
    local s = table.concat(b)
    t.eq(hex.decode(hex.encode(s)), s)
    t.eq(hex.decode(hex.encode(s, { separator = ":" }), { lenient = true }), s)
    t.ok(hex.is_hex(hex.encode(s)))
  end
end)

t.test("module creates no globals", function()
  t.eq(rawget(_G, "hex"), nil)
end)

t.run()
