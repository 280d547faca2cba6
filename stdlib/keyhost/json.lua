-- keyhost.json: RFC 8259 JSON for Lua 5.4.
--
--   local json = require "keyhost.json"
--   local v = json.decode('{"a": [1, 2.5, null, "x"], "big": 123456789012345678901}')
--   v.a[3] == json.null           -- null decodes to a sentinel (tostring: "null")
--   v.big.text                    -- "123456789012345678901": a json.number, kept exact
--   json.encode(v)                --> {"a":[1,2.5,null,"x"],"big":123456789012345678901}
--   json.encode(v, { indent = 2 })
--
-- Decoding
--   json.decode(text [, opts]) -> value
--   * objects -> tables with metatable json.object_mt, arrays -> sequences with
--     json.array_mt (so `[]` and `{}` survive a round trip); opts.metatables = false
--     returns plain tables;
--   * null -> json.null; opts.null = v uses v instead, opts.null_as_nil = true uses nil
--     (object members disappear, arrays get holes);
--   * strings: every escape, \uXXXX surrogate pairs -> UTF-8; lone surrogates are errors;
--   * integers that fit in a Lua integer -> integers; larger ones -> json.number (exact
--     text); numbers with a fraction or exponent -> floats (json.number if they overflow
--     to infinity, so they stay exact);
--   * errors name the position: "json.decode: line 3, column 7 (byte 42): expected ','
--     or '}' after object member, got 'x'";
--   * rejected: trailing garbage, leading zeros, trailing commas, comments, NaN/Infinity,
--     single quotes, unescaped control characters, a UTF-8 byte order mark, invalid
--     UTF-8 (unless opts.allow_invalid_utf8), nesting deeper than opts.max_depth (512;
--     a limit beyond what the Lua stack can hold gives a clear error, not a crash);
--   * duplicate object keys: the last one wins.
--
-- Encoding
--   json.encode(value [, opts]) -> string
--   * nil and json.null -> null; booleans; integers; floats written in the shortest form
--     that reads back exactly (1.0 stays 1.0, 1e+16, 0.1); NaN and infinities are errors;
--   * a table with keys 1..n -> array; json.array_mt tables always arrays (holes -> null);
--     an empty table -> {} unless it carries json.array_mt; other tables -> objects with
--     sorted keys (integer keys written as strings; other key types are errors);
--   * strings must be valid UTF-8 (binary data: hex-encode it first); opts.ascii = true
--     escapes non-ASCII as \uXXXX (surrogate pairs above U+FFFF);
--   * a __tojson metamethod returns a Lua value to encode in place of the original
--     (an error it raises is reported with the path of the value);
--   * json.number values are written verbatim;
--   * cycles, functions, threads and userdata without __tojson are errors naming the
--     path, e.g. "json.encode: value at $.a[3] is a function ..." (Lua indices; very
--     deep paths are shortened in the middle);
--   * opts.indent (a number of spaces or a string) pretty-prints like Python's
--     json.dumps(indent=...); opts.max_depth (512) limits nesting.
--
-- Constructors and markers: json.array(t), json.object(t), json.number(text),
-- json.null, json.array_mt, json.object_mt, json.number_mt, json.is_number(v).

local M = {}

local type, next, rawget, rawequal, setmetatable, tonumber, select, error, pcall =
  type, next, rawget, rawequal, setmetatable, tonumber, select, error, pcall
local byte, char, find, format, sub, gsub, match, rep =
  string.byte, string.char, string.find, string.format, string.sub, string.gsub, string.match, string.rep
local concat, sort = table.concat, table.sort
local mtype, huge = math.type, math.huge
local utf8_len, utf8_char, utf8_codepoint = utf8.len, utf8.char, utf8.codepoint

local getmt = (debug and debug.getmetatable) or getmetatable

---------------------------------------------------------------------------
-- Sentinels, markers and json.number

local null_mt = {
  __name = "json.null",
  __tostring = function() return "null" end,
  __newindex = function() error("json.null is a read-only sentinel", 2) end,
}
M.null = setmetatable({}, null_mt)

