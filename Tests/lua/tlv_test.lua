-- Tests for keyhost.card's BER-TLV and status word functions. Run: keyhost run Tests/lua/tlv_test.lua
-- Layouts from the Keycard APDU documentation (SELECT answer template A4, SIGN template A0) and ISO 7816-4.
local t = require "keyhost.test"
local card = require "keyhost.card"
local ec = require "keyhost.ec"
local hash = require "keyhost.hash"
local hex = require "keyhost.hex"

local function h(s) return hex.decode((s:gsub("%s", ""))) end

-- An applet 3.2 SELECT answer: A4 { 8F instance UID (16), 80 secure channel key (65), 02 version 3.2,
-- 02 free pairing slots, 8F key UID (32), 8D capabilities } — 129 bytes, so the length is 81 81.
local UID = h "00112233445566778899aabbccddeeff"
local SC_KEY = h [[04 84bf7562262bbd6940085748f3be6afa52ae317155181ece31b66351ccffa4b0
                    8cc43d63b2859d469fee15f31c9edb5324266e6fd0407e87382d60fc4511acd8]]
local KEY_UID = hash.sha256("key uid")
local SELECT = h "a4 81 81" .. h "8f 10" .. UID .. h "80 41" .. SC_KEY .. h "02 02 03 02" .. h "02 01 0a"
  .. h "8f 20" .. KEY_UID .. h "8d 01 0f"

-- A SIGN answer in the legacy template: A0 { 80 public key (65), 30 DER signature } — 137 bytes, length 81 89.
-- The key is the private key 01 02 … 20; the digest SHA-256("keyhost tlv test").
local DIGEST = hash.sha256("keyhost tlv test")
local DER = h [[3044 0220 0a7821e9e21673715ee1e8c17372a9b097a7e4d3877a5096d9535b2846fe59f3
                    0220 40eb427f02adc53a1ddd02e8d451c6c6a45d4423698715581c466953925d3e0c]]
local SIGN = h "a0 81 89 80 41" .. SC_KEY .. DER

local function invalid(bytes, offset, pattern)
  local err = t.raises(function() card.tlv_parse(bytes) end, "malformed BER%-TLV at offset " .. offset .. ":")
  t.eq(type(err), "table", "structured error")
  t.eq(err.kind, "invalid_tlv")
  t.eq(err.offset, offset)
  if pattern then t.ok(tostring(err):find(pattern), tostring(err) .. " does not match " .. pattern) end
  return err
end

