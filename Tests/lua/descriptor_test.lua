-- Tests for keyhost.descriptor. Run: keyhost run Tests/lua/descriptor_test.lua
-- Expected values: the BIP39 test phrase's BIP84/BIP86 accounts (as embit derives them), BIP380's checksum
-- vector, BIP386's first tr() vector and BIP389's first multipath vector.
local t = require "keyhost.test"
local descriptor = require "keyhost.descriptor"
local hd = require "keyhost.hd"
local hex = require "keyhost.hex"

local ACCOUNT = "[73c5da0a/84h/0h/0h]xpub6CatWdiZiodmUeTDp8LT5or8nmbKNcuyvz7WyksVFkKB4RHwCD3XyuvPEbvqAQY3rAPshWcMLoP2fMFMKHPJ4ZeZXYVUhLv1VMrjPC7PW6V"
local ABANDON = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"

t.test("parse, print with checksum, derive", function()
  local d = descriptor.parse("wpkh(" .. ACCOUNT .. "/0/*)")
  t.eq(tostring(d), "wpkh(" .. ACCOUNT .. "/0/*)#afwvtk2s")
  t.eq(d:tostring(), tostring(d))
  t.eq(d:checksum(), "afwvtk2s")
  t.ok(d:is_range())
  t.eq(d:address(0), "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu")
  t.eq(d:addresses(0, 3), { "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu", "bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g",
    "bc1qp59yckz4ae5c4efgw2s5wfyvrz0ala7rgvuz8z" })
  t.eq(hex.encode(d:script(1)), "00149c90f934ea51fa0f6504177043e0908da6929983")
  -- The same addresses as the HD module derives from the phrase.
  local account = hd.from_mnemonic(ABANDON):derive "m/84'/0'/0'"
  t.eq(d:addresses(5, 2), account:addresses(0, 5, 2))
end)

t.test("checksums: BIP380's vector, a checksum given is verified", function()
  t.eq(descriptor.checksum "raw(deadbeef)", "89f8spxm")
  t.eq(descriptor.checksum "raw(deadbeef)#89f8spxm", "89f8spxm")
  local ok, e = pcall(descriptor.checksum, "raw(deedbeef)#89f8spxm")
  t.ok(not ok and e.kind == "descriptor_checksum" and e.position == 14, tostring(e))
  t.ok(descriptor.parse("wpkh(" .. ACCOUNT .. "/0/*)#afwvtk2s"))
end)

t.test("multipath: a list of descriptors, and a network option", function()
  local d = descriptor.parse("wpkh(" .. ACCOUNT .. "/<0;1>/*)")
  local parts = d:multipath()
  t.eq(#parts, 2)
  t.eq(tostring(parts[2]), "wpkh(" .. ACCOUNT .. "/1/*)#vatdkr6g")
  t.eq(#descriptor.parse(tostring(parts[1])):multipath(), 1)
  t.raises(function() d:address(0) end, "multipath")
  local info = d:info()
  t.eq(info.multipath, 2)
  t.eq(info.keys[1].origin.fingerprint, "73c5da0a")
  t.eq(info.keys[1].multipath, { 0, 1 })
  t.eq(info.form, "wpkh")
  -- BIP386: tr() with an x-only key; hex keys take any network.
  local tr = descriptor.parse "tr(a34b99f22c790c4e36b2b3c2c35a36db06226e41c692fc82b8b56ac1c540c5bd)"
  t.eq(hex.encode(tr:script()), "512077aab6e066f8a7419c5ab714c12c67d25007ed55a43cadcacb4d7a970a093f11")
  t.eq(tr:address(0, { network = "regtest" }):sub(1, 6), "bcrt1p")
  t.raises(function() d:multipath()[1]:address(0, { network = "testnet" }) end, "xpub")
  t.raises(function() tr:address(0, { network = "moon" }) end, "unknown network")
  t.raises(function() tr:address(0, { netwrok = "testnet" }) end, "unknown option")
end)

t.test("errors are tables with kind, message and position", function()
  local ok, e = pcall(descriptor.parse, "wpkh(" .. ACCOUNT .. "/0H/*)")
  t.ok(not ok)
  t.eq(e.kind, "invalid_descriptor")
  t.eq(e.position, 138)
  t.ok(tostring(e):find("not a hardened marker", 1, true))
  ok, e = pcall(descriptor.parse, "pkh(L4rK1yDtCWekvXuE6oXD9jCYfFNV2cWRpVuPLBcCU2z8TrisoyY1)")
  t.eq(e.kind, "private_key_in_descriptor")
  t.ok(not tostring(e):find("L4rK1yDt", 1, true))
  ok, e = pcall(descriptor.parse, "tr(" .. ACCOUNT .. "/0/*,pk(" .. ACCOUNT .. "/1/*))")
  t.eq(e.kind, "unsupported_descriptor")
  t.raises(function() descriptor.parse({}) end, "string expected")
  t.raises(function() descriptor.parse("wpkh(" .. ACCOUNT .. "/0/*)"):address(-1) end, "out of range")
end)

t.run()
