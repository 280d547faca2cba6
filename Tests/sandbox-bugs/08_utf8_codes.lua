-- Lua 5.4.4 bug 8: lutf8lib.c iter_aux() skipped continuation bytes after each
-- character without checking them, so utf8.codes accepted "in\x80valid".
-- Wrong result only (reads stay inside the string and its terminating NUL).
local function rejects(s)
  local ok, err = pcall(function() for _ in utf8.codes(s) do end end)
  return not ok and string.find(tostring(err), "invalid UTF-8 code", 1, true) ~= nil
end
for _, s in ipairs({ "in\x80valid", "\xbfinvalid", "\xce\xb1\xce\xbb\xcf\x86\xbf\xce\xb1", "ab\x80" }) do
  assert(rejects(s), string.format("utf8.codes accepted %q", s))
end
assert(not rejects("h\xc3\xa9llo"))
print("ok")
