-- keyhost.inspect: a pretty printer for Lua values (used by the REPL).
--
--   local inspect = require "keyhost.inspect"
--   inspect({1, 2, name = "x"})              --> {1, 2, name = "x"}
--   inspect(value, { depth = 2, indent = 4, width = 100, metatables = true })
--   inspect.values(1, "a", nil)              --> 1\t"a"\tnil
--
-- Output conventions:
--   * the sequence part (keys 1..n) is printed as a list, other keys sorted:
--     numbers, then strings, then booleans, then other types;
--   * identifier keys are bare (`name = 1`), others bracketed (`["a b"] = 1`, `[true] = 1`);
--   * strings are double-quoted; control and invalid UTF-8 bytes are escaped as `\xNN`
--     (valid UTF-8 text is shown as is unless opts.ascii is set);
--   * a string that is not printable text (invalid UTF-8, or control bytes other than tab,
--     newline and return) is bytes: a key, hash or signature. It shows as `<32 bytes 73c5da0a…>`,
--     the first 4 bytes in hex (opts.bytes = "short", the default); opts.bytes = "full" shows all
--     of it (`<4 bytes 73c5da0a>`); opts.bytes = false quotes it with `\xNN` escapes, a literal
--     that reads back as the same bytes;
--   * integers and floats stay distinct (`1` vs `1.0`), `math.huge`, `-math.huge`, `0/0`;
--   * a table printed more than once is tagged at its first appearance, `<table 1>{...}`,
--     and later shown as `<table 1>` (a shared reference) or `<cycle 1>` (a reference
--     to a table that contains it);
--   * functions, threads and userdata print as `<function 1>` etc.; values whose
--     metatable has __tostring print via tostring (`<error in __tostring: msg>` if it fails);
--   * tables deeper than opts.depth print as `{...}`;
--   * a table that fits in opts.width columns is printed on one line, otherwise one
--     entry per line indented by opts.indent.
-- inspect never raises on the value it is given and never triggers __index, __pairs,
-- __len or __eq (it uses next and rawget only).

local M = {}

local type, next, rawget, rawequal, tostring, pcall, select = type, next, rawget, rawequal, tostring, pcall, select
local format, concat, sort, rep = string.format, table.concat, table.sort, string.rep
local byte, find, sub = string.byte, string.find, string.sub
local mtype = math.type

local getmt = (debug and debug.getmetatable) or getmetatable

local keywords = {}
for w in ([[and break do else elseif end false for function goto if in
  local nil not or repeat return then true until while]]):gmatch("%a+") do
  keywords[w] = true
end

local function is_identifier(s)
  return find(s, "^[A-Za-z_][A-Za-z0-9_]*$") ~= nil and not keywords[s]
end

---------------------------------------------------------------------------
-- Scalars

local function format_float(x)
  if x ~= x then return "0/0" end
  if x == math.huge then return "math.huge" end
  if x == -math.huge then return "-math.huge" end
  local s = format("%.15g", x)
  if tonumber(s) ~= x then
    s = format("%.16g", x)
    if tonumber(s) ~= x then s = format("%.17g", x) end
  end
  if not find(s, "[%.eEn]") then s = s .. ".0" end
  return s
end

local function format_number(x)
  if mtype(x) == "integer" then
    if x == math.mininteger then return "math.mininteger" end -- the literal would read as a float
    return format("%d", x)
  end
  return format_float(x)
end
M.format_number = format_number

local short_escapes = {
  ["\a"] = "\\a", ["\b"] = "\\b", ["\f"] = "\\f", ["\n"] = "\\n",
  ["\r"] = "\\r", ["\t"] = "\\t", ["\v"] = "\\v", ["\\"] = "\\\\", ['"'] = '\\"',
}

local function escape_byte(c)
  return short_escapes[c] or format("\\x%02x", byte(c))
end

