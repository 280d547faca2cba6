-- Sign an ERC-2612 permit (EIP-712 typed data): the owner lets a spender move tokens without an
-- on-chain approve. Shows the digest a wallet displays, the signature (v, r, s as permit() takes
-- them) and recovery of the signer. No network, no card.
-- Run: keyhost run examples/eip712_permit.lua
local eth = require "keyhost.eth"
local hd = require "keyhost.hd"
local hex = require "keyhost.hex"

local phrase = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"
local owner_node <close> = hd.from_mnemonic(phrase)
local owner = owner_node:derive("m/44'/60'/0'/0/0")
local owner_address = owner:address { coin = "eth" }

local permit = {
  types = {
    EIP712Domain = {
      { name = "name", type = "string" },
      { name = "version", type = "string" },
      { name = "chainId", type = "uint256" },
      { name = "verifyingContract", type = "address" },
    },
    Permit = {
      { name = "owner", type = "address" },
      { name = "spender", type = "address" },
      { name = "value", type = "uint256" },
      { name = "nonce", type = "uint256" },
      { name = "deadline", type = "uint256" },
    },
  },
  primaryType = "Permit",
  domain = { name = "USD Coin", version = "2", chainId = 1, verifyingContract = "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48" },
  message = {
    owner = owner_address,
    spender = "0x1111111254EEB25477B68fb85Ed929f73A960582",
    value = "115792089237316195423570985008687907853269984665640564039457584007913129639935", -- max uint256: unlimited
    nonce = 0,
    deadline = 1893456000,  -- 2030-01-01
  },
}

local digest = eth.typed_data_hash(permit)
print("owner     " .. owner_address)
print("digest    0x" .. hex.encode(digest))

local sig = eth.sign_typed_data(owner, permit)
print("v         " .. sig.v)
print("r         0x" .. hex.encode(sig.r))
print("s         0x" .. hex.encode(sig.s))
print("signature 0x" .. hex.encode(sig.rsv))

-- Anyone can check who signed: recovery gives the owner back.
local signer = eth.recover_typed_data(permit, sig)
print("recovered " .. signer)
assert(signer == owner_address)

-- A changed field gives another digest, so the signature no longer recovers to the owner.
permit.message.value = "1000000"
assert(eth.recover_typed_data(permit, sig) ~= owner_address)
