/// Lua code run when a state is set up. Kept in Lua because it is mostly table plumbing.
enum Prelude {
    /// Full profile: a `require` searcher over keyhost's search roots, inserted after
    /// package.preload (native modules) and before package.path.
    static let full = #"""
    local roots = {}
    local io_open, load, loadfile, error, ipairs, select, type = io.open, load, loadfile, error, ipairs, select, type
    local format, gsub, concat, insert = string.format, string.gsub, table.concat, table.insert

    local function read(path)
      local file = io_open(path, "rb")
      if not file then return nil end
      local text = file:read("a")
      file:close()
      return text
    end

    local function search(name)
      local relative = gsub(name, "%.", "/")
      local tried = {}
      for _, root in ipairs(roots) do
        for _, shape in ipairs({ "%s.lua", "%s/init.lua" }) do
          local inside = format(shape, relative)
          local path = root.dir .. "/" .. inside
          local source = read(path)
          if source then
            local chunkname = root.prefix and ("@" .. root.prefix .. "/" .. inside) or ("@" .. path)
            local loader, message = load(source, chunkname, "t")
            if not loader then
              error(format("error loading module '%s' from file '%s':\n\t%s", name, path, message), 0)
            end
            return loader, path
          end
          tried[#tried + 1] = "\n\tno file '" .. path .. "'"
        end
      end
      return (gsub(concat(tried), "^\n\t", ""))
    end

    insert(package.searchers, 2, search)

    -- Lua does not verify bytecode, and a corrupted or hostile binary chunk can crash the
    -- process (a 5.4.4 bug reaches memory with one), so scripts load text chunks only.
    local binary_refused = "binary chunks are not allowed: Lua does not verify bytecode, "
      .. "and a corrupted or hostile one can crash keyhost; load the source instead"
    -- Like load itself, these answer nil and a message instead of raising.
    _G.load = function(...)
      local chunk, chunkname, mode, env = ...
      if (mode ~= nil and mode ~= "t") or (type(chunk) == "string" and chunk:byte(1) == 27) then
        return nil, binary_refused
      end
      if select("#", ...) >= 4 then return load(chunk, chunkname, "t", env) end
      return load(chunk, chunkname, "t")
    end
    _G.loadfile = function(...)
      local filename, mode, env = ...
      if mode ~= nil and mode ~= "t" then return nil, binary_refused end
      if select("#", ...) >= 3 then return loadfile(filename, "t", env) end
      return loadfile(filename, "t")
    end
    _G.dofile = function(filename)
      local chunk, message = loadfile(filename, "t")
      if not chunk then error(message, 2) end
      return chunk()
    end
    -- The standard searcher over package.path, in text mode.
    local searchpath = package.searchpath
    package.searchers[3] = function(name)
      local path, tried = searchpath(name, package.path)
      if not path then return tried end
      local loader, message = loadfile(path, "t")
      if not loader then
        error(format("error loading module '%s' from file '%s':\n\t%s", name, path, message), 0)
      end
      return loader, path
    end

    -- add_root(dir, prefix): the host's helper (returned alone: see LuaState.setUp).
    return function(dir, prefix) roots[#roots + 1] = { dir = dir, prefix = prefix } end
    """#

    /// Sandbox profile: returns a function that makes a fresh environment for each chunk,
    /// and the table of host exports that every environment gets.
    static let sandbox = #"""
    local forbidden = {
      io = true, os = true, debug = true, package = true, require = true,
      dofile = true, loadfile = true,
    }
    local base = {}
    for _, name in ipairs({ "assert", "error", "getmetatable", "ipairs", "next", "pairs", "pcall",
                            "print", "rawequal", "rawget", "rawlen", "rawset", "select", "setmetatable",
                            "tonumber", "tostring", "type", "xpcall", "_VERSION" }) do
      base[name] = _G[name]
    end
    string.dump = nil -- nothing may produce binary chunks either
    local libraries = { string = string, table = table, math = math, utf8 = utf8, coroutine = coroutine }
    local real_load, collectgarbage, setmetatable, error, tostring, type, next, pairs, pcall, rawget =
      load, collectgarbage, setmetatable, error, tostring, type, next, pairs, pcall, rawget
    local pack, unpack = table.pack, table.unpack
    local charge = __keyhost_charge -- counts a chunk's size against the budget before it compiles
    __keyhost_charge = nil
    for name in pairs(forbidden) do _G[name] = nil end
    _G.load, _G.collectgarbage = nil, nil

    local function readonly(name, library)
      return setmetatable({}, {
        __index = library,
        __newindex = function(_, key)
          error("sandbox: '" .. name .. "' is read-only (cannot set '" .. tostring(key) .. "')", 2)
        end,
        -- The iterator closes over the library instead of returning it: pairs() hands its
        -- second value to the caller, and the real table must never reach sandboxed code.
        __pairs = function(proxy)
          return function(_, key) return next(library, key) end, proxy, nil
        end,
        __metatable = false,
      })
    end

    -- What the host adds with setGlobal, copied into every environment; the metatable
    -- makes the host hold it by reference instead of copying it.
    local exports = setmetatable({}, { __metatable = false })
    local function make_env()
      local env = {}
      for name, value in pairs(base) do env[name] = value end
      for name, value in pairs(exports) do env[name] = value end
      for name, library in pairs(libraries) do env[name] = readonly(name, library) end
      env._G = env
      -- Lua runs a message handler, and every __gc finalizer, with hooks off, so code
      -- there would escape the instruction budget and the time limit. The handler
      -- therefore runs after the unwinding, as an ordinary call, and finalizers are refused.
      env.xpcall = function(f, handler, ...)
        local results = pack(pcall(f, ...))
        if results[1] then return unpack(results, 1, results.n) end
        local _, value = pcall(handler, results[2])
        return false, value
      end
      env.setmetatable = function(t, mt)
        if type(mt) == "table" and rawget(mt, "__gc") ~= nil then
          error("sandbox: __gc metamethods are not allowed", 2)
        end
        return setmetatable(t, mt)
      end
      env.load = function(chunk, chunkname, mode, chunkenv)
        if mode ~= nil and mode ~= "t" then
          error("sandbox: binary chunks are not allowed (load mode must be \"t\")", 2)
        end
        if type(chunk) == "string" and chunk:byte(1) == 27 then
          error("sandbox: binary chunks are not allowed", 2)
        end
        if type(chunk) == "string" then charge(#chunk) end
        return real_load(chunk, chunkname, "t", chunkenv == nil and env or chunkenv)
      end
      env.collectgarbage = function(option, ...)
        if option == nil or option == "count" or option == "collect" or option == "step" then
          return collectgarbage(option, ...)
        end
        error("sandbox: collectgarbage(\"" .. tostring(option) .. "\") is not allowed", 2)
      end
      return setmetatable(env, {
        __index = function(_, key)
          if forbidden[key] then
            error("sandbox: '" .. tostring(key) .. "' is not available in the sandbox", 2)
          end
        end,
        __metatable = false,
      })
    end
    return make_env, exports
    """#

    /// Deterministic sandbox: run before `sandbox`, it replaces what would let a run depend on
    /// anything but its inputs. `next` order follows where keys land in a table, which depends on
    /// addresses and on the build; addresses show through `%p`; `print`, the random generator and
    /// memory figures are outputs or inputs nobody records. `tostring` and `table.sort` are already
    /// the deterministic ones from C (Determinism.c), as are the hash seed and weak tables.
    /// docs/lua-api.md lists every source of non-determinism and what closes it.
    static let deterministic = #"""
    local type, rawget, rawequal, tostring, error, select, raw_next, pairs_ =
      type, rawget, rawequal, tostring, error, select, next, pairs
    local sort, format, find = table.sort, string.format, string.find

    -- A total order on the keys that have one: numbers, then strings (byte order, the C
    -- locale), then false before true. Other keys have only an address, so no order.
    local rank = { number = 1, string = 2, boolean = 3 }
    local function less(a, b)
      local ra, rb = rank[type(a)], rank[type(b)]
      if ra ~= rb then return ra < rb end
      if ra == 3 then return (not a) and b end
      return a < b
    end
    local function check_key(k)
      if not rank[type(k)] then
        error("sandbox: a table with a key of type " .. type(k) .. " has no fixed iteration order in a token program; "
          .. "keep such values in an array instead", 3)
      end
    end

    -- next(t, k): the smallest key above k, found by a scan (O(n) a call; pairs is faster).
    local function ordered_next(t, k)
      local best, found = nil, false
      local key = raw_next(t)
      while key ~= nil do
        check_key(key)
        if (k == nil or less(k, key)) and (not found or less(key, best)) then best, found = key, true end
        key = raw_next(t, key)
      end
      if k ~= nil and rawget(t, k) == nil then
        -- Lua's own next raises for a key that is not in the table; so does this one.
        local present = false
        key = raw_next(t)
        while key ~= nil do if rawequal(key, k) then present = true break end key = raw_next(t, key) end
        if not present then error("invalid key to 'next'", 2) end
      end
      if not found then return nil end
      return best, rawget(t, best)
    end

    -- pairs(t): __pairs as usual, otherwise the keys sorted once, then visited in order.
    local function ordered_pairs(t)
      -- Lua's pairs sees a __pairs even behind a hidden metatable (__metatable = false); when
      -- there is none it hands back next itself, and the table is visited in key order instead.
      local f, s, c = pairs_(t)
      if f ~= raw_next then return f, s, c end
      local keys, n = {}, 0
      local key = raw_next(t)
      while key ~= nil do
        check_key(key)
        n = n + 1
        keys[n] = key
        key = raw_next(t, key)
      end
      sort(keys, less)
      local i = 0
      return function()
        i = i + 1
        local k = keys[i]
        if k ~= nil then return k, rawget(t, k) end
      end, t, nil
    end

    -- Lua's tostring and format show an address for these; tostring here is the C one that does not.
    local plain_tostring = tostring

    local function plain_format(fmt, ...)
      if type(fmt) == "string" and find(fmt, "%%[-+ #0]*%d*%.?%d*p") then
        error("sandbox: string.format's %p shows addresses, which differ between runs of a token program", 2)
      end
      local n = select("#", ...)
      if n == 0 then return format(fmt) end
      local args = { ... }
      for i = 1, n do
        local kind = type(args[i])
        if kind == "table" or kind == "userdata" or kind == "function" or kind == "thread" then
          args[i] = plain_tostring(args[i])
        end
      end
      return format(fmt, table.unpack(args, 1, n))
    end

    -- A chunk's name goes through Lua's string cache, which is keyed by the name's address: a name
    -- longer than a short string's 40 bytes is allocated again or not depending on where it lies,
    -- which would move the collector and the arena (Sources/CKeyhostLua/StringCache.c). Lua names
    -- a chunk by its text when no name is given. A longer name is cut to 40 bytes, shown the way
    -- Lua shows a long one: "=" by its start, "@" (a file) by its end, a text by its first line.
    local real_load, sub, byte = load, string.sub, string.byte
    local function short_name(name)
      local first = byte(name, 1)
      if first == 61 then return sub(name, 1, 40) end
      if first == 64 then return "@..." .. sub(name, -36) end
      local line = sub(name, 1, (find(name, "\n", 1, true) or 0) - 1)
      return "=[string \"" .. sub(line, 1, 25) .. "...\"]"
    end
    _G.load = function(chunk, chunkname, ...)
      local name = chunkname
      if name == nil and type(chunk) == "string" then name = chunk end
      if type(name) == "string" and #name > 40 then chunkname = short_name(name) end
      return real_load(chunk, chunkname, ...)
    end

    _G.next, _G.pairs, _G.print = ordered_next, ordered_pairs, nil
    string.format = plain_format
    math.random, math.randomseed = nil, nil
    -- collectgarbage("count") reports the allocator's figures: not an input of the run.
    _G.collectgarbage = function() return 0 end
    """#
}

