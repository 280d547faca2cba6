-- The first script: shows the host, its Lua and the arguments it was given.
local keyhost = require "keyhost"
print(("hello from keyhost %s (%s)"):format(keyhost.version, _VERSION))
print("arguments:", select("#", ...), ...)
