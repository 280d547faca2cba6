-- Tests for keyhost.ec. Run: keyhost run Tests/lua/ec_test.lua
-- Expected values come from BIP340's test-vectors.csv, RFC 6979 secp256k1 vectors (trezor-crypto),
-- and BIP84's test vectors (WIF and public key of m/84'/0'/0'/0/0 of the BIP39 test mnemonic).
local t = require "keyhost.test"
local ec = require "keyhost.ec"
local hd = require "keyhost.hd"
local hash = require "keyhost.hash"
local hex = require "keyhost.hex"

local ABANDON = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"
local ZERO32 = string.rep("\0", 32)
local ONE = hex.decode("0000000000000000000000000000000000000000000000000000000000000001")
local G = hex.decode("0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798")
local N = hex.decode("fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141")

-- a - b for equal-length big-endian byte strings (a >= b)
local function sub_bytes(a, b)
  local out, borrow = {}, 0
  for i = #a, 1, -1 do
    local d = a:byte(i) - b:byte(i) - borrow
    borrow = d < 0 and 1 or 0
    out[i] = string.char(d % 256)
  end
  return table.concat(out)
end

t.test("keys: from bytes, generate, WIF, public forms", function()
  local key = ec.private_key(ONE)
  t.eq(key:bytes(), ONE)
  t.eq(key:public_key(), G)
  t.eq(ec.public_key(key), G)
  t.eq(#key:public_key({ compressed = false }), 65)
  t.eq(key:public_key({ x_only = true }), G:sub(2))
  t.eq(ec.public_key(key:public_key({ compressed = false })), G, "uncompressed converts to compressed")
  t.eq(ec.public_key(G, { compressed = false }):sub(1, 1), "\4")
  local fresh = ec.generate()
  t.eq(#fresh:bytes(), 32)
  t.ok(fresh:bytes() ~= ec.generate():bytes())
  -- BIP84 m/84'/0'/0'/0/0
  local wif_key = ec.from_wif("KyZpNDKnfs94vbrwhJneDi77V6jF64PWPF8x5cdJb8ifgg2DUc9d")
  t.eq(hex.encode(wif_key:public_key()), "0330d54fd0dd420a6e5f8d3624f5f3482cae350f79d5f0753bf5beef9c2d91af3c")
  t.eq(wif_key:wif(), "KyZpNDKnfs94vbrwhJneDi77V6jF64PWPF8x5cdJb8ifgg2DUc9d")
  t.eq(wif_key:address(), "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu")
  -- BIP49 testnet key; the version byte picks the coin when none is given
  local testnet = ec.from_wif("cULrpoZGXiuC19Uhvykx7NugygA3k86b3hmdCeyvHYQZSxojGyXJ")
  t.eq(hex.encode(testnet:bytes()), "c9bdb49cfbaedca21c4b1f3a7803c34636b1d7dc55a717132443fc3f4c5867e8")
  t.raises(function() ec.from_wif("cULrpoZGXiuC19Uhvykx7NugygA3k86b3hmdCeyvHYQZSxojGyXJ", { coin = "btc" }) end,
    "invalid WIF private key: version byte 0xef is not Bitcoin's %(0x80%)")
  -- an HD node is accepted wherever a key is
  local node = hd.from_mnemonic(ABANDON):derive("m/84'/0'/0'/0/0")
  t.eq(ec.private_key(node):wif(), "KyZpNDKnfs94vbrwhJneDi77V6jF64PWPF8x5cdJb8ifgg2DUc9d")
  t.eq(ec.public_key(node), node:public_key())
end)

t.test("key errors name the problem", function()
  t.raises(function() ec.private_key("short") end, "invalid private key: 5 bytes; a secp256k1 private key is exactly 32 bytes")
  t.raises(function() ec.private_key(ZERO32) end, "invalid private key: value is 0 or not below the curve order n")
  t.raises(function() ec.private_key(N) end, "not below the curve order n")
  t.raises(function() ec.private_key(42) end, "expected, got number")
  t.raises(function() ec.private_key({}) end,
    "bad argument #1 to 'private_key' %(32%-byte string, keyhost%.ec%.private_key or keyhost%.hd%.node expected, got table%)")
  -- x of BIP340 vector 5 has no curve point
  t.raises(function() ec.public_key("\2" .. hex.decode("EEFDEA4CDB677750A420FEE807EACF21EB9898AE79B9768766E4FAA04A2D4A34")) end, "invalid public key: the point is not on the secp256k1 curve")
  t.raises(function() ec.public_key("\2" .. G) end, "invalid public key: 34 bytes; expected 32 bytes %(x%-only%), 33")
  t.raises(function() ec.public_key("\5" .. G:sub(2)) end, "prefix byte 0x05 is not 02 or 03")
  t.raises(function() ec.public_key(G, { x_only = true, compressed = false }) end, "exclude each other")
  t.raises(function() ec.public_key(G, { compresed = true }) end, "unknown option 'compresed'; known options: compressed, x_only")
  t.raises(function() ec.from_wif("KyZpNDKnfs94vbrwhJneDi77V6jF64PWPF8x5cdJb8ifgg2DUc9e") end, "invalid WIF private key: bad checksum")
  local public_node = hd.from_mnemonic(ABANDON):derive("m/84'/0'/0'"):public()
  t.raises(function() ec.sign(public_node, ZERO32) end, "keyhost%.hd%.node is public%-only")
end)

t.test("ECDSA: RFC 6979 signatures (trezor-crypto vectors), low-S", function()
  local vectors = {
    { "0000000000000000000000000000000000000000000000000000000000000001", "Satoshi Nakamoto",
      "934b1ea10a4b3c1757e2b0c017d0b6143ce3c9a7e6a4a49860d7a6ab210ee3d8", "2442ce9d2b916064108014783e923ec36b49743e2ffa1c4496f01a512aafd9e5" },
    { "fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364140", "Satoshi Nakamoto",
      "fd567d121db66e382991534ada77a6bd3106f0a1098c231e47993447cd6af2d0", "6b39cd0eb1bc8603e159ef5c20a5c8ad685a45b06ce9bebed3f153d10d93bed5" },
    { "f8b8af8ce3c7cca5e300d33939540c10d45ce001b8f252bfbc57ba0342904181", "Alan Turing",
      "7063ae83e7f62bbb171798131b4a0564b956930092b33b07b395615d9ec7e15c", "58dfcc1e00a35e1572f366ffe34ba0fc47db1e7189759b9fb233c5b05ab388ea" },
  }
  for _, v in ipairs(vectors) do
    local key, digest = hex.decode(v[1]), hash.sha256(v[2])
    local sig = ec.sign(key, digest)
    t.eq(hex.encode(sig.r), v[3])
    t.eq(hex.encode(sig.s), v[4])
    t.eq(sig.compact, sig.r .. sig.s)
    t.eq(sig.rsv, sig.compact .. string.char(sig.v))
    t.eq(sig.v, 27 + sig.recovery_id)
    t.eq(sig.der:byte(1), 0x30)
    t.eq(ec.private_key(key):sign(digest), sig, "method and function agree")
    local pub = ec.public_key(ec.private_key(key))
    for _, form in ipairs({ sig.compact, sig.der, sig.rsv, sig }) do
      t.eq(ec.verify(pub, digest, form), true)
    end
    t.eq(ec.recover(digest, sig.rsv), pub)
    t.eq(ec.recover(digest, sig), pub)
    t.eq(#ec.recover(digest, sig, { compressed = false }), 65)
  end
end)

t.test("x-only keys: ec.public_key lifts 32 bytes to the even-y point (BIP340 lift_x)", function()
  t.eq(ec.public_key(G:sub(2)), "\2" .. G:sub(2))
  t.eq(ec.public_key(G:sub(2), { x_only = true }), G:sub(2))
  -- a key with odd y: its x-only form names the even-y twin, as BIP340 says
  local odd = hex.decode("0330d54fd0dd420a6e5f8d3624f5f3482cae350f79d5f0753bf5beef9c2d91af3c")
  t.eq(ec.public_key(odd:sub(2)), "\2" .. odd:sub(2))
  t.raises(function() ec.public_key(hex.decode("EEFDEA4CDB677750A420FEE807EACF21EB9898AE79B9768766E4FAA04A2D4A34")) end,
    "not on the secp256k1 curve")
end)

t.test("ECDSA: verify ignores v of a 65-byte r..s..v signature, as documented", function()
  local key = ec.private_key(hex.decode("0000000000000000000000000000000000000000000000000000000000000001"))
  local digest = hash.sha256("Satoshi Nakamoto")
  local sig = ec.sign(key, digest)
  for _, v in ipairs({ 0, 1, 27, 28, 35, 99, 255 }) do
    t.eq(ec.verify(key, digest, sig.compact .. string.char(v)), true, "v = " .. v)
  end
end)

t.test("ECDSA: verify returns false for other digests, keys and high-S", function()
  local key = ec.private_key(ONE)
  local digest = hash.sha256("Satoshi Nakamoto")
  local sig = key:sign(digest)
  t.eq(ec.verify(G, hash.sha256("Satoshi Nakamoto!"), sig.compact), false)
  t.eq(ec.verify(ec.generate(), digest, sig.compact), false)
  local high_s = sig.r .. sub_bytes(N, sig.s)
  t.eq(ec.verify(G, digest, high_s), false, "high-S is rejected; normalize first")
end)

t.test("ECDSA: malformed input raises", function()
  local key = ec.private_key(ONE)
  t.raises(function() key:sign("too short") end, "invalid digest: 9 bytes; ECDSA signs a 32%-byte hash")
  t.raises(function() ec.sign(ONE, string.rep("\1", 33)) end, "invalid digest: 33 bytes")
  t.raises(function() ec.verify(G, ZERO32, "\1\2\3") end, "invalid signature: 3 bytes is neither 64%-byte compact")
  t.raises(function() ec.verify(G, ZERO32, "\48\1\2") end, "not a DER%-encoded ECDSA signature")
  t.raises(function() ec.verify(G, ZERO32, string.rep("\0", 64)) end, "r or s is zero")
  t.raises(function() ec.verify(G, ZERO32, {}) end, "signature table needs a 'compact' or 'der' field")
  t.raises(function() ec.verify(G, ZERO32, 5) end, "bad argument #3 to 'verify' %(64%-byte compact r%.%.s, 65%-byte r%.%.s%.%.v, DER, or a signature table expected, got number%)")
  t.raises(function() ec.verify(G, ZERO32, true) end, "bad argument #3 to 'verify'")
  t.raises(function() ec.recover(ZERO32, string.rep("\1", 64)) end, "invalid signature: 64 bytes; expected 65 bytes")
  t.raises(function() ec.recover(ZERO32, string.rep("\1", 64) .. "\9") end, "recovery id 9 is not 0%.%.%.3")
end)

t.test("BIP340: test vectors 0, 1 and 2 sign and verify; failing ones do not verify", function()
  local vectors = {
    { "0000000000000000000000000000000000000000000000000000000000000003", "F9308A019258C31049344F85F89D5229B531C845836F99B08601F113BCE036F9",
      "0000000000000000000000000000000000000000000000000000000000000000", "0000000000000000000000000000000000000000000000000000000000000000",
      "E907831F80848D1069A5371B402410364BDF1C5F8307B0084C55F1CE2DCA821525F66A4A85EA8B71E482A74F382D2CE5EBEEE8FDB2172F477DF4900D310536C0" },
    { "B7E151628AED2A6ABF7158809CF4F3C762E7160F38B4DA56A784D9045190CFEF", "DFF1D77F2A671C5F36183726DB2341BE58FEAE1DA2DECED843240F7B502BA659",
      "0000000000000000000000000000000000000000000000000000000000000001", "243F6A8885A308D313198A2E03707344A4093822299F31D0082EFA98EC4E6C89",
      "6896BD60EEAE296DB48A229FF71DFE071BDE413E6D43F917DC8DCF8C78DE33418906D11AC976ABCCB20B091292BFF4EA897EFCB639EA871CFA95F6DE339E4B0A" },
    { "C90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B14E5C9", "DD308AFEC5777E13121FA72B9CC1B7CC0139715309B086C960E18FD969774EB8",
      "C87AA53824B4D7AE2EB035A2B5BBBCCC080E76CDC6D1692C4B0B62D798E6D906", "7E2D58D8B3BCDF1ABADEC7829054F90DDA9805AAB56C77333024B9D0A508B75C",
      "5831AAEED7B44BB74E5EAB94BA9D4294C49BCF2A60728D8B4C200F50DD313C1BAB745879A5AD954A72C45A91C3A51D3C7ADEA98D82F8481E0E1E03674A6F3FB7" },
  }
  for i, v in ipairs(vectors) do
    local seckey, pub, aux, msg, sig = hex.decode(v[1]), hex.decode(v[2]), hex.decode(v[3]), hex.decode(v[4]), hex.decode(v[5])
    t.eq(ec.schnorr_sign(seckey, msg, { aux = aux }), sig, "vector " .. (i - 1))
    t.eq(ec.private_key(seckey):sign_schnorr(msg, { aux = aux }), sig)
    t.eq(ec.private_key(seckey):public_key({ x_only = true }), pub)
    t.eq(ec.schnorr_verify(pub, msg, sig), true)
  end
  -- vector 7 (negated message) and 8 (negated s) must fail
  local pub = hex.decode("DFF1D77F2A671C5F36183726DB2341BE58FEAE1DA2DECED843240F7B502BA659")
  local msg = hex.decode("243F6A8885A308D313198A2E03707344A4093822299F31D0082EFA98EC4E6C89")
  t.eq(ec.schnorr_verify(pub, msg, hex.decode(
    "1FA62E331EDBC21C394792D2AB1100A7B432B013DF3F6FF4F99FCB33E0E1515F28890B3EDB6E7189B630448B515CE4F8622A954CFE545735AAEA5134FCCDB2BD")), false)
  t.eq(ec.schnorr_verify(pub, msg, hex.decode(
    "6CFF5C3BA86C69EA4B7376F31A9BCB4F74C1976089B2D9963DA2E5543E177769961764B3AA9B2FFCB6EF947B6887A226E8D7C93E00C5ED0C1834FF0D0C2E6DA6")), false)
  -- vector 5: the public key is not on the curve
  t.raises(function()
    ec.schnorr_verify(hex.decode("EEFDEA4CDB677750A420FEE807EACF21EB9898AE79B9768766E4FAA04A2D4A34"), msg, string.rep("\1", 64))
  end, "not on the secp256k1 curve")
end)

t.test("BIP340: fresh aux randomness by default, still verifiable; bad input raises", function()
  local key = ec.generate()
  local msg = hash.sha256("hello")
  local a, b = key:sign_schnorr(msg), key:sign_schnorr(msg)
  t.ok(a ~= b, "aux randomness differs")
  t.eq(ec.schnorr_verify(key, msg, a), true)
  t.eq(ec.schnorr_verify(key:public_key(), msg, b), true, "a 33-byte key works as x-only")
  t.eq(ec.schnorr_verify(key, hash.sha256("other"), a), false)
  t.raises(function() key:sign_schnorr(msg, { aux = "short" }) end, "auxiliary randomness: 5 bytes; BIP340 uses exactly 32 bytes")
  t.raises(function() ec.schnorr_verify(key, msg, "short") end, "invalid signature: 5 bytes; expected 64 bytes")
  t.raises(function() ec.schnorr_sign(key, msg, { rand = ZERO32 }) end, "unknown option 'rand'; known options: aux")
end)

t.test("ECDH: both sides get the same x coordinate", function()
  local a, b = ec.generate(), ec.generate()
  local ab = ec.ecdh(a, b:public_key())
  t.eq(#ab, 32)
  t.eq(ab, b:ecdh(a:public_key()))
  t.eq(ab, ec.ecdh(b, a))
  -- 1 * P = P: the x coordinate of G
  t.eq(ec.ecdh(ONE, G), G:sub(2))
end)

t.test("Ethereum personal messages (EIP-191)", function()
  local node = hd.from_mnemonic(ABANDON):derive("m/44'/60'/0'/0/0")
  local address = "0x9858EfFD232B4033E47d90003D41EC34EcaEda94"
  local msg = "hello keyhost"
  t.eq(ec.eth_message_hash(msg), hash.keccak256("\25Ethereum Signed Message:\n13" .. msg))
  local sig = ec.eth_sign_message(node, msg)
  t.eq(#sig, 65)
  t.ok(sig:byte(65) == 27 or sig:byte(65) == 28, "v is 27 or 28")
  t.eq(ec.eth_sign_message(node:private_key(), msg), sig, "RFC 6979: deterministic")
  t.eq(ec.eth_recover_message(msg, sig), address)
  t.ok(ec.eth_recover_message(msg .. "!", sig) ~= address)
  t.eq(ec.recover(ec.eth_message_hash(msg), sig), node:public_key())
  t.raises(function() ec.eth_recover_message(msg, sig:sub(1, 64)) end, "invalid signature: 64 bytes; expected 65 bytes")
end)

t.test("Bitcoin signed messages", function()
  local account = hd.from_mnemonic(ABANDON):derive("m/84'/0'/0'")
  local node = account:derive("0/0")
  local msg = "hello keyhost"
  local cases = {
    { "p2pkh", node:address("p2pkh") },
    { "p2wpkh", "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu" },
    { "p2sh-p2wpkh", node:address("p2sh-p2wpkh") },
  }
  for _, case in ipairs(cases) do
    local sig = ec.btc_sign_message(node, msg, { kind = case[1] })
    t.ok(sig:match("^[%w+/]+=*$") and #sig == 88, "base64 of 65 bytes")
    t.eq(ec.btc_verify_message(case[2], msg, sig), true, case[1])
    t.eq(ec.btc_verify_message(case[2], msg .. ".", sig), false)
    t.eq(ec.btc_verify_message(account:derive("0/1"):address(case[1]), msg, sig), false)
  end
  -- p2pkh header (31..34) is Bitcoin Core's format
  t.eq(ec.btc_sign_message(node, msg), ec.btc_sign_message(node, msg, { kind = "p2pkh" }))
  local ltc = node:address({ coin = "ltc", kind = "p2pkh" })
  t.eq(ec.btc_verify_message(ltc, msg, ec.btc_sign_message(node, msg), { coin = "ltc" }), true)
  t.raises(function() ec.btc_verify_message(ltc, msg, ec.btc_sign_message(node, msg)) end, "wrong network")
  t.raises(function() ec.btc_verify_message(cases[2][2], msg, "not base64!") end, "not base64 of a 65%-byte compact signature")
  t.raises(function() ec.btc_sign_message(node, msg, { kind = "p2tr" }) end, "no p2tr addresses")
  t.eq(ec.btc_message_hash(msg), hash.sha256d("\24Bitcoin Signed Message:\n\13" .. msg))
end)

t.test("private key objects: tostring hides the key, close wipes it", function()
  local key = ec.private_key(ONE)
  t.eq(tostring(key), "keyhost.ec.private_key(public key 0279be667e…16f81798)")
  local secret_hex = hex.encode(hex.decode("e8f32e723decf4051aefac8e2c93c9c5b214313817cdb01a1494b917c8436b35"))
  local other = ec.private_key(hex.decode(secret_hex))
  t.ok(not tostring(other):find(secret_hex:sub(1, 10), 1, true))
  local _, err = pcall(ec.sign, other, "x")
  t.ok(not tostring(err):find(secret_hex:sub(1, 10), 1, true))
  key:close()
  t.eq(tostring(key), "keyhost.ec.private_key (closed)")
  t.raises(function() key:bytes() end, "keyhost%.ec%.private_key is closed")
  t.raises(function() ec.sign(key, ZERO32) end, "keyhost%.ec%.private_key is closed")
end)

t.test("an uncompressed WIF key keeps its compression: WIF, public key, p2pkh address, signed message", function()
  local address = require "keyhost.address"
  local WIF = "5JJEwxKq7P8tf1USbspR3vofkB6Fv8Ns58PM6RYntQHqzUZSjwa"
  local key = ec.from_wif(WIF)
  t.eq(key:wif(), WIF)
  t.eq(#key:public_key(), 65)
  t.eq(#key:public_key({ compressed = true }), 33)
  t.eq(key:address("p2pkh"), "13nBNZJSJbw2nLyqCoZMY5PEKcf75W5o7N")
  t.eq(address.encode(key:public_key(), "p2pkh"), "13nBNZJSJbw2nLyqCoZMY5PEKcf75W5o7N", "a 65-byte key hashes all 65 bytes")
  t.eq(address.encode(key, "p2pkh"), "13nBNZJSJbw2nLyqCoZMY5PEKcf75W5o7N")
  for _, kind in ipairs({ "p2wpkh", "p2sh-p2wpkh", "p2tr" }) do
    t.raises(function() key:address(kind) end, "uncompressed public key has no " .. kind:gsub("%-", "%%-") .. " address")
    t.raises(function() address.encode(key:public_key(), kind) end, "uncompressed public key")
  end
  local sig = ec.btc_sign_message(key, "hello")
  t.eq(ec.btc_verify_message("13nBNZJSJbw2nLyqCoZMY5PEKcf75W5o7N", "hello", sig), true)
  -- btclib's signature (RFC 6979) of "hello" with this key: the uncompressed header byte 28
  t.eq(sig, "HOzR0itMIjZq/EfX28KQ5MEI1uotg3z3FH5eM0xfnMXjBM10dTJx/loGDMVulZWjAnvDLQBGDs5o0v9vbdScqtY=")
  t.eq(ec.from_wif(key:wif({ compressed = true })):address("p2pkh"), ec.private_key(key:bytes()):address("p2pkh"))
end)

t.run()
