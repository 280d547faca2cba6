-- Lua 5.4.4 bug 11: lundump.c loadDebug() read more upvalue names than the
-- function has upvalues (they share one array): a crafted binary chunk writes
-- past the array (segfault / heap corruption). The sandbox refuses binary chunks;
-- a fixed Lua loads this one without crashing.
local code =
  "\x1b\x4c\x75\x61\x54\x00\x19\x93\x0d\x0a\x1a\x0a\x04\x08\x08\x78\x56\z
   \x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x28\x77\x40\x00\x86\x40\z
   \x74\x65\x6d\x70\x81\x81\x01\x00\x02\x82\x48\x00\x02\x00\xc7\x00\x01\z
   \x00\x80\x80\x80\x82\x00\x00\x80\x81\x82\x78\x80\x82\x81\x86\x40\x74\z
   \x65\x6d\x70"
local ok, f, err = pcall(load, code)
if ok and f == nil then ok, err = false, err end
if not ok then
  local msg = tostring(f or err)
  assert(string.find(msg, "binary chunks are not allowed", 1, true), msg)
end
print("ok")
