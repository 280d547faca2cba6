-- keyhost.test: a tiny test harness for Lua-side tests.
--
--   local t = require "keyhost.test"
--   t.test("adds", function()
--     t.eq(1 + 1, 2)
--     t.ok(type(x) == "table", "x is a table")
--     local err = t.raises(function() error("boom") end, "boom")
--   end)
--   t.run()   -- prints failures, then "N passed, M failed", then exits
--
-- Equality (t.eq) is deep for tables (keys and values compared with next/rawget,
-- metatables ignored, cycles handled), strict about integer vs float (1 ~= 1.0)
-- and treats NaN as equal to NaN. Non-table values use ==, so __eq is honoured
-- between two tables only when at least one side is not a plain table compared
-- structurally: tables whose metatable has __eq are compared with == first.

local M = {}

local tests = {}
local this_source -- the chunk name of this file, to skip our own frames

if debug and debug.getinfo then
  local info = debug.getinfo(1, "S")
  this_source = info and info.source
end

local function inspect(v)
  local ok, mod = pcall(require, "keyhost.inspect")
  if ok then
    local ok2, s = pcall(mod.inspect, v, { width = math.huge, bytes = "full" })
    if ok2 then return s end
  end
  if type(v) == "string" then return string.format("%q", v) end
  return tostring(v)
end

-- The location ("file:line") of the first stack frame outside this file.
local function caller_location()
  if not (debug and debug.getinfo) then return "?" end
  local level = 3
  while true do
    local info = debug.getinfo(level, "Sl")
    if not info then return "?" end
    if info.source ~= this_source and info.currentline and info.currentline > 0 then
      return info.short_src .. ":" .. info.currentline
    end
    level = level + 1
  end
end

-- A failure is a table so that run() can tell assertion failures from errors.
local failure_mt = {
  __tostring = function(self) return self.location .. ": " .. self.message end,
}

local function fail(message)
  error(setmetatable({ message = message, location = caller_location() }, failure_mt), 0)
end

local function same_number(a, b)
  if math.type(a) ~= math.type(b) then return false end
  if a ~= a and b ~= b then return true end -- NaN equals NaN here
  return a == b
end

local function deep_equal(a, b, seen)
  if rawequal(a, b) then return true end
  local ta, tb = type(a), type(b)
  if ta ~= tb then return false end
  if ta == "number" then return same_number(a, b) end
  if ta ~= "table" then return a == b end
  -- Tables with an __eq metamethod (e.g. json.number) decide for themselves.
  local mta, mtb = getmetatable(a), getmetatable(b)
  if (type(mta) == "table" and rawget(mta, "__eq")) or (type(mtb) == "table" and rawget(mtb, "__eq")) then
    return a == b
  end
  seen = seen or {}
  local pairs_seen = seen[a]
  if pairs_seen and pairs_seen[b] then return true end -- assume equal while comparing
  if not pairs_seen then pairs_seen = {}; seen[a] = pairs_seen end
  pairs_seen[b] = true
  for k, va in next, a do
    local vb = rawget(b, k)
    if vb == nil or not deep_equal(va, vb, seen) then return false end
  end
  for k in next, b do
    if rawget(a, k) == nil then return false end
  end
  return true
end

M.deep_equal = function(a, b) return deep_equal(a, b) end

--- Registers a test.
function M.test(name, fn)
  if type(name) ~= "string" then
    error("bad argument #1 to 'test' (string expected, got " .. type(name) .. ")", 2)
  end
  if type(fn) ~= "function" then
    error("bad argument #2 to 'test' (function expected, got " .. type(fn) .. ")", 2)
  end
  tests[#tests + 1] = { name = name, fn = fn }
end

--- Asserts deep equality of `actual` and `expected`.
function M.eq(actual, expected, msg)
  if not deep_equal(actual, expected) then
    fail((msg and (msg .. ": ") or "") .. "expected " .. inspect(expected) .. ", got " .. inspect(actual))
  end
  return actual
end

--- Asserts that `v` is truthy.
function M.ok(v, msg)
  if not v then fail(msg or ("expected a true value, got " .. inspect(v))) end
  return v
end

--- Escapes a plain string for use as a Lua pattern (for t.raises).
function M.plain(s)
  return (s:gsub("[%^%$%(%)%%%.%[%]%*%+%-%?]", "%%%0"))
end

--- Asserts that fn raises an error whose tostring matches `pattern`; returns the error.
function M.raises(fn, pattern, msg)
  local ok, err = pcall(fn)
  if ok then
    fail((msg and (msg .. ": ") or "") .. "expected an error" ..
      (pattern and (" matching " .. inspect(pattern)) or "") .. ", but none was raised")
  end
  if pattern then
    local text = tostring(err)
    if not text:find(pattern) then
      fail((msg and (msg .. ": ") or "") .. "error " .. inspect(text) .. " does not match " .. inspect(pattern))
    end
  end
  return err
end

--- Runs all registered tests, prints failures and one summary line, then exits.
-- Set KEYHOST_TEST_FILTER to a plain substring to run only matching tests.
function M.run()
  local filter = os.getenv and os.getenv("KEYHOST_TEST_FILTER")
  if filter == "" then filter = nil end
  local passed, failed = 0, 0
  for _, case in ipairs(tests) do
    if not filter or case.name:find(filter, 1, true) then
      local ok, err = xpcall(case.fn, function(e)
        if getmetatable(e) == failure_mt then return e end
        local text = tostring(e)
        if debug and debug.traceback then
          -- keep only the first frame of the traceback that is in the test file
          local tb = debug.traceback("", 2)
          local where = tb:match("\n%s*([^\n]-:%d+:) in [^\n]*")
          if where and not text:find(where, 1, true) then text = text .. " (at " .. where:sub(1, -2) .. ")" end
        end
        return text
      end)
      if ok then
        passed = passed + 1
      else
        failed = failed + 1
        local line = tostring(err):gsub("\n", "\\n")
        print("FAIL " .. case.name .. ": " .. line)
      end
    end
  end
  print(string.format("%d passed, %d failed", passed, failed))
  os.exit(failed == 0 and 0 or 1)
end

return M
