-- Tests for keyhost.hash. Run: keyhost run Tests/lua/hash_test.lua
-- Known answers: FIPS 180-2 (SHA-2), RIPEMD-160 authors' test values, Keccak-256 of "" (Ethereum),
-- RFC 4231 (HMAC), RFC 5869 (HKDF), PBKDF2-HMAC-SHA256 "password"/"salt", BIP39 (PBKDF2-HMAC-SHA512),
-- BIP173 (HASH160 of the generator's compressed key).
local t = require "keyhost.test"
local hash = require "keyhost.hash"
local hex = require "keyhost.hex"

local function h(fn, input) return hex.encode(fn(input)) end

t.test("SHA-256, SHA-512, RIPEMD-160 known answers", function()
  t.eq(h(hash.sha256, ""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
  t.eq(h(hash.sha256, "abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
  t.eq(h(hash.sha512, "abc"),
    "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f")
  t.eq(h(hash.ripemd160, ""), "9c1185a5c5e9fc54612808977ee8f548b2258d31")
  t.eq(h(hash.ripemd160, "abc"), "8eb208f7e05d987a9b044a8e98c6b087f15a0bfc")
  t.eq(h(hash.ripemd160, "message digest"), "5d0689ef49d2fae572b881b123a85ffa21595f36")
end)

t.test("composites: sha256d, hash160; keccak256", function()
  t.eq(hash.sha256d("abc"), hash.sha256(hash.sha256("abc")))
  t.eq(hash.hash160("abc"), hash.ripemd160(hash.sha256("abc")))
  -- BIP173: bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4 is P2WPKH of the generator's compressed key
  t.eq(h(hash.hash160, hex.decode("0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798")),
    "751e76e8199196d454941c45d1b3a323f1433bd6")
  t.eq(h(hash.keccak256, ""), "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470")
  t.eq(#hash.keccak256(string.rep("x", 1000)), 32)
end)

t.test("tagged hashes take any bytes as the tag (BIP340 tags are byte strings)", function()
  local tag = "\255\254\0tag"
  local th = hash.sha256(tag)
  t.eq(hash.tagged(tag, "data"), hash.sha256(th .. th .. "data"))
end)

t.test("tagged hashes follow BIP340's definition", function()
  local tag = hash.sha256("BIP0340/challenge")
  t.eq(hash.tagged("BIP0340/challenge", "data"), hash.sha256(tag .. tag .. "data"))
  local tweak = hash.sha256("TapTweak")
  t.eq(hash.tagged("TapTweak", "\1\2"), hash.sha256(tweak .. tweak .. "\1\2"))
end)

t.test("HMAC-SHA256/512: RFC 4231 test cases 1, 2 and 6", function()
  local cases = {
    { "0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", "4869205468657265",
      "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7",
      "87aa7cdea5ef619d4ff0b4241a1d6cb02379f4e2ce4ec2787ad0b30545e17cdedaa833b7d6b8a702038b274eaea3f4e4be9d914eeb61f1702e696c203a126854" },
    { "4a656665", "7768617420646f2079612077616e7420666f72206e6f7468696e673f",
      "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
      "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737" },
    { string.rep("aa", 131), "54657374205573696e67204c6172676572205468616e20426c6f636b2d53697a65204b6579202d2048617368204b6579204669727374",
      "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54",
      "80b24263c7c1a3ebb71493c1dd7be8b49b46d1f41b4aeec1121b013783f8f3526b56d037e05f2598bd0fd2215d6a1e5295e64f73f63f0aec8b915a985d786598" },
  }
  for _, c in ipairs(cases) do
    local key, data = hex.decode(c[1]), hex.decode(c[2])
    t.eq(hex.encode(hash.hmac_sha256(key, data)), c[3])
    t.eq(hex.encode(hash.hmac_sha512(key, data)), c[4])
  end
  t.eq(#hash.hmac_sha256("", ""), 32)
end)

t.test("PBKDF2: SHA-256 published vectors and the BIP39 seed (SHA-512)", function()
  t.eq(hex.encode(hash.pbkdf2_sha256("password", "salt", 1, 32)), "120fb6cffcf8b32c43e7225256c4f837a86548c92ccc35480805987cb70be17b")
  t.eq(hex.encode(hash.pbkdf2_sha256("password", "salt", 2, 32)), "ae4d0c95af6b46d32d0adff928f06dd02a303f8ef3c251dfd6e2d85a95474c43")
  t.eq(hex.encode(hash.pbkdf2_sha256("password", "salt", 4096, 32)), "c5e478d59288c841aa530db6845c4c8d962893a001ce4e11a4963873aa98134a")
  -- BIP39: seed = PBKDF2-HMAC-SHA512(mnemonic, "mnemonic" .. passphrase, 2048, 64); Trezor vector 1
  local mnemonic = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"
  t.eq(hex.encode(hash.pbkdf2_sha512(mnemonic, "mnemonicTREZOR", 2048, 64)),
    "c55257c360c07c72029aebc1b53c05ed0362ada38ead3e3e9efa3708e53495531f09a6987599d18264c1e1c92f2cf141630c7a3c4ab7c81b2f001698e7463b04")
end)

t.test("HKDF-SHA256: RFC 5869 test cases 1 and 3 (case 2 is in HashTests)", function()
  local ikm = hex.decode("0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b")
  t.eq(hex.encode(hash.hkdf_sha256(ikm, hex.decode("000102030405060708090a0b0c"), hex.decode("f0f1f2f3f4f5f6f7f8f9"), 42)),
    "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865")
  t.eq(hex.encode(hash.hkdf_sha256(ikm, "", "", 42)),
    "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8")
  t.eq(hash.hkdf_sha256(ikm, nil, nil, 42), hash.hkdf_sha256(ikm, "", "", 42))
end)

t.test("HKDF-SHA256: an empty input key stays empty (not one zero byte)", function()
  -- Independent HKDF over Python's hmac module, RFC 5869 steps with IKM = "", no salt, no info.
  t.eq(hex.encode(hash.hkdf_sha256("", nil, nil, 42)),
    "eb70f01dede9afafa449eee1b1286504e1f62388b3f7dd4f956697b0e828fe181e59c2ec0fe6e7e7ac26")
  t.ok(hash.hkdf_sha256("", nil, nil, 42) ~= hash.hkdf_sha256("\0", nil, nil, 42))
end)

t.test("bad arguments raise in Lua's wording", function()
  t.raises(function() hash.sha256() end, "bad argument #1 to 'sha256' %(string expected, got no value%)")
  t.raises(function() hash.keccak256({}) end, "bad argument #1 to 'keccak256' %(string expected, got table%)")
  t.raises(function() hash.hmac_sha256("key") end, "bad argument #2 to 'hmac_sha256' %(string expected, got no value%)")
  t.raises(function() hash.tagged(nil, "x") end, "bad argument #1 to 'tagged'")
  t.raises(function() hash.pbkdf2_sha512("pw", "salt", 0, 64) end, "bad argument #3 to 'pbkdf2_sha512' %(iterations 0 is out of range; use 1")
  t.raises(function() hash.pbkdf2_sha512("pw", "salt", 1, 0) end, "bad argument #4 to 'pbkdf2_sha512' %(length 0 is out of range")
  t.raises(function() hash.pbkdf2_sha256("pw", "salt", 1.5, 32) end, "number has no integer representation")
  t.raises(function() hash.hkdf_sha256("k", "", "", 9000) end, "length 9000 is out of range; use 1%.%.%.8160")
  t.eq(hash.sha256(123), hash.sha256("123"), "numbers convert to strings, as in Lua's string functions")
end)

t.run()
