// Charging work done inside C functions to the sandbox's limits (internal to CKeyhostLua).
//
// The count hook only runs between Lua instructions, so a single call into C
// (a pattern match, a sort, string.rep of an empty string a trillion times)
// would otherwise run to its end whatever the limits say. The sandbox's
// versions of those functions report their work here, in units of roughly one
// Lua instruction, and are stopped like Lua code when a limit is passed.
#ifndef KH_METERING_H
#define KH_METERING_H

#include "CKeyhostLua.h"

/// Adds `steps` to the instructions executed; raises the budget, time-limit or
/// interrupt error when one applies. Only for lua_CFunctions (it may raise).
void kh_charge(lua_State *L, uint64_t steps);

/// After a limit is hit: the hook runs before every instruction until the next run,
/// so code that catches the error cannot go on.
void kh_hook_every_instruction(lua_State *L);
// The state's usual count hook again (or none), after an interruption's per-instruction one.
void kh_restore_hook(lua_State *L);

/// CLOCK_MONOTONIC in seconds (the clock the time limit uses).
double kh_now(void);

/// Runs the C function in upvalue `index` in the calling frame, stack untouched: a wrapper's
/// way to hand over to the original library function. Only for lua_CFunctions (it may raise).
int kh_run_upvalue(lua_State *L, int index);

/// The guard's check of utf8.codes' arguments (`len`: the index of utf8.len); raises on a bad string.
void kh_check_codes(lua_State *L, int len);

/// Installs the guards against reachable Lua 5.4.4 bugs (every profile, under lua_pcall).
void kh_install_guards(lua_State *L);

/// Installs the metered library functions in a sandbox state (under lua_pcall).
void kh_install_metering(lua_State *L);

/// Installs the deterministic sandbox's tostring and table.sort (under lua_pcall).
void kh_install_determinism(lua_State *L);
/// Replaces every light C function the deterministic sandbox can reach with a closure, whose
/// address comes from the arena (under lua_pcall, last).
void kh_hide_code_addresses(lua_State *L);

// The arena (Arena.c): a 4 GiB-aligned reservation handing out blocks by a fixed rule.
typedef struct kh_arena kh_arena;
kh_arena *kh_arena_create(size_t size);
void kh_arena_destroy(kh_arena *a);
int kh_arena_owns(const kh_arena *a, const void *p);
void *kh_arena_take(kh_arena *a, size_t n);   // NULL when the arena is full
void kh_arena_give(kh_arena *a, void *p, size_t n);

/// `name` when a chunk may keep it, else its first 40 bytes copied to `out`: in a deterministic
/// state a chunk name longer than Lua's short strings would make lua_load's allocations depend on
/// the name's address (StringCache.c).
const char *kh_short_chunkname(lua_State *L, const char *name, char out[41]);

/// Replaces string.find/match/gmatch/gsub in the string table on top of the
/// stack with metered versions.
void kh_install_metered_patterns(lua_State *L);

#endif
