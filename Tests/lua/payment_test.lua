-- Tests for payments in keyhost.token: exchange keys, requests, pay, receive, deposit chains, the ledger and
-- fraud proofs, refusals with their kinds, and a card-bound payer on the software Keycard.
-- Run: keyhost run Tests/lua/payment_test.lua
local t = require "keyhost.test"
local token = require "keyhost.token"
local card = require "keyhost.card"
local ec = require "keyhost.ec"
local hd = require "keyhost.hd"
local hex = require "keyhost.hex"

local files = {}
local function scratch()
  local path = os.tmpname()
  os.remove(path)
  files[#files + 1] = path
  return path
end

local function kind_of(fn)
  local ok, err = pcall(fn)
  t.ok(not ok, "expected an error")
  t.eq(type(err), "table", "structured error: " .. tostring(err))
  return err.kind, err
end

local function stdlib_source(name)
  for _, searcher in ipairs(package.searchers) do
    local loader, path = searcher(name)
    if type(loader) == "function" and type(path) == "string" then
      local file = assert(io.open(path, "rb"))
      local text = file:read("a")
      file:close()
      return text
    end
  end
  error("no " .. name)
end
local CASH = stdlib_source("keyhost.cash")
local VOUCHER = "local t = ... t.emit { redeemed = t.token.value }"

local issuer = ec.private_key(hex.decode("0b432b2677937381aef05bb02a66ecd012773062cf3fa2549e44f58ed2401710"))
local other_issuer = ec.generate()

local function fund(w, values, program, key)
  local ids = {}
  for _, v in ipairs(values) do
    local text = token.issue { program = program or CASH, value = v, unit = "EUR-cent", to = w:holder().public_key,
                               issuer_key = key or issuer }
    w:import(text)
    ids[#ids + 1] = token.parse(text)[1].id
  end
  return ids
end

local function states(w)
  local s = {}
  for _, row in ipairs(w:list()) do s[#s + 1] = row.state end
  table.sort(s)
  return table.concat(s, ",")
end

t.test("exchange keys and requests", function()
  local b <close> = token.wallet.create(scratch())
  local keys = b:exchange_keys(3)
  t.eq(#keys, 3)
  for _, k in ipairs(keys) do t.eq(#k, 33) end
  t.ok(keys[1] ~= keys[2])
  local text = b:request { amount = 70, unit = "EUR-cent", issuers = { issuer, hex.encode(other_issuer:public_key { x_only = true }) },
                           keys = 2, memo = "rent" }
  t.ok(text:sub(1, #token.request_prefix) == token.request_prefix)
  local r = token.parse_request(text)
  t.eq(r.amount, 70); t.eq(r.unit, "EUR-cent"); t.eq(#r.keys, 2); t.eq(#r.issuers, 2); t.eq(r.memo, "rent")
  t.eq(r.payee, b:holder().public_key); t.ok(r.signature_valid); t.eq(#r.id, 32)
  t.eq(r.issuers[1], issuer:public_key { x_only = true })
  for _, k in ipairs(r.keys) do t.ok(k ~= keys[1] and k ~= keys[2] and k ~= keys[3], "a request gets new keys") end
  t.raises(function() b:request { amount = 0, unit = "EUR-cent", issuers = { issuer } } end, "amount")
  t.raises(function() b:request { amount = 5, unit = "EUR-cent" } end, "issuers")
  t.raises(function() b:request { amount = 5, unit = "EUR-cent", issuers = { "nope" } } end, "issuers%[1%]")
  t.raises(function() b:request { amount = 5, unit = "EUR-cent", issuers = { issuer }, keys = 0 } end, "keys")
  t.raises(function() b:request { amount = 5, unit = "EUR-cent", issuers = { issuer }, colour = 1 } end, "unknown option")
  t.eq(kind_of(function() b:request { amount = 5, unit = "EUR-cent", issuers = { issuer }, expires = 1 } end), "invalid")
end)

t.test("pay, receive, pay on, deposit", function()
  local a <close> = token.wallet.create(scratch())
  local b <close> = token.wallet.create(scratch())
  local c <close> = token.wallet.create(scratch())
  fund(a, { 100, 50, 20 })
  local req = b:request { amount = 120, unit = "EUR-cent", issuers = { issuer } }
  local payment, paid = a:pay(req)
  t.eq(paid.amount, 120); t.eq(paid.unit, "EUR-cent"); t.eq(#paid.tokens, 2); t.eq(#paid.chains, 2)
  t.eq(paid.request_id, token.parse_request(req).id)
  t.eq(states(a), "held,spent,spent")
  -- Paying again gives the same payment and spends nothing more.
  t.eq(a:pay(req), payment)
  t.eq(states(a), "held,spent,spent")
  local p = token.parse_payment(payment)
  t.eq(p.amount, 120); t.eq(#p.chains, 2)
  for _, ch in ipairs(p.chains) do
    t.eq(#ch.links, 1); t.ok(not ch.is_deposit)
    t.eq(ch.token.holder, a:holder().public_key)
    local found = false
    for _, k in ipairs(token.parse_request(req).keys) do found = found or k == ch.holder end
    t.ok(found, "paid to a key of the request")
  end
  local got = b:receive(payment)
  t.ok(got.complete); t.eq(got.amount, 120); t.eq(got.requested, 120); t.eq(#got.tokens, 2)
  t.eq(got.tokens[1].result, "added")
  t.eq(b:receive(payment).tokens[1].result, "already_present")
  -- B pays 20 on to C; C deposits.
  local onward, sent = b:pay(c:request { amount = 20, unit = "EUR-cent", issuers = { issuer } })
  t.ok(c:receive(onward).complete)
  local chains = c:deposit_chains(sent.tokens)
  t.eq(#chains, 1)
  local ch = token.parse_chain(chains[1])[1]
  t.eq(#ch.links, 3); t.ok(ch.is_deposit); t.eq(ch.holder, "\2" .. issuer:public_key { x_only = true })
  -- Each link names the run that made it: payments and deposits run with no arguments.
  t.eq(type(ch.links[3].args), "table"); t.eq(next(ch.links[3].args), nil); t.eq(#ch.links[3].receipt_id, 32)
  t.eq(c:deposit_chains { hex.encode(sent.tokens[1]):sub(1, 8) }[1], chains[1], "asked again: the same chain")
  local ledger <close> = token.ledger.open("sqlite:" .. scratch(), { issuers = { issuer } })
  t.eq(ledger:deposit(chains)[1].result, "accepted")
  t.eq(ledger:deposit(chains[1])[1].result, "already_deposited")
  local stats = ledger:stats()
  t.eq(stats.tokens, 1); t.eq(stats.double_spends, 0)
  t.eq(#stats.units, 1); t.eq(stats.units[1].unit, "EUR-cent"); t.eq(stats.units[1].total, "20"); t.eq(stats.units[1].tokens, 1)
  -- A chain that is not a deposit, or from an issuer the ledger does not serve, is refused.
  local kind, err = kind_of(function() ledger:deposit(paid.chains) end)
  t.eq(kind, "not_deposit"); t.ok(tostring(err):find("chain 0", 1, true), tostring(err))
  local foreign <close> = token.ledger.open("sqlite:" .. scratch(), { issuers = { other_issuer } })
  t.eq(kind_of(function() foreign:deposit(chains) end), "unknown_issuer")
  t.raises(function() token.ledger.open("sqlite:" .. scratch()) end, "issuers")
  t.eq(kind_of(function() token.ledger.open("mysql://x", { issuers = { issuer } }) end), "location")
end)

t.test("refusals leave the payer's tokens held", function()
  local a <close> = token.wallet.create(scratch())
  local b <close> = token.wallet.create(scratch())
  fund(a, { 100, 50, 20 })
  fund(a, { 5 }, VOUCHER)
  local function ask(amount, opts)
    opts = opts or {}
    return b:request { amount = amount, unit = "EUR-cent", issuers = opts.issuers or { issuer }, keys = opts.keys }
  end
  local kind, err = kind_of(function() a:pay(ask(1000)) end)
  t.eq(kind, "insufficient"); t.ok(tostring(err):find("nothing was spent", 1, true))
  kind, err = kind_of(function() a:pay(ask(60)) end)
  t.eq(kind, "no_exact_cover"); t.ok(tostring(err):find("makes no change", 1, true), tostring(err))
  kind, err = kind_of(function() a:pay(ask(170, { keys = 2 })) end)
  t.eq(kind, "no_exact_cover"); t.ok(tostring(err):find("too few", 1, true), tostring(err))
  t.eq(kind_of(function() a:pay(ask(50, { issuers = { other_issuer } })) end), "insufficient")
  -- A voucher does not move: its program never calls t.transfer.
  kind, err = kind_of(function() a:pay(ask(5)) end)
  t.eq(kind, "not_transferable"); t.ok(tostring(err):find("stays HELD", 1, true))
  t.eq(states(a), "held,held,held,held")
  t.eq(kind_of(function() a:pay("khreq1:AAAA") end), "encoding")
  t.raises(function() a:pay(ask(50), { cart = 1 }) end, "unknown option")
end)

t.test("the payee refuses what is not for it", function()
  local a <close> = token.wallet.create(scratch())
  local b <close> = token.wallet.create(scratch())
  local c <close> = token.wallet.create(scratch())
  fund(a, { 10, 10 })
  local to_c = a:pay(c:request { amount = 10, unit = "EUR-cent", issuers = { issuer } })
  local kind, err = kind_of(function() b:receive(to_c) end)
  t.eq(kind, "unknown_request"); t.ok(tostring(err):find("nothing was received", 1, true))
  t.eq(#b:list(), 0)
  t.eq(kind_of(function() b:receive("khpay1:AAAA") end), "encoding")
end)

t.test("a cloned wallet pays twice; the second deposit gets a proof", function()
  local a_path = scratch()
  local a = token.wallet.create(a_path)
  local a_key = a:holder().public_key
  local id = fund(a, { 100 })[1]
  a:close()
  collectgarbage()
  local clone_path = scratch()
  local input = assert(io.open(a_path, "rb"))
  local private = os.tmpname()
  assert(os.rename(private, clone_path))
  local output = assert(io.open(clone_path, "wb"))
  output:write(input:read("a")); input:close(); output:close()
  local a1 <close> = token.wallet.open(a_path)
  local a2 <close> = token.wallet.open(clone_path)
  local b <close> = token.wallet.create(scratch())
  local c <close> = token.wallet.create(scratch())
  b:receive(a1:pay(b:request { amount = 100, unit = "EUR-cent", issuers = { issuer } }))
  c:receive(a2:pay(c:request { amount = 100, unit = "EUR-cent", issuers = { issuer } }))
  local ledger <close> = token.ledger.open("sqlite:" .. scratch(), { issuers = { issuer } })
  t.eq(ledger:deposit(b:deposit_chains { id })[1].result, "accepted")
  local row = ledger:deposit(c:deposit_chains { id })[1]
  t.eq(row.result, "double_spend"); t.eq(row.key, a_key); t.eq(row.token_id, id)
  local check = token.verify_proof(row.proof)
  t.ok(check.valid); t.eq(check.key, a_key); t.eq(check.token_id, id); t.eq(check.position, 0)
  t.eq(check.issuer, issuer:public_key { x_only = true })
  t.eq(ledger:stats().double_spends, 1)
  t.eq(kind_of(function() token.verify_proof("khproof1:AAAA") end), "encoding")
end)

t.test("a card-bound payer signs on the card", function()
  local s <close> = card.open { reader = "virtual", applet = "3.2" }
  s:select()
  s:init { pin = "123456", puk = "987654321098", pairing_password = "KeycardTest" }
  s:auto { pin = "123456", pairing_password = "KeycardTest" }
  s:load_seed(hd.mnemonic_to_seed("abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"))
  local a <close> = token.wallet.create(scratch(), { card = s, path = "m/44'/60'/0'/0/0" })
  local b <close> = token.wallet.create(scratch())
  fund(a, { 30 })
  local req = b:request { amount = 30, unit = "EUR-cent", issuers = { issuer } }
  t.eq(kind_of(function() a:pay(req) end), "card_required")
  t.eq(states(a), "held")
  local payment = a:pay(req, { card = s })
  t.ok(b:receive(payment).complete)
  t.eq(token.parse_payment(payment).chains[1].token.holder, a:holder().public_key)
  -- Requests from a card-bound wallet are signed on the card too.
  t.eq(kind_of(function() a:request { amount = 1, unit = "EUR-cent", issuers = { issuer } } end), "card_required")
  t.ok(token.parse_request(a:request { amount = 1, unit = "EUR-cent", issuers = { issuer }, card = s }).signature_valid)
end)

t.test("clean up the files", function()
  collectgarbage()
  for _, path in ipairs(files) do
    for _, suffix in ipairs { "", "-wal", "-shm" } do os.remove(path .. suffix) end
  end
end)

t.run()
