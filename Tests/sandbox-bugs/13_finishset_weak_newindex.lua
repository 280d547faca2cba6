-- Lua 5.4.1-5.4.7 (listed for 5.4.7, present in 5.4.4): lvm.c luaV_finishset()
-- holds the __newindex value of a weak metatable across an allocation; an
-- emergency collection (an allocation refused at the memory cap) may free it:
-- use after free. Sandboxed code can build weak metatables and can drive the
-- state to its memory cap, so it tries here at every fill level near the cap.
-- Fixed: ends with "ok" (or the sandbox's memory error, caught here).
local tries = 0
for round = 1, 24 do
  local mt = setmetatable({ __newindex = {} }, { __mode = "v" })
  local t = setmetatable({}, mt)
  local hog = {}
  local ok = pcall(function()
    for _ = 1, 1500 do -- at most ~37 MB per round unsandboxed; the cap ends it sooner
      hog[#hog + 1] = string.rep("x", 1024 * round)
      for i = 1, 10 do t[i] = 1 end
      tries = tries + 1
    end
  end)
  hog = nil
  collectgarbage()
end
print("ok")
