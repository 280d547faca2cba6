-- keyhost run examples/descriptors.lua
-- An account's output descriptors from a mnemonic (what `keyhost key xpub --descriptor` prints), their first
-- addresses, and a 2-of-2 wsh(sortedmulti) of two such accounts: the forms Bitcoin Core's importdescriptors takes.
local hd = require "keyhost.hd"
local hex = require "keyhost.hex"
local descriptor = require "keyhost.descriptor"

local function account(words, path)
  local master = hd.from_mnemonic(words)
  local node = master:derive(path)
  local origin = hex.encode(master:fingerprint()) .. path:sub(2):gsub("'", "h")
  return "[" .. origin .. "]" .. node:xpub("xpub")
end

local alice = account("abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about", "m/84'/0'/0'")
local wallet = descriptor.parse("wpkh(" .. alice .. "/<0;1>/*)")
local receive, change = table.unpack(wallet:multipath())
print(receive)                       -- wpkh([73c5da0a/84h/0h/0h]xpub6Cat…/0/*)#afwvtk2s
print(change)
print(table.concat(receive:addresses(0, 3), "\n"))
assert(receive:address(0) == "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu")

local bob = account("zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo wrong", "m/48'/0'/0'/2'")
local alice48 = account("abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about", "m/48'/0'/0'/2'")
local multisig = descriptor.parse("wsh(sortedmulti(2," .. alice48 .. "/<0;1>/*," .. bob .. "/<0;1>/*))")
-- embit derives the same first receive address for this descriptor.
assert(multisig:multipath()[1]:address(0) == "bc1qkpcfs6lhqh3rx63we7435nf3hqpghkdtmmmvln0yrssv0ulhmngs92dens")
print(multisig:info().form, multisig:multipath()[1]:address(0))