M.array_mt = { __name = "json.array" }
M.object_mt = { __name = "json.object" }
local null, array_mt, object_mt = M.null, M.array_mt, M.object_mt

local number_mt
number_mt = {
  __name = "json.number",
  __tostring = function(self) return rawget(self, "text") end,
  __eq = function(a, b)
    return getmetatable(a) == number_mt and getmetatable(b) == number_mt
      and rawget(a, "text") == rawget(b, "text")
  end,
  __concat = function(a, b)
    if getmetatable(a) == number_mt then a = rawget(a, "text") end
    if getmetatable(b) == number_mt then b = rawget(b, "text") end
    return a .. b
  end,
}
M.number_mt = number_mt

local function make_number(text)
  return setmetatable({ text = text }, number_mt)
end

local function is_number_literal(s)
  local int, rest = match(s, "^%-?(%d+)(.*)$")
  if not int or (#int > 1 and byte(int) == 48) then return false end
  local after_fraction = match(rest, "^%.%d+(.*)$")
  if after_fraction then rest = after_fraction end
  return rest == "" or find(rest, "^[eE][-+]?%d+$") ~= nil
end

local format_float -- defined below

--- json.number(text): an exact JSON number, written verbatim by json.encode.
-- Accepts a JSON number literal ("12345678901234567890", "1.5e300") or a Lua number.
function M.number(...)
  local v = ...
  if select("#", ...) == 0 then error("bad argument #1 to 'number' (string expected, got no value)", 2) end
  if mtype(v) == "integer" then return make_number(format("%d", v)) end
  if mtype(v) == "float" then
    if v ~= v or v == huge or v == -huge then
      error("json.number: " .. tostring(v) .. " cannot be written as JSON", 2)
    end
    return make_number(format_float(v))
  end
  if type(v) ~= "string" then
    error("bad argument #1 to 'number' (string expected, got " .. type(v) .. ")", 2)
  end
  if not is_number_literal(v) then
    error(format("json.number: %q is not a JSON number literal (like 12, -3.5 or 1e300)", v), 2)
  end
  return make_number(v)
end

--- True if v is a json.number.
function M.is_number(v)
  return type(v) == "table" and getmetatable(v) == number_mt
end

local function mark(fname, mt)
  return function(...)
    local t = ...
    if t == nil then return setmetatable({}, mt) end
    if type(t) ~= "table" then
      error(format("bad argument #1 to '%s' (table expected, got %s)", fname, type(t)), 2)
    end
    local old = getmetatable(t)
    if old ~= nil and old ~= mt then
      error(format("json.%s: the table already has a metatable; copy it into a plain table first", fname), 2)
    end
    return setmetatable(t, mt)
  end
end

--- json.array(t): marks t (or a new table) as a JSON array; returns it.
M.array = mark("array", array_mt)
--- json.object(t): marks t (or a new table) as a JSON object; returns it.
M.object = mark("object", object_mt)

---------------------------------------------------------------------------
-- Shared helpers

local function bad_argument(n, fname, expected, v, count)
  local got = (count < n) and "no value" or type(v)
  error(format("bad argument #%d to '%s' (%s expected, got %s)", n, fname, expected, got), 3)
end

local function check_opts(fname, opts)
  if opts ~= nil and type(opts) ~= "table" then
    error(format("bad argument #2 to '%s' (table expected, got %s)", fname, type(opts)), 3)
  end
  return opts or {}
end

-- Shortest text that reads back as exactly x, formatted like Python's repr(float):
-- fixed notation for 1e-4 <= |x| < 1e16 (always with a fraction: 1.0), else 1e+16.
function format_float(x)
  local s = format("%.14e", x)
  if x ~= 0 and x > -2.2250738585072014e-308 and x < 2.2250738585072014e-308 then
    -- subnormal: fewer significant digits may suffice, search from the shortest
    for p = 0, 16 do
      s = format("%." .. p .. "e", x)
      if tonumber(s) == x then break end
    end
  elseif tonumber(s) ~= x then
    -- 15 significant digits did not read back; the correctly rounded 16 or 17 will
    s = format("%.15e", x)
    if tonumber(s) ~= x then s = format("%.16e", x) end
  end
  local sign, int, frac, exp = match(s, "^(%-?)(%d)%.?(%d*)e([-+]%d+)$")
  local digits = gsub(int .. frac, "0+$", "")
  if digits == "" then digits = "0" end
  local e = tonumber(exp)
  if e < -4 or e >= 16 then
    local mant = sub(digits, 1, 1)
    if #digits > 1 then mant = mant .. "." .. sub(digits, 2) end
    return sign .. mant .. "e" .. format("%+03d", e)
  elseif e >= 0 then
    if #digits <= e + 1 then
      return sign .. digits .. rep("0", e + 1 - #digits) .. ".0"
    end
    return sign .. sub(digits, 1, e + 1) .. "." .. sub(digits, e + 2)
  else
    return sign .. "0." .. rep("0", -e - 1) .. digits
  end
end
M.format_float = format_float

---------------------------------------------------------------------------
-- Decoding

local decode_error_mt = {}

local escapes = {
  [34] = '"', [92] = "\\", [47] = "/", [98] = "\b", [102] = "\f", [110] = "\n", [114] = "\r", [116] = "\t",
}

local function position_text(s, pos)
  local line, line_start = 1, 1
  local prefix = sub(s, 1, pos - 1)
  for nl in string.gmatch(prefix, "()\n") do
    line = line + 1
    line_start = nl + 1
  end
  local col_text = sub(s, line_start, pos - 1)
  local col = (utf8_len(col_text, 1, -1, true) or #col_text) + 1
  return format("line %d, column %d (byte %d)", line, col, pos)
end

local function decode_impl(s, opts)
  local null_value = null
  if opts.null_as_nil then null_value = nil elseif opts.null ~= nil then null_value = opts.null end
  local max_depth = opts.max_depth or 512
  if mtype(max_depth) ~= "integer" or max_depth < 1 then
    error(setmetatable({ msg = "opts.max_depth must be a positive integer, got " .. tostring(max_depth) }, decode_error_mt), 0)
  end
  local amt, omt = array_mt, object_mt
  if opts.metatables == false then amt, omt = nil, nil end
  local depth = 0

  local function fail(msg, at)
    error(setmetatable({ msg = msg, pos = at }, decode_error_mt), 0)
  end

  -- Describes what is at position p, for "got ..." in messages.
  local function got(p)
    if p > #s then return "end of input" end
    local word = match(s, "^[%w_%.%+%-]+", p)
    if word and #word > 1 then
      if #word > 16 then word = sub(word, 1, 16) .. "..." end
      return "'" .. word .. "'"
    end
    local c = byte(s, p)
    if c < 32 or c == 127 then return format("control character U+%04X", c) end
    if c >= 128 then
      local n = c >= 0xF0 and 4 or c >= 0xE0 and 3 or c >= 0xC0 and 2 or 1
      local ch = sub(s, p, p + n - 1)
      if utf8_len(ch) == 1 then
        local cp = utf8_codepoint(ch)
        return format("'%s' (U+%04X)", ch, cp)
      end
      return format("byte 0x%02x", c)
    end
    if c == 39 then return "a single quote (JSON strings use double quotes)" end
    return "'" .. char(c) .. "'"
  end

  local function skip(p)
    local b = byte(s, p)
    if b and b > 32 then return p end
    local _, e = find(s, "^[ \t\r\n]*", p)
    return e + 1
  end

  local function parse_string(p)
    local i = p + 1
    local e = find(s, '["\\\0-\31]', i)
    if not e then fail("string is never closed (missing '\"')", p) end
    if byte(s, e) == 34 then return sub(s, i, e - 1), e + 1 end
    local buf, n = {}, 0
    while true do
      if e > i then n = n + 1; buf[n] = sub(s, i, e - 1) end
      local c = byte(s, e)
      if c == 34 then
        return concat(buf), e + 1
      elseif c == 92 then
        local esc = byte(s, e + 1)
        if esc == 117 then -- \uXXXX
          local h = match(s, "^%x%x%x%x", e + 2)
          if not h then fail("invalid \\u escape: expected 4 hex digits after \\u", e) end
          local cp = tonumber(h, 16)
          i = e + 6
          if cp >= 0xD800 and cp <= 0xDBFF then
            local lo = match(s, "^\\u([dD][c-fC-F]%x%x)", i)
            if not lo then
              fail("lone surrogate \\u" .. h .. ": a high surrogate must be followed by a \\uDC00-\\uDFFF low surrogate", e)
            end
            cp = 0x10000 + ((cp - 0xD800) << 10) + (tonumber(lo, 16) - 0xDC00)
            i = i + 6
          elseif cp >= 0xDC00 and cp <= 0xDFFF then
            fail("lone surrogate \\u" .. h .. ": a low surrogate must follow a high surrogate", e)
          end
          n = n + 1; buf[n] = utf8_char(cp)
        else
          local r = esc and escapes[esc]
          if not r then
            if not esc then fail("string is never closed (missing '\"')", p) end
            local shown = (esc >= 33 and esc < 127) and ("'\\" .. char(esc) .. "'") or got(e + 1)
            fail("invalid escape " .. shown .. " in string; valid escapes are \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX", e)
          end
          n = n + 1; buf[n] = r
          i = e + 2
        end
      else
        fail(format("unescaped control character U+%04X in string; write it as \\u%04x", c, c), e)
      end
      e = find(s, '["\\\0-\31]', i)
      if not e then fail("string is never closed (missing '\"')", p) end
    end
  end

  local function parse_number(p)
    local q = p
    if byte(s, q) == 45 then q = q + 1 end
    local c = byte(s, q)
    if c == 48 then
      q = q + 1
      local d = byte(s, q)
      if d and d >= 48 and d <= 57 then fail("leading zeros are not allowed in numbers", p) end
    elseif c and c >= 49 and c <= 57 then
      local _, e = find(s, "^%d*", q + 1)
      q = e + 1
    else
      fail("expected a digit after '-', got " .. got(q), q)
    end
    local is_float = false
    if byte(s, q) == 46 then
      local _, e = find(s, "^%d+", q + 1)
      if not e then fail("expected a digit after the decimal point, got " .. got(q + 1), q + 1) end
      q = e + 1
      is_float = true
    end
    c = byte(s, q)
    if c == 101 or c == 69 then
      local _, e = find(s, "^[-+]?%d+", q + 1)
      if not e then fail("expected digits in the exponent, got " .. got(q + 1), q + 1) end
      q = e + 1
      is_float = true
    end
    local text = sub(s, p, q - 1)
    local v = tonumber(text)
    if is_float then
      if v == huge or v == -huge then return make_number(text), q end
      return v, q
    end
    if mtype(v) == "integer" then return v, q end
    return make_number(text), q
  end

  local parse_value

  local function parse_array(p)
    depth = depth + 1
    if depth > max_depth then
      fail(format("nesting deeper than %d levels; pass opts.max_depth to allow more", max_depth), p)
    end
    local arr, n = {}, 0
    p = skip(p + 1)
    if byte(s, p) ~= 93 then
      while true do
        local v
        v, p = parse_value(p)
        n = n + 1
        arr[n] = v
        p = skip(p)
        local c = byte(s, p)
        if c == 44 then
          p = skip(p + 1)
          if byte(s, p) == 93 then fail("trailing comma before ']'", p) end
        elseif c == 93 then
          break
        else
          fail("expected ',' or ']' after array element, got " .. got(p), p)
        end
      end
    end
    depth = depth - 1
    if amt then setmetatable(arr, amt) end
    return arr, p + 1
  end

  local function parse_object(p)
    depth = depth + 1
    if depth > max_depth then
      fail(format("nesting deeper than %d levels; pass opts.max_depth to allow more", max_depth), p)
    end
    local obj = {}
    p = skip(p + 1)
    if byte(s, p) ~= 125 then
      while true do
        if byte(s, p) ~= 34 then
          fail("expected a string key in object, got " .. got(p), p)
        end
        local key, v
        key, p = parse_string(p)
        p = skip(p)
        if byte(s, p) ~= 58 then fail("expected ':' after object key, got " .. got(p), p) end
        v, p = parse_value(skip(p + 1))
        obj[key] = v
        p = skip(p)
        local c = byte(s, p)
        if c == 44 then
          p = skip(p + 1)
          if byte(s, p) == 125 then fail("trailing comma before '}'", p) end
        elseif c == 125 then
          break
        else
          fail("expected ',' or '}' after object member, got " .. got(p), p)
        end
      end
    end
    depth = depth - 1
    if omt then setmetatable(obj, omt) end
    return obj, p + 1
  end

  function parse_value(p)
    local c = byte(s, p)
    if c == 34 then return parse_string(p)
    elseif c == 123 then return parse_object(p)
    elseif c == 91 then return parse_array(p)
    elseif c == 45 or (c and c >= 48 and c <= 57) then return parse_number(p)
    elseif c == 116 then
      if sub(s, p, p + 3) == "true" then return true, p + 4 end
    elseif c == 102 then
      if sub(s, p, p + 4) == "false" then return false, p + 5 end
    elseif c == 110 then
      if sub(s, p, p + 3) == "null" then return null_value, p + 4 end
    end
    fail("expected a JSON value, got " .. got(p), p)
  end

  if find(s, "^\239\187\191") then
    fail("input starts with a UTF-8 byte order mark; remove it before decoding", 1)
  end
  if not opts.allow_invalid_utf8 then
    local ok, bad = utf8_len(s)
    if not ok then
      fail(format("invalid UTF-8 (byte 0x%02x); JSON text must be UTF-8 (pass opts.allow_invalid_utf8 to accept raw bytes)",
        byte(s, bad)), bad)
    end
  end
  local value, p = parse_value(skip(1))
  p = skip(p)
  if p <= #s then
    fail("unexpected " .. got(p) .. " after the JSON value; only whitespace may follow it", p)
  end
  return value
end

--- json.decode(text [, opts]) -> value. See the header for opts.
function M.decode(...)
  local s, opts = ...
  if type(s) ~= "string" then bad_argument(1, "decode", "string", s, select("#", ...)) end
  opts = check_opts("decode", opts)
  local ok, result = pcall(decode_impl, s, opts)
  if ok then return result end
  if getmetatable(result) == decode_error_mt then
    if result.pos then
      error("json.decode: " .. position_text(s, result.pos) .. ": " .. result.msg, 2)
    end
    error("json.decode: " .. result.msg, 2)
  end
  if type(result) == "string" and find(result, "stack overflow", 1, true) then
    error("json.decode: nesting too deep for the Lua stack; lower opts.max_depth (default 512)", 2)
  end
  error(result, 0)
end

---------------------------------------------------------------------------
-- Encoding

local encode_error_mt = {}

local escape_map = {
  ['"'] = '\\"', ["\\"] = "\\\\", ["\b"] = "\\b", ["\f"] = "\\f", ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t",
}
for i = 0, 31 do
  local c = char(i)
  if not escape_map[c] then escape_map[c] = format("\\u%04x", i) end
end

local function ascii_escape(ch)
  local cp = utf8_codepoint(ch)
  if cp < 0x10000 then return format("\\u%04x", cp) end
  cp = cp - 0x10000
  return format("\\u%04x\\u%04x", 0xD800 + (cp >> 10), 0xDC00 + (cp & 0x3FF))
end

-- "$.a[3]" for path {"a", 3}; very deep paths keep their first and last 8 steps.
local function path_text(path, n)
  local parts = { "$" }
  for i = 1, n do
    local k = path[i]
    if n > 20 and i == 9 then
      parts[#parts + 1] = format("...(%d more)...", n - 16)
    end
    if n > 20 and i > 8 and i <= n - 8 then goto continue end
    if type(k) == "string" then
      if find(k, "^[A-Za-z_][A-Za-z0-9_]*$") then
        parts[#parts + 1] = "." .. k
      else
        parts[#parts + 1] = '["' .. gsub(k, '[%c"\\\128-\255]', function(c)
          return format("\\x%02x", byte(c))
        end) .. '"]'
      end
    else
      parts[#parts + 1] = "[" .. tostring(k) .. "]"
    end
    ::continue::
  end
  return concat(parts)
end

local function describe_key(k)
  local tk = type(k)
  if mtype(k) == "integer" then return format("the integer key %d", k) end
  if tk == "number" then
    return "the float key " .. ((k ~= k or k == huge or k == -huge) and tostring(k) or format_float(k))
  end
  if tk == "boolean" then return "the boolean key " .. tostring(k) end
  return "a " .. tk .. " key (" .. tostring(k) .. ")"
end

local function encode_impl(value, opts)
  local ascii = opts.ascii
  local indent = opts.indent
  if indent == false then indent = nil end
  if type(indent) == "number" then
    if mtype(indent) ~= "integer" or indent < 0 then
      error(setmetatable({ msg = "opts.indent must be a non-negative integer or a string, got " .. tostring(indent) }, encode_error_mt), 0)
    end
    indent = rep(" ", indent)
  elseif indent ~= nil and type(indent) ~= "string" then
    error(setmetatable({ msg = "opts.indent must be a number or a string, got " .. type(indent) }, encode_error_mt), 0)
  end
  local colon = indent and ": " or ":"
  local max_depth = opts.max_depth or 512
  if mtype(max_depth) ~= "integer" or max_depth < 1 then
    error(setmetatable({ msg = "opts.max_depth must be a positive integer, got " .. tostring(max_depth) }, encode_error_mt), 0)
  end

  local buf, n = {}, 0
  local path, plen = {}, 0
  local active = {} -- tables being encoded -> path length where they were entered

  local function fail(msg)
    error(setmetatable({ msg = msg }, encode_error_mt), 0)
  end

  local function here() return path_text(path, plen) end

  local function encode_string(str, what)
    if not utf8_len(str) then
      fail(format("%s at %s is not valid UTF-8; encode binary data as hex first", what, here()))
    end
    if find(str, '["\\\0-\31]') then str = gsub(str, '["\\\0-\31]', escape_map) end
    if ascii and find(str, "[\127-\255]") then
      str = gsub(str, "\127", "\\u007f")
      str = gsub(str, "[\194-\244][\128-\191]*", ascii_escape)
    end
    n = n + 1; buf[n] = '"'
    n = n + 1; buf[n] = str
    n = n + 1; buf[n] = '"'
  end

  local encode_value

  local function newline(level)
    n = n + 1; buf[n] = "\n" .. rep(indent, level)
  end

  local function encode_table(t, mt, level)
    local entered = active[t]
    if entered then
      fail(format("table at %s contains itself (it is also at %s); JSON cannot represent cycles",
        here(), path_text(path, entered)))
    end
    if level >= max_depth then
      fail(format("value at %s is nested deeper than %d levels; pass opts.max_depth to allow more", here(), max_depth))
    end
    active[t] = plen
    local kind = (mt == array_mt and "array") or (mt == object_mt and "object") or nil
    local count, max, bad_key = 0, 0, nil
    for k in next, t do
      count = count + 1
      if mtype(k) == "integer" and k > 0 then
        if k > max then max = k end
      elseif bad_key == nil then
        bad_key = k
      end
    end
    if kind == nil then
      kind = (count > 0 and bad_key == nil and max == count) and "array" or "object"
    end
    if kind == "array" then
      if bad_key ~= nil then
        fail(format("table at %s is marked as a JSON array but has %s; arrays only have integer keys 1..n",
          here(), type(bad_key) == "string" and format("the key %q", bad_key) or describe_key(bad_key)))
      end
      if max == 0 then
        n = n + 1; buf[n] = "[]"
      else
        n = n + 1; buf[n] = "["
        plen = plen + 1
        for i = 1, max do
          if i > 1 then n = n + 1; buf[n] = "," end
          if indent then newline(level + 1) end
          path[plen] = i
          local v = rawget(t, i)
          if v == nil then n = n + 1; buf[n] = "null" else encode_value(v, level + 1) end
        end
        plen = plen - 1
        if indent then newline(level) end
        n = n + 1; buf[n] = "]"
      end
    else
      if count == 0 then
        n = n + 1; buf[n] = "{}"
      else
        local names, original, nk = {}, {}, 0
        for k in next, t do
          local name
          if type(k) == "string" then
            name = k
          elseif mtype(k) == "integer" then
            name = format("%d", k)
          else
            fail(format("table at %s has %s; JSON object keys must be strings", here(), describe_key(k)))
          end
          if original[name] ~= nil then
            fail(format("table at %s has both the integer key %s and the string key %q, which are the same JSON key",
              here(), name, name))
          end
          original[name] = k
          nk = nk + 1
          names[nk] = name
        end
        sort(names)
        n = n + 1; buf[n] = "{"
        plen = plen + 1
        for i = 1, nk do
          if i > 1 then n = n + 1; buf[n] = "," end
          if indent then newline(level + 1) end
          local name = names[i]
          local k = original[name]
          path[plen] = k
          encode_string(name, "key")
          n = n + 1; buf[n] = colon
          encode_value(rawget(t, k), level + 1)
        end
        plen = plen - 1
        if indent then newline(level) end
        n = n + 1; buf[n] = "}"
      end
    end
    active[t] = nil
  end

  function encode_value(v, level)
    local tv = type(v)
    if tv == "string" then
      encode_string(v, "value")
    elseif tv == "number" then
      if mtype(v) == "integer" then
        n = n + 1; buf[n] = format("%d", v)
      elseif v ~= v or v == huge or v == -huge then
        fail(format("value at %s is %s, which JSON cannot represent", here(),
          v ~= v and "NaN" or (v > 0 and "infinity" or "-infinity")))
      else
        n = n + 1; buf[n] = format_float(v)
      end
    elseif tv == "boolean" then
      n = n + 1; buf[n] = v and "true" or "false"
    elseif v == nil or rawequal(v, null) then
      n = n + 1; buf[n] = "null"
    else
      local mt = getmt(v)
      if mt == number_mt then
        n = n + 1; buf[n] = rawget(v, "text")
        return
      end
      local tojson = type(mt) == "table" and rawget(mt, "__tojson")
      if tojson then
        if active[v] then
          fail(format("value at %s contains itself (it is also at %s); JSON cannot represent cycles",
            here(), path_text(path, active[v])))
        end
        active[v] = plen
        local ok, r = pcall(tojson, v)
        if not ok then
          if getmetatable(r) == encode_error_mt then error(r, 0) end
          fail(format("__tojson of the value at %s raised an error: %s", here(), tostring(r)))
        end
        if rawequal(r, v) then
          fail(format("__tojson of the value at %s returned the value itself; return a plain table or string", here()))
        end
        encode_value(r, level)
        active[v] = nil
        return
      end
      if tv == "table" then
        encode_table(v, mt, level)
      else
        fail(format("value at %s is a %s, which JSON cannot represent; convert it first or give it a __tojson metamethod",
          here(), tv))
      end
    end
  end

  encode_value(value, 0)
  return concat(buf)
end

--- json.encode(value [, opts]) -> string. See the header for opts.
function M.encode(...)
  local value, opts = ...
  if select("#", ...) == 0 then
    error("bad argument #1 to 'encode' (value expected)", 2)
  end
  opts = check_opts("encode", opts)
  local ok, result = pcall(encode_impl, value, opts)
  if ok then return result end
  if getmetatable(result) == encode_error_mt then
    error("json.encode: " .. result.msg, 2)
  end
  if type(result) == "string" and find(result, "stack overflow", 1, true) then
    error("json.encode: value nested too deep for the Lua stack; lower opts.max_depth (default 512)", 2)
  end
  error(result, 0)
end

return M