-- Length of the valid UTF-8 sequence starting at i (>= 2), or nil.
local function utf8_length_at(s, i)
  local c = byte(s, i)
  local n
  if c >= 0xC2 and c <= 0xDF then n = 2
  elseif c >= 0xE0 and c <= 0xEF then n = 3
  elseif c >= 0xF0 and c <= 0xF4 then n = 4
  else return nil end
  -- utf8.len rejects overlong forms, surrogates and code points above U+10FFFF
  if utf8.len(s, i, i) ~= 1 then return nil end
  return n
end

local function quote(s, ascii)
  if not find(s, '[%z\1-\31"\\\127-\255]') then return '"' .. s .. '"' end
  if ascii or not find(s, "[\128-\255]") then
    return '"' .. s:gsub('[%z\1-\31"\\\127-\255]', escape_byte) .. '"'
  end
  local out, n, i, len = {}, 0, 1, #s
  while i <= len do
    local j = find(s, '[%z\1-\31"\\\127-\255]', i)
    if not j then
      n = n + 1; out[n] = sub(s, i)
      break
    end
    if j > i then n = n + 1; out[n] = sub(s, i, j - 1) end
    local c = byte(s, j)
    if c < 0x80 then
      n = n + 1; out[n] = escape_byte(sub(s, j, j)); i = j + 1
    else
      local l = utf8_length_at(s, j)
      if l then
        local cp = utf8.codepoint(s, j)
        if cp < 0xA0 or cp == 0x2028 or cp == 0x2029 or cp == 0xFEFF or cp == 0xAD then
          n = n + 1; out[n] = format("\\u{%x}", cp) -- invisible or control characters
        else
          n = n + 1; out[n] = sub(s, j, j + l - 1)
        end
        i = j + l
      else
        n = n + 1; out[n] = format("\\x%02x", c); i = j + 1
      end
    end
  end
  return '"' .. concat(out) .. '"'
end
M.quote = function(s, opts) return quote(s, opts and opts.ascii) end

--- Whether s reads as text: valid UTF-8 without control bytes other than tab, newline and carriage return.
local function is_text(s)
  if find(s, "[%z\1-\8\11\12\14-\31\127]") then return false end
  return utf8.len(s) ~= nil
end
M.is_text = is_text

