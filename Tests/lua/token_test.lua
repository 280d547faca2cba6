-- Tests for keyhost.token: issue, wallets, runs in the worker, receipts, bytecode trust, card-bound wallets
-- (the software Keycard, applets 3.2 and 4.0). Run: keyhost run Tests/lua/token_test.lua
local t = require "keyhost.test"
local token = require "keyhost.token"
local card = require "keyhost.card"
local ec = require "keyhost.ec"
local hd = require "keyhost.hd"
local hex = require "keyhost.hex"

local ABANDON = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"
local PIN, PUK, PASSWORD = "123456", "987654321098", "KeycardTest"
local PATH = "m/44'/60'/0'/0/0"

local files = {}
local function wallet_path()
  local path = os.tmpname()
  os.remove(path)
  files[#files + 1] = path
  return path
end

--- A structured error raised by fn: its kind.
local function kind_of(fn)
  local ok, err = pcall(fn)
  t.ok(not ok, "expected an error")
  t.eq(type(err), "table", "structured error: " .. tostring(err))
  return err.kind, err
end

local VOUCHER = [[
local t = ...
t.emit { kind = "redeemed", amount = t.token.value, unit = t.token.unit, shop = t.args.shop, at = t.now }
]]

local issuer = ec.private_key(hex.decode("0b432b2677937381aef05bb02a66ecd012773062cf3fa2549e44f58ed2401710"))

t.test("issue, parse and inspect", function()
  local holder = ec.public_key(ec.generate())
  local text = token.issue { program = VOUCHER, value = 500, unit = "EUR-cent", to = holder, issuer_key = issuer,
                             expires = 1893456000, meta = { shop = "bakery", n = 3 }, limits = { instructions = 100000 } }
  t.ok(text:find("^khtok1:"), "armoured")
  local parsed = token.parse(text .. "\n# comment\n" .. text)
  t.eq(#parsed, 2)
  local tok = parsed[1]
  t.eq(#tok.id, 32)
  t.eq(tok.issuer, ec.public_key(issuer, { x_only = true }))
  t.eq(tok.holder, holder)
  t.eq(tok.value, 500)
  t.eq(tok.unit, "EUR-cent")
  t.eq(tok.expires, 1893456000)
  t.eq(tok.meta, { shop = "bakery", n = 3 })
  t.eq(tok.limits, { instructions = 100000 })
  t.eq(tok.program, VOUCHER)
  t.eq(tok.program_kind, "lua54-source")
  local shown = token.inspect(text)
  t.eq(shown.signature_valid, true)
  t.eq(token.inspect(tok).id, tok.id)
  -- Holder given as hex; issuer as an hd node.
  local node <close> = hd.from_mnemonic(ABANDON)
  local other = token.inspect(token.issue { program = "return", value = 0, unit = "X", to = hex.encode(holder), issuer_key = node })
  t.eq(other.issuer, node:public_key { x_only = true })
end)

t.test("issue refuses mistakes", function()
  local holder = ec.public_key(ec.generate())
  local base = { program = VOUCHER, value = 1, unit = "X", to = holder, issuer_key = issuer }
  local function with(k, v) local o = {} for a, b in pairs(base) do o[a] = b end o[k] = v return o end
  t.raises(function() token.issue(with("program", "local = 1")) end, "does not compile")
  t.raises(function() token.issue(with("value", -1)) end, "must be ≥ 0")
  t.raises(function() token.issue(with("unit", "two words")) end, "printable ASCII")
  t.raises(function() token.issue(with("to", "short")) end, "holder's compressed public key")
  t.raises(function() token.issue(with("issuer_key", nil)) end, "'issuer_key' is required")
  t.raises(function() token.issue(with("meta", { x = 1.5 })) end, "float")
  t.raises(function() token.issue(with("limits", { instr = 5 })) end, "unknown entry 'instr'")
  -- memory is in bytes: 64 (meant as MiB) is refused, naming the unit, the least a run needs and the fix.
  t.raises(function() token.issue(with("limits", { memory = 64 })) end, "'memory' is in bytes, and 64 bytes is below the")
  t.raises(function() token.issue(with("limits", { memory = 64 })) end, "write memory = 64 << 20")
  t.ok(token.issue(with("limits", { memory = 64 << 20 })))
  t.raises(function() token.issue(with("valu", 5)) end, "unknown option 'valu'")
  t.raises(function() token.parse("hello") end, "not a keyhost token")
end)

t.test("a software wallet: import, run once, receipt", function()
  local path = wallet_path()
  local w <close> = token.wallet.create(path)
  t.ok(tostring(w):find("software holder"), tostring(w))
  local holder = w:holder()
  t.eq(holder.kind, "software")
  t.eq(#holder.public_key, 33)
  t.eq(kind_of(function() token.wallet.create(path) end), "exists")

  local text = token.issue { program = VOUCHER, value = 500, unit = "EUR-cent", to = holder.public_key, issuer_key = issuer }
  local id = token.parse(text)[1].id
  t.eq(w:import(text), { { id = id, result = "added" } })
  t.eq(w:import(text), { { id = id, result = "already_present", state = "held" } })
  local list = w:list()
  t.eq(#list, 1)
  t.eq(list[1].state, "held")
  t.eq(list[1].value, 500)

  local before = os.time()
  local r = w:run(hex.encode(id):sub(1, 6), { shop = "bakery" })
  t.eq(r.token_id, id)
  t.ok(r.receipt:find("^khrcpt1:"))
  t.eq(#r.receipt_id, 32)
  t.ok(r.now >= before and r.now <= os.time() + 1, "now is the current time")
  t.eq(r.effects, { { kind = "redeemed", amount = 500, unit = "EUR-cent", shop = "bakery", at = r.now } })
  t.eq(w:inspect(id).state, "spent")
  t.eq(w:inspect(id).receipt_id, r.receipt_id)
  t.eq(w:receipt(hex.encode(id)), r.receipt)

  local kind, err = kind_of(function() w:run(id, { shop = "bakery" }) end)
  t.eq(kind, "already_spent")
  t.ok(tostring(err):find("already spent"), tostring(err))

  local report = token.verify_receipt(r.receipt)
  t.eq(report.valid, true)
  t.eq(report.issuer_signature_valid, true)
  t.eq(report.holder_signature_valid, true)
  t.eq(report.effects_match, true)
  t.eq(report.problems, {})
  t.eq(report.receipt_id, r.receipt_id)

  -- Any flipped character: either the receipt no longer parses, or it no longer holds.
  local body = r.receipt:sub(#"khrcpt1:" + 1)
  for _, at in ipairs { 10, #body // 2, #body - 5 } do
    local c = body:sub(at, at)
    local tampered = "khrcpt1:" .. body:sub(1, at - 1) .. (c == "A" and "B" or "A") .. body:sub(at + 1)
    local ok, rep = pcall(token.verify_receipt, tampered)
    t.ok(not ok or rep.valid == false, "tampered at " .. at .. " must not verify")
    if not ok then t.eq(type(rep), "table") end
  end
  w:close()
  t.ok(tostring(w):find("closed"))
  t.raises(function() w:list() end, "closed")

  -- Reopened, the wallet remembers.
  local again <close> = token.wallet.open(path)
  t.eq(again:list()[1].state, "spent")
  t.eq(again:holder().public_key, holder.public_key)
end)

t.test("ids: raw bytes, hex, prefixes", function()
  local w <close> = token.wallet.create(wallet_path())
  local text = token.issue { program = VOUCHER, value = 1, unit = "X", to = w:holder().public_key, issuer_key = issuer }
  w:import(text)
  local id = token.parse(text)[1].id
  t.eq(w:inspect(id).id, id)
  t.eq(w:inspect(hex.encode(id)).id, id)
  t.eq(w:inspect(hex.encode(id):sub(1, 4):upper()).id, id)
  t.eq(kind_of(function() w:inspect("ffff" == hex.encode(id):sub(1, 4) and "eeee" or "ffff") end), "not_found")
  t.raises(function() w:inspect("abc") end, "4 to 64 hex digits")
  t.raises(function() w:inspect(42) end, "token id expected")
end)

t.test("arguments: text, bytes, integers, booleans, tables; floats refused", function()
  local w <close> = token.wallet.create(wallet_path())
  -- t.args is a read-only view: the program copies the fields it knows (pairs over the view yields
  -- nothing in the deterministic sandbox today; see docs/lua-api.md).
  local echo = [[local t = ... local a = t.args
    t.emit { name = a.name, raw = a.raw, n = a.n, yes = a.yes, nested = a.nested }]]
  local function fresh()
    local text = token.issue { program = echo, value = 1, unit = "X", to = w:holder().public_key, issuer_key = issuer }
    w:import(text)
    return token.parse(text)[1].id
  end
  local args = { name = "alice", raw = "\xff\x00\x01", n = -7, yes = true, nested = { list = { 1, 2, 3 }, map = { a = "b" } } }
  t.eq(w:run(fresh(), args).effects[1], args)
  local id = fresh()
  t.raises(function() w:run(id, { price = 1.5 }) end, "args.price is the float 1.5")
  t.raises(function() w:run(id, { f = print }) end, "function")
  t.eq(w:inspect(id).state, "held")
  t.eq(w:run(id).effects[1], {})
  -- A list is a map with integer keys 1..n.
  local lister = token.issue { program = "local t = ... t.emit { t.args[1], t.args[2], #t.args }", value = 1, unit = "X",
                               to = w:holder().public_key, issuer_key = issuer }
  w:import(lister)
  t.eq(w:run(token.parse(lister)[1].id, { "a", "b" }).effects[1], { "a", "b", 2 })
end)

t.test("a failing program leaves the token HELD and runnable", function()
  local w <close> = token.wallet.create(wallet_path())
  local text = token.issue {
    program = "local t = ... if t.args.code ~= 'open sesame' then error('wrong code') end t.emit{ok = true}",
    value = 1, unit = "X", to = w:holder().public_key, issuer_key = issuer,
  }
  w:import(text)
  local id = token.parse(text)[1].id
  local kind, err = kind_of(function() w:run(id, { code = "nope" }) end)
  t.eq(kind, "program")
  t.ok(tostring(err):find("wrong code"), tostring(err))
  t.eq(w:inspect(id).state, "held")
  t.eq(w:receipt(id), nil)
  local limited = token.issue { program = "while true do end", value = 1, unit = "X", to = w:holder().public_key,
                                issuer_key = issuer, limits = { instructions = 100000 } }
  w:import(limited)
  t.eq(kind_of(function() w:run(token.parse(limited)[1].id) end), "instruction_limit")
  t.eq(w:run(id, { code = "open sesame" }).effects, { { ok = true } })
  t.eq(w:inspect(id).state, "spent")
end)

t.test("run_many: each token on its own, one commit for those that completed", function()
  local w <close> = token.wallet.create(wallet_path())
  local function issue(program, extra)
    local spec = { program = program, value = 1, unit = "X", to = w:holder().public_key, issuer_key = issuer }
    for k, v in pairs(extra or {}) do spec[k] = v end
    local text = token.issue(spec)
    w:import(text)
    return token.parse(text)[1].id
  end
  -- A global a run leaves behind must not be seen by the next run: each run is its own process and state.
  local leaky = [[local t = ... t.emit { seen = rawget(_ENV, "left") == nil, n = t.args.n } left = true]]
  local ids = {}
  for i = 1, 6 do ids[i] = issue(leaky) end
  local failing = issue("error('no')")
  local bomb = issue("local t = {} for i = 1, 1e8 do t[i] = {i} end", { limits = { memory = 2 * 1024 * 1024 } })
  local list = { ids[1], { id = ids[2], args = { n = 2 } }, failing, ids[3], bomb, hex.encode(ids[4]):sub(1, 8), ids[5], ids[6] }
  local results = w:run_many(list, { n = 1 })
  t.eq(#results, #list)
  for i, r in ipairs(results) do
    if i == 3 or i == 5 then
      t.eq(r.ok, false)
      t.eq(r.error.kind, i == 3 and "program" or "memory_limit", r.error.message)
      t.ok(r.error.message:find("stays HELD"), r.error.message)
    else
      t.eq(r.ok, true, r.error and r.error.message)
      t.eq(r.effects[1], { seen = true, n = i == 2 and 2 or 1 })
      t.eq(w:receipt(r.token_id), r.receipt)
      t.eq(w:inspect(r.token_id).state, "spent")
    end
  end
  t.eq(w:inspect(failing).state, "held")
  t.eq(w:inspect(bomb).state, "held")
  -- Spent tokens and duplicates fail alone; the rest of the batch runs.
  local again = w:run_many({ ids[1], failing, failing })
  t.eq(again[1].error.kind, "already_spent")
  t.eq(again[2].error.kind, "program")
  t.eq(again[3].error.kind, "duplicate")
  t.eq(w:run_many({}), {})
  t.raises(function() w:run_many({ 42 }) end, "ids%[1%] must be a token id")
  t.raises(function() w:run_many({ x = ids[1] }) end, "must be a list")
  t.raises(function() w:run_many("abcd") end, "list of token ids")
end)

t.test("run and run_many: an error of any length comes back cut, and the batch goes on", function()
  local w <close> = token.wallet.create(wallet_path())
  local function issue(program)
    local text = token.issue { program = program, value = 1, unit = "X", to = w:holder().public_key, issuer_key = issuer }
    w:import(text)
    return token.parse(text)[1].id
  end
  -- The holder's arguments decide the error's length: 70 KB, 200 KB and 16 MB.
  local loud = [[local t = ... error(string.rep("e", t.args.n), 0)]]
  for _, n in ipairs { 70000, 200000, 16 * 1024 * 1024 } do
    local kind, err = kind_of(function() w:run(issue(loud), { n = n }) end)
    t.ok(#err.message < 10000, #err.message)
    -- 16 MB and its traceback may reach the wallet's 64 MiB cap first.
    if kind ~= "memory_limit" or n < 1000000 then
      t.eq(kind, "program", err.message)
      t.ok(err.message:find(" bytes, cut to the first", 1, true), err.message:sub(-200))
    end
  end
  local ids = { issue(loud), issue(loud), issue("local t = ... t.emit(1)"), issue(loud) }
  local results = w:run_many({ { id = ids[1], args = { n = 200000 } }, { id = ids[2], args = { n = 16 * 1024 * 1024 } }, ids[3],
                                { id = ids[4], args = { n = 70000 } } })
  t.eq(#results, 4)
  for i, r in ipairs(results) do
    if i == 3 then
      t.eq(r.ok, true, r.error and r.error.message)
      t.eq(w:inspect(r.token_id).state, "spent")
    else
      t.eq(r.ok, false)
      if r.error.kind ~= "memory_limit" or i ~= 2 then
        t.eq(r.error.kind, "program")
        t.ok(r.error.message:find("bytes, cut to the first", 1, true), r.error.message:sub(-200))
      end
    end
  end
end)

t.test("opening a wallet that is not there fails and leaves no file behind", function()
  local path = wallet_path()
  local kind, err = kind_of(function() token.wallet.open(path) end)
  t.eq(kind, "not_initialised")
  t.ok(tostring(err):find("no wallet at", 1, true), tostring(err))
  t.eq(io.open(path, "rb"), nil)
end)

t.test("time: not yet valid and expired tokens do not run", function()
  local w <close> = token.wallet.create(wallet_path())
  local now = os.time()
  local late = token.issue { program = VOUCHER, value = 1, unit = "X", to = w:holder().public_key, issuer_key = issuer, not_before = now + 3600 }
  local gone = token.issue { program = VOUCHER, value = 1, unit = "X", to = w:holder().public_key, issuer_key = issuer, expires = now - 10 }
  w:import(late .. "\n" .. gone)
  t.eq(kind_of(function() w:run(token.parse(late)[1].id) end), "not_yet_valid")
  t.eq(kind_of(function() w:run(token.parse(gone)[1].id) end), "expired")
  t.raises(function() w:run(token.parse(gone)[1].id, {}, { now = now - 100 }) end, "unknown option 'now'")
end)

t.test("tokens for another holder or with a bad signature are refused", function()
  local w <close> = token.wallet.create(wallet_path())
  local other = token.issue { program = VOUCHER, value = 1, unit = "X", to = ec.public_key(ec.generate()), issuer_key = issuer }
  t.eq(kind_of(function() w:import(other) end), "not_ours")
  t.eq(w:list(), {})
end)

t.test("bytecode: refused from an untrusted issuer, accepted once trusted", function()
  local w <close> = token.wallet.create(wallet_path())
  local text = token.issue { program = VOUCHER, value = 9, unit = "X", to = w:holder().public_key, issuer_key = issuer, precompile = true }
  local tok = token.parse(text)[1]
  t.eq(tok.program_kind, "lua54-bytecode")
  t.eq(tok.program:byte(1), 0x1B)
  t.eq(kind_of(function() w:import(text) end), "untrusted_bytecode")
  t.eq(w:list(), {})
  w:trust(hex.encode(tok.issuer))
  t.eq(w:trusted(), { tok.issuer })
  t.eq(w:import(text)[1].result, "added")
  local r = w:run(tok.id, { shop = "bytecode" })
  t.eq(r.effects[1].shop, "bytecode")
  -- A verifier must trust bytecode explicitly.
  local refused = token.verify_receipt(r.receipt)
  t.eq(refused.valid, false)
  t.eq(refused.effects_match, nil)
  t.ok(refused.problems[1]:find("not trusted"), refused.problems[1])
  t.eq(token.verify_receipt(r.receipt, { trust_bytecode = true }).valid, true)
  w:distrust(issuer)
  t.eq(w:trusted(), {})
end)

--- A fresh virtual card with a key, ready (paired, channel open, PIN verified).
local function ready_card(applet, seed)
  local s = card.open { reader = "virtual", applet = applet }
  s:select()
  s:init { pin = PIN, puk = PUK, pairing_password = PASSWORD }
  s:auto { pin = PIN, pairing_password = PASSWORD }
  local uid = seed and s:load_seed(seed) or s:generate_key()
  return s, uid
end

for _, applet in ipairs { "3.2", "4.0" } do
  t.test("card-bound wallet on applet " .. applet, function()
    local s <close>, uid = ready_card(applet, hd.mnemonic_to_seed(ABANDON))
    local w <close> = token.wallet.create(wallet_path(), { card = s, path = PATH })
    local holder = w:holder()
    local node <close> = hd.from_mnemonic(ABANDON)
    t.eq(holder, { kind = "card", public_key = node:derive(PATH):public_key(), card_key_uid = uid, card_path = PATH })

    local text = token.issue { program = VOUCHER, value = 25, unit = "EUR-cent", to = holder.public_key, issuer_key = issuer }
    w:import(text)
    local id = token.parse(text)[1].id

    t.eq(kind_of(function() w:run(id, { shop = "card" }) end), "card_required")
    local other <close> = ready_card(applet)
    local kind, err = kind_of(function() w:run(id, { shop = "card" }, { card = other }) end)
    t.eq(kind, "wrong_card")
    t.ok(not tostring(err):find(PIN, 1, true))
    t.eq(w:inspect(id).state, "held")

    local r = w:run(id, { shop = "card" }, { card = s })
    t.eq(r.effects[1].shop, "card")
    local report = token.verify_receipt(r.receipt)
    t.eq(report.valid, true)
    t.eq(report.holder_signature_valid, true)
    t.eq(kind_of(function() w:run(id, {}, { card = s }) end), "already_spent")

    t.raises(function() token.wallet.create(wallet_path(), { card = s }) end, "'path' is required")
    t.raises(function() token.wallet.create(wallet_path(), { card = s, path = "./0/1" }) end, "must be absolute")
    t.raises(function() token.wallet.create(wallet_path(), { card = "s", path = PATH }) end, "must be a keyhost.card.session")
    t.raises(function() token.wallet.create(wallet_path(), { path = PATH }) end, "goes with 'card'")
  end)
end

t.test("a software wallet ignores a card", function()
  local s <close> = ready_card("4.0")
  local w <close> = token.wallet.create(wallet_path())
  local text = token.issue { program = VOUCHER, value = 1, unit = "X", to = w:holder().public_key, issuer_key = issuer }
  w:import(text)
  t.eq(#w:run(token.parse(text)[1].id, {}, { card = s }).effects, 1)
end)

t.test("a 4.0 card issues tokens (BIP340 at a path); 3.2 cannot", function()
  local s <close> = ready_card("4.0", hd.mnemonic_to_seed(ABANDON))
  local w <close> = token.wallet.create(wallet_path())
  local ISSUER_PATH = "m/7419'/0'/0'"
  local text = token.issue { program = VOUCHER, value = 5, unit = "X", to = w:holder().public_key,
                             issuer_card = s, issuer_path = ISSUER_PATH }
  local info = token.inspect(text)
  t.eq(info.signature_valid, true)
  -- The issuer is the card's key at that path, as keyhost.hd derives it from the same seed.
  local expected = hd.from_mnemonic(ABANDON):derive(ISSUER_PATH):public_key()
  t.eq(info.issuer, expected:sub(2))
  w:import(text)
  t.eq(#w:run(info.id, { shop = "card issuer" }).effects, 1)
  local old <close> = ready_card("3.2")
  t.raises(function()
    token.issue { program = VOUCHER, value = 5, unit = "X", to = w:holder().public_key, issuer_card = old, issuer_path = ISSUER_PATH }
  end, "Schnorr")
  t.raises(function() token.issue { program = VOUCHER, value = 1, unit = "X", to = w:holder().public_key, issuer_card = s } end,
    "'issuer_path' is required")
end)

-- Last (tests run in order): remove the wallet files.
t.test("clean up the wallet files", function()
  collectgarbage()
  for _, path in ipairs(files) do
    os.remove(path)
    os.remove(path .. "-wal")
    os.remove(path .. "-shm")
  end
end)

t.run()
