-- The REPL's evaluation and completion, used by `keyhost repl` and `keyhost eval`.
-- It follows lua.c: try "return <line>" first, and read a syntax error at <eof>
-- as a request for more input.
local inspect = require "keyhost.inspect"

local load, xpcall, select, type, tostring, next, rawget, ipairs =
  load, xpcall, select, type, tostring, next, rawget, ipairs
-- keyhost's objects hide their metatables (__metatable = false); the REPL looks behind that.
local getmetatable = (debug and debug.getmetatable) or getmetatable
local pack, unpack, sort, concat = table.pack, table.unpack, table.sort, table.concat
local traceback = debug.traceback

local M = {}

--- How results print: strings that are not text as `<32 bytes 73c5da0a…>` (bytes = "full" for all of it).
M.options = { bytes = "short" }

-- A structured error's fields under its message: `kind = "wrong_pin", retries_left = 2, sw = 0x63C2, …`.
local function error_fields(err)
  local names = {}
  for key in next, err do
    if type(key) == "string" and key ~= "message" then names[#names + 1] = key end
  end
  if #names == 0 then return "" end
  sort(names)
  local parts = {}
  for i, name in ipairs(names) do
    local value = rawget(err, name)
    if name == "sw" and math.type(value) == "integer" then
      parts[i] = ("sw = 0x%04X"):format(value)
    else
      parts[i] = name .. " = " .. inspect(value, { bytes = "short", depth = 1, width = 60 })
    end
  end
  return "\n  " .. concat(parts, ", ")
end

local function message_handler(err)
  if type(err) ~= "string" then
    local mt = getmetatable(err)
    if mt and mt.__tostring then
      local text = tostring(err)
      if type(err) == "table" then text = text .. error_fields(err) end
      return text
    end
    if type(err) == "table" and type(rawget(err, "message")) == "string" then return rawget(err, "message") .. error_fields(err) end
    err = ("(error object is a %s value)"):format(type(err))
  end
  -- The frames below the user's chunk are the REPL's own: leave them out.
  local trace = traceback(err, 2)
  return (trace:gsub("\n\t%[C%]: in function 'xpcall'.*$", ""))
end

--- Compiles source as an expression, then as a statement; nil, "incomplete", message means more lines are needed.
function M.compile(source, chunkname)
  chunkname = chunkname or "=stdin"
  -- "=expr" is "return expr", as lua5.1 to 5.3 took it at the prompt (never valid Lua otherwise).
  if source:sub(1, 1) == "=" then source = "return " .. source:sub(2) end
  local fn = load("return " .. source .. ";", chunkname, "t")
  if fn then return fn end
  local err
  fn, err = load(source, chunkname, "t")
  if fn then return fn end
  if err:sub(-5) == "<eof>" then return nil, "incomplete", err end
  return nil, err
end

--- Runs source; returns "ok" and printable results, "incomplete", or "error" and a message with traceback.
function M.eval(source, chunkname)
  local fn, err, detail = M.compile(source, chunkname)
  if not fn then
    if err == "incomplete" then return "incomplete", detail end
    return "error", err
  end
  local results = pack(xpcall(fn, message_handler))
  if not results[1] then return "error", results[2] end
  if results.n > 1 then return "ok", inspect.values_with(M.options, unpack(results, 2, results.n)) end
  return "ok"
end

--- Runs source as M.eval does but hands back the values themselves: "ok", values… or "error", message.
function M.call(source, chunkname)
  local fn, err, detail = M.compile(source, chunkname)
  if not fn then return "error", detail or err end
  local results = pack(xpcall(fn, message_handler))
  if not results[1] then return "error", results[2] end
  return "ok", unpack(results, 2, results.n)
end

local function is_identifier(s)
  return type(s) == "string" and s:match("^[%a_][%w_]*$") ~= nil
end

-- Fields of a table and of its __index chain, without running any metamethod.
local function fields(value, want_methods, into, depth)
  depth = depth or 0
  if depth > 8 then return into end
  if type(value) == "table" then
    for key, v in next, value do
      if is_identifier(key) and (not want_methods or type(v) == "function") then into[key] = true end
    end
  end
  local mt = getmetatable(value)
  if type(mt) == "table" then
    local index = rawget(mt, "__index")
    if type(index) == "table" then fields(index, want_methods, into, depth + 1) end
  end
  return into
end

--- Completions for the word being typed: globals, `tbl.field` and `obj:method`.
function M.complete(word, env)
  env = env or _G
  local prefix, path, sep, partial = "", nil, nil, word
  local head, s, tail = word:match("^(.*)([%.:])([%w_]*)$")
  if head then
    path, sep, partial = head, s, tail
    prefix = head .. s
  end
  local target = env
  if path then
    for part in path:gmatch("[^%.:]+") do
      if not is_identifier(part) or type(target) ~= "table" then return {} end
      target = rawget(target, part)
      if target == nil then return {} end
    end
  end
  local names = fields(target, sep == ":", {})
  local out = {}
  for name in next, names do
    if name:sub(1, #partial) == partial then out[#out + 1] = prefix .. name end
  end
  sort(out)
  return out
end

return M