-- `<32 bytes 73c5da0a…>`: what a person reads a key, hash or signature as.
local function bytes_view(s, full)
  local shown = full and #s or math.min(#s, 4)
  local digits = sub(s, 1, shown):gsub(".", function(c) return format("%02x", byte(c)) end)
  return format("<%d byte%s %s%s>", #s, #s == 1 and "" or "s", digits, shown < #s and "…" or "")
end

local function show_string(s, o)
  if o.bytes and s ~= "" and not is_text(s) then return bytes_view(s, o.bytes == "full") end
  return quote(s, o.ascii)
end

local function safe_tostring(v)
  local ok, s = pcall(tostring, v)
  if ok then
    if type(s) == "string" then return s end
    return "<error in __tostring: returned a " .. type(s) .. ">"
  end
  local msg = s
  if type(msg) ~= "string" then
    local ok2, m = pcall(tostring, msg)
    msg = ok2 and type(m) == "string" and m or type(msg)
  end
  return "<error in __tostring: " .. msg .. ">"
end

local function has_tostring(v)
  local mt = getmt(v)
  return type(mt) == "table" and rawget(mt, "__tostring") ~= nil
end

---------------------------------------------------------------------------
-- Key ordering

local type_rank = { number = 1, string = 2, boolean = 3, table = 4, ["function"] = 5, userdata = 6, thread = 7 }

local function key_less(a, b)
  local ta, tb = type(a), type(b)
  if ta ~= tb then return (type_rank[ta] or 8) < (type_rank[tb] or 8) end
  if ta == "number" or ta == "string" then return a < b end
  if ta == "boolean" then return b and not a end
  -- other types: by address, stable within one run (%p never calls metamethods)
  return format("%p", a) < format("%p", b)
end

---------------------------------------------------------------------------
-- The printer

local function normalize_opts(opts)
  if opts == nil then opts = {} end
  if type(opts) ~= "table" then
    error("bad argument #2 to 'inspect' (table expected, got " .. type(opts) .. ")", 3)
  end
  local depth = opts.depth
  if depth == nil then depth = math.huge end
  if type(depth) ~= "number" then
    error("inspect: opts.depth must be a number, got " .. type(depth), 3)
  end
  local indent = opts.indent
  if indent == nil then indent = "  " end
  if type(indent) == "number" then
    if indent < 0 or indent > 80 or mtype(indent) ~= "integer" then
      error("inspect: opts.indent must be an integer between 0 and 80 or a string, got " .. tostring(indent), 3)
    end
    indent = rep(" ", indent)
  elseif type(indent) ~= "string" then
    error("inspect: opts.indent must be a number or a string, got " .. type(indent), 3)
  end
  local width = opts.width
  if width == nil then width = 80 end
  if type(width) ~= "number" then
    error("inspect: opts.width must be a number, got " .. type(width), 3)
  end
  local bytes = opts.bytes
  if bytes == nil then bytes = "short" end
  if bytes ~= false and bytes ~= "short" and bytes ~= "full" then
    error("inspect: opts.bytes must be \"short\", \"full\" or false, got " .. tostring(bytes), 3)
  end
  return {
    depth = depth, indent = indent, width = width,
    metatables = opts.metatables and true or false,
    ascii = opts.ascii and true or false,
    bytes = bytes or nil,
  }
end

-- Pass 1: how many times each table is reached (contents visited once).
local function count_refs(root, show_mt)
  local counts = {}
  local stack, n = { root }, 1
  while n > 0 do
    local v = stack[n]; stack[n] = nil; n = n - 1
    if type(v) == "table" and not has_tostring(v) then
      local c = counts[v]
      if c then
        counts[v] = c + 1
      else
        counts[v] = 1
        for k, val in next, v do
          if type(k) == "table" then n = n + 1; stack[n] = k end
          if type(val) == "table" then n = n + 1; stack[n] = val end
        end
        if show_mt then
          local mt = getmt(v)
          if type(mt) == "table" then n = n + 1; stack[n] = mt end
        end
      end
    end
  end
  return counts
end

-- Pass 2 builds a tree in output order: a node is either a string (a leaf) or
-- { tag = "<table 1>" | nil, [i] = { key = string | nil, value = node } }.
local function build_tree(root, o)
  local counts = count_refs(root, o.metatables)
  local table_ids, next_table_id = {}, 0
  local other_ids, next_other_id = {}, {}
  local on_stack = {}

  local build

  local function scalar_key(k)
    local tk = type(k)
    if tk == "string" then
      if is_identifier(k) then return k end
      return "[" .. show_string(k, o) .. "]"
    elseif tk == "number" then
      return "[" .. format_number(k) .. "]"
    end
    return nil
  end

  function build(v, level)
    local tv = type(v)
    if tv == "string" then return show_string(v, o) end
    if tv == "number" then return format_number(v) end
    if tv == "nil" or tv == "boolean" then return tostring(v) end
    if has_tostring(v) then return safe_tostring(v) end
    if tv ~= "table" then
      local id = other_ids[v]
      if not id then
        id = (next_other_id[tv] or 0) + 1
        next_other_id[tv] = id
        other_ids[v] = id
      end
      return "<" .. tv .. " " .. id .. ">"
    end
    local id = table_ids[v]
    if id then
      return (on_stack[v] and "<cycle " or "<table ") .. id .. ">"
    end
    local mt = o.metatables and getmt(v) or nil
    if next(v) == nil and mt == nil then
      if (counts[v] or 0) > 1 then
        next_table_id = next_table_id + 1
        table_ids[v] = next_table_id
        return { tag = "<table " .. next_table_id .. ">" }
      end
      return "{}"
    end
    if level >= o.depth then return "{...}" end
    local node = {}
    if (counts[v] or 0) > 1 then
      next_table_id = next_table_id + 1
      table_ids[v] = next_table_id
      node.tag = "<table " .. next_table_id .. ">"
    end
    on_stack[v] = true
    -- sequence part
    local n = 0
    while rawget(v, n + 1) ~= nil do
      n = n + 1
      node[n] = { value = build(rawget(v, n), level + 1) }
    end
    -- other keys, sorted
    local keys, nk = {}, 0
    for k in next, v do
      if not (mtype(k) == "integer" and k >= 1 and k <= n) then
        nk = nk + 1; keys[nk] = k
      end
    end
    sort(keys, key_less)
    for i = 1, nk do
      local k = keys[i]
      local key = scalar_key(k)
      if not key then
        local knode = build(k, level + 1)
        key = { bracket = knode }
      end
      node[#node + 1] = { key = key, value = build(rawget(v, k), level + 1) }
    end
    if mt ~= nil then
      node[#node + 1] = { key = "<metatable>", value = build(mt, level + 1) }
    end
    on_stack[v] = nil
    return node
  end

  return build(root, 0)
end

-- Rendering ---------------------------------------------------------------

local render_compact -- (node, limit) -> string or nil when longer than limit

local function key_text(key, limit)
  if type(key) == "string" then return key end
  local inner = render_compact(key.bracket, math.huge)
  return "[" .. inner .. "]"
end

function render_compact(node, limit)
  if type(node) == "string" then
    if #node > limit then return nil end
    return node
  end
  local cache = node.compact
  if cache then
    if #cache > limit then return nil end
    return cache
  end
  -- node.longer_than: a limit this node is already known not to fit in
  if node.longer_than and limit <= node.longer_than then return nil end
  local parts, len = {}, 2 + (node.tag and #node.tag or 0)
  for i = 1, #node do
    local item = node[i]
    local value = render_compact(item.value, limit - len)
    if not value then node.longer_than = limit; return nil end
    local text = value
    if item.key then text = key_text(item.key) .. " = " .. value end
    parts[i] = text
    len = len + #text + (i > 1 and 2 or 0)
    if len > limit then node.longer_than = limit; return nil end
  end
  local s = (node.tag or "") .. "{" .. concat(parts, ", ") .. "}"
  node.compact = s
  return s
end

local function render(node, out, column, level, o)
  if type(node) == "string" then out[#out + 1] = node; return end
  local compact = render_compact(node, o.width - column)
  if compact then out[#out + 1] = compact; return end
  local pad = rep(o.indent, level + 1)
  out[#out + 1] = (node.tag or "") .. "{\n"
  for i = 1, #node do
    local item = node[i]
    out[#out + 1] = pad
    local col = #pad
    if item.key then
      local k = key_text(item.key) .. " = "
      out[#out + 1] = k
      col = col + #k
    end
    render(item.value, out, col, level + 1, o)
    out[#out + 1] = i < #node and ",\n" or "\n"
  end
  out[#out + 1] = rep(o.indent, level) .. "}"
end

local function inspect(value, opts)
  local o = normalize_opts(opts)
  local ok, result = pcall(function()
    local tree = build_tree(value, o)
    local out = {}
    render(tree, out, 0, 0, o)
    return concat(out)
  end)
  if ok then return result end
  local msg = type(result) == "string" and result or type(result)
  if find(msg, "stack overflow", 1, true) then
    msg = "value nested too deeply to print; pass opts.depth to limit it"
  end
  return "<error in inspect: " .. msg .. ">"
end

M.inspect = inspect

--- Inspects each argument and joins them with tabs, as a REPL prints several results.
function M.values(...)
  local n = select("#", ...)
  local parts = {}
  for i = 1, n do
    parts[i] = inspect((select(i, ...)))
  end
  return concat(parts, "\t")
end

--- Like values, with options first: `inspect.values_with({bytes = "short"}, ...)`.
function M.values_with(opts, ...)
  local n = select("#", ...)
  local parts = {}
  for i = 1, n do
    parts[i] = inspect((select(i, ...)), opts)
  end
  return concat(parts, "\t")
end

return setmetatable(M, {
  __call = function(_, value, opts) return inspect(value, opts) end,
})