t.test("a Keycard SELECT answer (length 81 81) parses into its template", function()
  local list = card.tlv_parse(SELECT)
  t.eq(#list, 1)
  local a4 = list[1]
  t.eq(a4.tag, 0xA4)
  t.eq(#a4.value, 0x81)
  t.eq(a4.value, SELECT:sub(4))
  local c = a4.children
  t.eq(#c, 6)
  t.eq({ c[1].tag, c[1].value }, { 0x8F, UID })
  t.eq({ c[2].tag, c[2].value }, { 0x80, SC_KEY })
  t.eq({ c[3].tag, c[3].value }, { 0x02, h "0302" })
  t.eq({ c[4].tag, c[4].value }, { 0x02, h "0a" })
  t.eq({ c[5].tag, c[5].value }, { 0x8F, KEY_UID })
  t.eq({ c[6].tag, c[6].value }, { 0x8D, h "0f" })
  for i = 1, 6 do t.eq(c[i].children, nil, "primitive tags have no children") end
end)

t.test("the virtual card's own SELECT answer parses and matches s:select()", function()
  for _, applet in ipairs { "3.2", "4.0" } do
    local s <close> = card.open { reader = "virtual", applet = applet, seed = 3 }
    s:select()
    s:init { pin = "123456", puk = "987654321098", pairing_password = "KeycardTest" }
    local info = s:select()
    local data, sw = s:transmit(h "00a4040009a0000008040001010100")
    t.eq(card.sw_name(sw), "success")
    if applet == "4.0" then
      -- The 4.0 applet writes the outer A4 length one byte short (as the real applet does; s:select() copes):
      -- tlv_parse is strict, and says where it breaks.
      invalid(data, 15, "length 98 of tag 0x8A at offset 14 runs past the end of the value of tag 0xA4 %(at offset 0%)")
      t.eq(data:byte(2), #data - 3)
      data = data:sub(1, 1) .. string.char(#data - 2) .. data:sub(3)
    end
    local top = card.tlv_parse(data)
    t.eq(top[1].tag, 0xA4, applet)
    local fields = {}
    for _, e in ipairs(top[1].children) do fields[e.tag] = fields[e.tag] or e.value end
    if applet == "3.2" then
      t.eq(fields[0x8F], info.instance_uid, "instance UID")
      t.eq(fields[0x80], info.secure_channel_public_key, "secure channel key")
      t.eq(fields[0x02], h "0302", "version")
    else
      t.eq(fields[0x02], h "0400", "version")
      t.eq(#fields[0x8A], 98, "identity certificate")
    end
    t.eq(card.tlv_build(top), data, applet .. " rebuilt byte for byte")
  end
end)

t.test("a SIGN answer template (A0 81 89) gives a key and a DER signature that verify", function()
  local a0 = card.tlv_parse(SIGN)[1]
  t.eq(a0.tag, 0xA0)
  t.eq(#a0.value, 0x89)
  t.eq(#a0.children, 2)
  local pub, der = a0.children[1], a0.children[2]
  t.eq(pub.tag, 0x80)
  t.eq(pub.value, SC_KEY)
  t.eq(der.tag, 0x30)
  t.eq(der.value, DER:sub(3))
  -- 30 is constructed: its children are the two INTEGERs r and s
  t.eq(#der.children, 2)
  t.eq({ der.children[1].tag, #der.children[1].value, der.children[2].tag, #der.children[2].value }, { 0x02, 32, 0x02, 32 })
  t.ok(ec.verify(pub.value, DIGEST, card.tlv_build(der)), "the DER signature verifies")
end)

t.test("lengths 81 and 82, and the shortest form on building", function()
  for _, case in ipairs {
    { 0, "00" }, { 127, "7f" }, { 128, "8180" }, { 255, "81ff" }, { 256, "820100" }, { 300, "82012c" }, { 65535, "82ffff" },
    { 65536, "83010000" },
  } do
    local n, len = case[1], case[2]
    local value = string.rep("\x5a", n)
    local bytes = card.tlv_build { tag = 0x53, value = value }
    t.eq(hex.encode(bytes:sub(2, 1 + #len // 2)), len, "length " .. n)
    t.eq(#bytes, 1 + #len // 2 + n)
    local back = card.tlv_parse(bytes)
    t.eq(#back, 1)
    t.eq(back[1].tag, 0x53)
    t.eq(back[1].value == value, true, "value of " .. n .. " bytes")
  end
  -- non-minimal lengths are accepted on parsing (81 05, 82 00 05)
  t.eq(card.tlv_parse(h "80 81 05 0102030405")[1].value, h "0102030405")
  t.eq(card.tlv_parse(h "80 82 0005 0102030405")[1].value, h "0102030405")
  t.eq(card.tlv_parse(h "80 00 81 00"), { { tag = 0x80, value = "" }, { tag = 0x81, value = "" } })
end)

t.test("round trips: parse . build and build . parse", function()
  for _, bytes in ipairs { SELECT, SIGN, SELECT .. SIGN, "", h "9f7f 03 010203 5f20 02 4142 bf0c 05 9f4d 02 0b0a" } do
    t.eq(card.tlv_build(card.tlv_parse(bytes)), bytes, hex.encode(bytes))
  end
  local tree = {
    { tag = 0xE1, children = {
      { tag = 0x4F, value = h "a0000008040001" },
      { tag = 0x5F2D, value = "en" },
      { tag = 0xBF0C, children = { { tag = 0x9F812A, value = "deep" } } },
      { tag = 0xA5, children = {} },
    } },
    { tag = 0x80, value = "" },
  }
  local bytes = card.tlv_build(tree)
  t.eq(hex.encode(bytes), "e11b4f07a00000080400015f2d02656ebf0c089f812a0464656570a5008000")
  local back = card.tlv_parse(bytes)
  t.eq(back[1].children[3].children[1], { tag = 0x9F812A, value = "deep" })
  t.eq(back[1].children[4], { tag = 0xA5, value = "", children = {} })
  t.eq(card.tlv_build(back), bytes)
  -- one element may be given without the list around it
  t.eq(card.tlv_build { tag = 0x80, value = "\1" }, h "800101")
  -- a constructed tag may be given raw bytes as its value
  t.eq(card.tlv_build { tag = 0xA0, value = h "800101" }, h "a003800101")
end)

t.test("malformed input raises with the offset", function()
  invalid(h "80", 1, "tag 0x80 at offset 0 has no length")
  invalid(h "80 81", 1, "length of tag 0x80 at offset 1 is cut short: 0x81 announces 1 length bytes, 0 bytes remain")
  invalid(h "8001ff 80 82 01", 4, "length of tag 0x80 at offset 4 is cut short: 0x82 announces 2 length bytes, 1 byte remain")
  invalid(h "80 05 0102", 1, "length 5 of tag 0x80 at offset 0 runs past the end of the input: the value would start at offset 2, but 2 bytes remain")
  invalid(h "80 82 ffff", 1, "length 65535")
  invalid(h "80 80", 1, "length byte 0x80 of tag 0x80 at offset 1 is not a definite length")
  invalid(h "80 85 0000000001 00", 1, "not a definite length")
  invalid(h "5f", 0, "tag at offset 0 is cut short")
  invalid(h "9f ff ff ff 7f 00", 0, "longer than 4 bytes")
  -- inside a constructed value: the offset still counts from the start of the string
  invalid(h "a4 04 80 05 0102", 3, "runs past the end of the value of tag 0xA4 %(at offset 0%)")
  invalid(h "a0 03 800101 a1 03 30 02 01", 8, "length 2 of tag 0x30 at offset 7 runs past the end of the value of tag 0xA1 %(at offset 5%)")
  -- the SELECT answer cut anywhere inside raises (and never crashes)
  for cut = 1, #SELECT - 1 do
    local ok, err = pcall(card.tlv_parse, SELECT:sub(1, cut))
    t.ok(not ok and err.kind == "invalid_tlv", "SELECT cut at " .. cut)
  end
  t.raises(function() card.tlv_parse(nil) end, "string expected, got nil")
  -- nesting is bounded
  local deep = "\x80\x00"
  for _ = 1, 40 do deep = "\xa0" .. string.char(#deep) .. deep end
  t.raises(function() card.tlv_parse(deep) end, "nested deeper than 32 levels")
end)

t.test("tlv_build checks its elements", function()
  t.raises(function() card.tlv_build "80" end, "table expected, got string")
  t.raises(function() card.tlv_build { { value = "x" } } end, "element 1 has no 'tag'")
  t.raises(function() card.tlv_build { { tag = 0x80 } } end, "needs 'value' %(bytes%) or 'children'")
  t.raises(function() card.tlv_build { { tag = 0x80, valeu = "x" } } end, "unknown field 'valeu'")
  t.raises(function() card.tlv_build { { tag = 0x80, value = 1 } } end, "'value' must be a string")
  t.raises(function() card.tlv_build { { tag = 0x80, children = {} } } end, "tag 0x80 is primitive")
  t.raises(function() card.tlv_build { { tag = 0x1F, value = "" } } end, "0x1F is not a BER%-TLV tag")
  t.raises(function() card.tlv_build { { tag = 0x5F80, value = "" } } end, "0x5F80 is not a BER%-TLV tag")
  t.raises(function() card.tlv_build { { tag = 0x8020, value = "" } } end, "0x8020 is not a BER%-TLV tag")
  t.raises(function() card.tlv_build { { tag = 0x100000000, value = "" } } end, "out of range")
  t.raises(function() card.tlv_build { { tag = 0xA0, children = { { tag = 0x80 } } } } end, "element 1.children%[1%]")
  t.raises(function() card.tlv_build { { tag = 0xA0, value = "x", children = { { tag = 0x80, value = "" } } } } end,
    "disagree")
  t.raises(function() card.tlv_build { "x" } end, "element 1 must be a table")
  t.raises(function() card.tlv_build { foo = 1 } end, "list of elements")
  t.eq(card.tlv_build {}, "")
end)

t.test("sw_name gives ISO 7816-4 names", function()
  t.eq(card.sw_name(0x9000), "success")
  t.eq(card.sw_name(0x6A82), "file or application not found")
  t.eq(card.sw_name(0x6982), "security status not satisfied")
  t.eq(card.sw_name(0x6985), "conditions of use not satisfied")
  t.eq(card.sw_name(0x6A84), "not enough memory space in the file")
  t.eq(card.sw_name(0x6A83), "record not found")
  t.eq(card.sw_name(0x6D00), "instruction code not supported")
  t.eq(card.sw_name(0x63C2), "verification failed, 2 tries left")
  t.eq(card.sw_name(0x6110), "16 response bytes still available")
  t.eq(card.sw_name(0x6C20), "wrong Le field; 32 is the exact length available")
  t.eq(card.sw_name(0x6A99), "wrong parameters P1-P2 (SW2 99)")
  t.eq(card.sw_name(0x6401), "immediate response required by the card")
  t.eq(card.sw_name(0x9001), nil, "proprietary words have no ISO name")
  t.eq(card.sw_name(0x1234), nil)
  t.raises(function() card.sw_name(0x10000) end, "out of range")
  t.raises(function() card.sw_name("success") end, "number expected, got string")
end)

t.run()
