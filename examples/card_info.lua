-- List card readers and show what a Keycard tells about itself (SELECT), without any secret.
-- Runs on the virtual card by default; pass a reader name or number to read a real card:
--   keyhost run examples/card_info.lua            -- the virtual card, applet 3.2
--   keyhost run examples/card_info.lua virtual 4.0
--   keyhost run examples/card_info.lua 0          -- the first real reader, numbered from 0 as keyhost card list prints them
local card = require "keyhost.card"
local hex = require "keyhost.hex"

print("readers: " .. table.concat(card.readers(), ", "))

local reader, applet = arg[1] or "virtual", arg[2]
if reader:match "^%d%.%d$" then reader, applet = "virtual", reader end  -- card_info.lua 4.0
if reader:match "^%d+$" then reader = math.tointeger(tonumber(reader)) end
local opts = { reader = reader }
if reader == "virtual" then opts.applet = applet or "3.2" end

local session <close> = card.open(opts)
local info = session:select()
if reader == "virtual" and not info.initialized then
  -- A blank virtual card: initialise it so SELECT has more to say.
  session:init { pin = "123456", puk = "987654321098", pairing_password = "KeycardTest" }
  info = session:select()
end

local binary = { instance_uid = true, key_uid = true, secure_channel_public_key = true, identity_public_key = true }
local function show(name, value)
  if binary[name] then value = hex.encode(value)
  elseif type(value) == "table" then value = table.concat(value, ", ") end
  print(string.format("  %-26s %s", name, tostring(value)))
end

print(tostring(session))
local keys = {}
for k in pairs(info) do keys[#keys + 1] = k end
table.sort(keys)
for _, k in ipairs(keys) do show(k, info[k]) end
