/// The Lua side of the capability object a token program receives as `...`.
enum Capability {
    static let source = #"""
    local fields, args, now, emit, hashes, verifiers, hex_source, json_source, holder, hops, transfer_to, transfer = ...
    local setmetatable, error, tostring, load, rawget = setmetatable, error, tostring, load, rawget

    -- Read-only views: the program may look, not rewrite what it was given.
    local function frozen(name, t)
      return setmetatable({}, {
        __index = t,
        __newindex = function(_, key) error("token: '" .. name .. "' is read-only (cannot set '" .. tostring(key) .. "')", 2) end,
        __pairs = function() return pairs(t) end,
        __len = function() return #t end,
        __metatable = false,
      })
    end

    -- hex and json are keyhost's stdlib modules, loaded here from source; they look for
    -- `debug` to bypass __metatable, which the sandbox does not have.
    local function module(source, name)
      if #source == 0 then return nil end
      local env = setmetatable({}, { __index = function(_, key) if key ~= "debug" then return _ENV[key] end end })
      return assert(load(source, "@stdlib/keyhost/" .. name .. ".lua", "t", env))()
    end

    local cap = {
      token = frozen("token", fields),
      args = frozen("args", args),
      now = now,
      emit = emit,
      hash = frozen("hash", hashes),
      verify = frozen("verify", verifiers),
      -- Who holds the token now (the last transfer's key, or token.holder) and after how many transfers.
      holder = holder,
      hops = hops,
      -- For a payment or deposit: the key asked for, and the call that hands the token to it.
      transfer_to = transfer_to,
      transfer = transfer,
    }
    -- hex and json are compiled on first use (json is 700 lines): most programs need neither.
    local lazy = { hex = hex_source, json = json_source }
    return setmetatable({}, {
      __index = function(_, key)
        local value = cap[key]
        if value == nil and lazy[key] then
          value = module(lazy[key], key)
          cap[key], lazy[key] = value, nil
        end
        return value
      end,
      __newindex = function(_, key) error("token: 'token capability' is read-only (cannot set '" .. tostring(key) .. "')", 2) end,
      __pairs = function() return pairs(cap) end,
      __metatable = false,
    })
    """#
}
