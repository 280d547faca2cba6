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

/// Installs the guards against reachable Lua 5.4.4 bugs (every profile, under lua_pcall).
void kh_install_guards(lua_State *L);

/// Installs the metered library functions in a sandbox state (under lua_pcall).
void kh_install_metering(lua_State *L);

/// Installs the deterministic sandbox's tostring and table.sort (under lua_pcall).
void kh_install_determinism(lua_State *L);

/// Replaces string.find/match/gmatch/gsub in the string table on top of the
/// stack with metered versions.
void kh_install_metered_patterns(lua_State *L);

#endif
