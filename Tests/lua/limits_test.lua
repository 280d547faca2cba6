-- Every public text parser checks a size limit first: 100 KB of input fails at once, naming the limit.
-- Run: keyhost run Tests/lua/limits_test.lua
local t = require "keyhost.test"
local ec = require "keyhost.ec"
local hd = require "keyhost.hd"
local address = require "keyhost.address"
local discovery = require "keyhost.discovery"

local BIG = string.rep("2", 100 * 1024)          -- not "1" (leading zeros are cheap): the quadratic case
local BIG_WORDS = string.rep("abandon ", 12800)  -- ~100 KB of valid words
local BIG_PATH = "m/" .. string.rep("0/", 50 * 1024)
local BIG_HEXISH = "0x" .. string.rep("ab", 50 * 1024)

local cases = {
  { "ec.from_wif", function() return ec.from_wif(BIG) end, "over the 128%-character limit" },
  { "ec.from_wif{coin}", function() return ec.from_wif(BIG, { coin = "ltc" }) end, "over the 128%-character limit" },
  { "hd.from_extended", function() return hd.from_extended(BIG) end, "over the 128%-character limit" },
  { "hd.validate_mnemonic", function() return hd.validate_mnemonic(BIG_WORDS) end, "over the 1024%-byte limit" },
  { "hd.from_mnemonic", function() return hd.from_mnemonic(BIG_WORDS) end, "over the 1024%-byte limit" },
  { "hd.mnemonic_to_entropy", function() return hd.mnemonic_to_entropy(BIG_WORDS) end, "over the 1024%-byte limit" },
  { "hd.parse_path", function() return hd.parse_path(BIG_PATH) end, "over the 3072%-character limit" },
  { "node:derive", function() return hd.from_seed(string.rep("\1", 32)):derive(BIG_PATH) end, "over the 3072%-character limit" },
  { "address.decode", function() return address.decode(BIG) end, "over the 128%-character limit" },
  { "address.decode bech32", function() return address.decode("bc1" .. BIG) end, "over the 128%-character limit" },
  { "address.decode eth", function() return address.decode(BIG_HEXISH, { coin = "eth" }) end, "over the 128%-character limit" },
  { "address.decode bch", function() return address.decode("bitcoincash:" .. BIG, { coin = "bch" }) end, "over the 128%-character limit" },
  { "address.validate", function() return address.validate(BIG) end, "over the 128%-character limit" },
  { "address.eth_checksum", function() return address.eth_checksum(BIG_HEXISH) end, "over the 128%-character limit" },
  { "ec.btc_verify_message address", function() return ec.btc_verify_message(BIG, "m", "sig") end, "over the 128%-character limit" },
  { "ec.btc_verify_message signature", function()
      return ec.btc_verify_message("1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2", "m", string.rep("A", 100 * 1024))
    end, "over the 128%-character limit" },
  { "ec.verify DER", function()
      return ec.verify(ec.generate(), string.rep("\0", 32), "\48" .. string.rep("\2", 100 * 1024))
    end, "over the 72%-byte limit" },
  { "discovery.scan xpub", function() return discovery.scan { xpub = BIG, source = {} } end, "over the 128%-character limit" },
  { "discovery.scan mnemonic", function() return discovery.scan { mnemonic = BIG_WORDS, source = {} } end, "over the 1024%-byte limit" },
}

for _, case in ipairs(cases) do
  local name, fn, pattern = case[1], case[2], case[3]
  t.test(name .. ": 100 KB fails at once, naming the limit", function()
    local start = os.clock()
    t.raises(fn, pattern)
    t.ok(os.clock() - start < 0.5, name .. " took " .. (os.clock() - start) .. " s")
  end)
end

t.test("address.is_valid answers false at once for 100 KB", function()
  local start = os.clock()
  t.eq(address.is_valid(BIG), false)
  t.ok(os.clock() - start < 0.5)
end)

t.run()
