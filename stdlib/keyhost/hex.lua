-- keyhost.hex: hex encoding helpers. Bytes are Lua strings; hex output is lowercase.
--
--   hex.encode("\1\171")                  --> "01ab"
--   hex.encode("\1\171", { upper = true, separator = ":" })  --> "01:AB"
--   hex.decode("01ab")  hex.decode("0x01AB")                   --> "\1\171"
--   hex.decode("01:ab cd", { lenient = true })                 --> "\1\171\205"
--   hex.is_hex("01ab")                    --> true
--   print(hex.dump(bytes))                -- offset, hex bytes, ASCII column
--   hex(bytes)                            --> hex.encode(bytes): the whole hex at the REPL prompt

local M = {}

local byte, char, find, format, sub, gsub = string.byte, string.char, string.find, string.format, string.sub, string.gsub
local concat = table.concat

local to_hex, to_hex_upper, from_hex = {}, {}, {}
for i = 0, 255 do
  local c = char(i)
  to_hex[c] = format("%02x", i)
  to_hex_upper[c] = format("%02X", i)
  from_hex[format("%02x", i)] = c
  from_hex[format("%02X", i)] = c
  from_hex[format("%02x", i):sub(1, 1) .. format("%02X", i):sub(2, 2)] = c
  from_hex[format("%02X", i):sub(1, 1) .. format("%02x", i):sub(2, 2)] = c
end

local function typename(v)
  return type(v)
end

local function check_string(fname, n, v, count)
  if type(v) ~= "string" then
    local got = (count < n) and "no value" or typename(v)
    error(format("bad argument #%d to '%s' (string expected, got %s)", n, fname, got), 3)
  end
end

local function check_opts(fname, n, opts)
  if opts ~= nil and type(opts) ~= "table" then
    error(format("bad argument #%d to '%s' (table expected, got %s)", n, fname, typename(opts)), 3)
  end
  return opts or {}
end

-- A readable rendering of one character for error messages.
local function show_char(c)
  local b = byte(c)
  if b >= 32 and b < 127 and c ~= "'" and c ~= "\\" then return "'" .. c .. "'" end
  return format("'\\x%02x'", b)
end

--- Encodes bytes as hex. opts.upper for uppercase, opts.separator between bytes.
function M.encode(...)
  local bytes, opts = ...
  check_string("encode", 1, bytes, select("#", ...))
  opts = check_opts("encode", 2, opts)
  local map = opts.upper and to_hex_upper or to_hex
  local sep = opts.separator
  if sep ~= nil and type(sep) ~= "string" then
    error("hex.encode: opts.separator must be a string, got " .. type(sep), 2)
  end
  if sep and sep ~= "" and #bytes > 1 then
    local parts = {}
    for i = 1, #bytes do parts[i] = map[sub(bytes, i, i)] end
    return concat(parts, sep)
  end
  return (gsub(bytes, ".", map))
end

-- Decodes, or returns nil, message for is_hex/decode to share.
local function decode(s, lenient)
  local offset = 0
  if sub(s, 1, 2) == "0x" or sub(s, 1, 2) == "0X" then
    offset = 2
  end
  local bad = find(s, "[^0-9a-fA-F]", offset + 1)
  local digits = offset == 0 and s or sub(s, offset + 1)
  if bad then
    if lenient then
      local really_bad = find(s, "[^0-9a-fA-F%s:]", offset + 1)
      if really_bad then bad = really_bad
      else
        bad = nil
        digits = gsub(digits, "[%s:]", "")
      end
    end
    if bad then
      return nil, format("character %d (%s) is not a hex digit", bad, show_char(sub(s, bad, bad))) ..
        (lenient and "" or (find(sub(s, bad, bad), "[%s:]") and "; pass { lenient = true } to allow separators" or ""))
    end
  end
  if #digits % 2 == 1 then
    return nil, format("odd number of hex digits (%d); each byte needs two digits", #digits)
  end
  return (gsub(digits, "..", from_hex))
end

--- Decodes hex (optional 0x prefix, either case) into bytes.
-- opts.lenient ignores whitespace and colons between digits.
function M.decode(...)
  local s, opts = ...
  check_string("decode", 1, s, select("#", ...))
  opts = check_opts("decode", 2, opts)
  local bytes, err = decode(s, opts.lenient)
  if not bytes then error("hex.decode: " .. err, 2) end
  return bytes
end

--- True if `s` is a string that hex.decode (with the same opts) accepts.
function M.is_hex(s, opts)
  if type(s) ~= "string" then return false end
  if opts ~= nil and type(opts) ~= "table" then
    error(format("bad argument #2 to 'is_hex' (table expected, got %s)", typename(opts)), 2)
  end
  return decode(s, opts and opts.lenient) ~= nil
end

--- A classic hexdump for display:
--   00000000  48 65 6c 6c 6f 2c 20 77  6f 72 6c 64 0a           |Hello, world.|
-- opts.width: bytes per line (default 16); opts.offset: address of the first byte
-- (default 0). Lines are joined with "\n", without a trailing newline; "" for no bytes.
function M.dump(...)
  local bytes, opts = ...
  check_string("dump", 1, bytes, select("#", ...))
  opts = check_opts("dump", 2, opts)
  local width = opts.width or 16
  if math.type(width) ~= "integer" or width < 1 then
    error("hex.dump: opts.width must be a positive integer, got " .. tostring(width), 2)
  end
  local base = opts.offset or 0
  if math.type(base) ~= "integer" or base < 0 then
    error("hex.dump: opts.offset must be a non-negative integer, got " .. tostring(base), 2)
  end
  local lines = {}
  local total = #bytes
  -- width of the hex column when full: "xx " per byte, plus one extra space per 8-byte group
  local hex_width = width * 3 + (width - 1) // 8
  local addr_digits = math.max(8, #format("%x", base + total))
  for start = 1, total, width do
    local chunk = sub(bytes, start, start + width - 1)
    local hexparts = {}
    for i = 1, #chunk do
      local h = to_hex[sub(chunk, i, i)]
      if i > 1 and (i - 1) % 8 == 0 then h = " " .. h end
      hexparts[i] = h
    end
    local hexcol = concat(hexparts, " ")
    hexcol = hexcol .. string.rep(" ", hex_width - 1 - #hexcol)
    local ascii = gsub(chunk, "[^\32-\126]", ".")
    lines[#lines + 1] = format("%0" .. addr_digits .. "x  %s  |%s|", base + start - 1, hexcol, ascii)
  end
  return concat(lines, "\n")
end

return setmetatable(M, {
  __call = function(_, bytes, opts) return M.encode(bytes, opts) end,
})
