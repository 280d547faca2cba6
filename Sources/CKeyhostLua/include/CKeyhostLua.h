// The only C code in keyhost that raises Lua errors.
//
// Swift frames must never be unwound by Lua's longjmp (Lua is built as C here,
// so lua_error is a longjmp). This target therefore owns every place where an
// error can be raised on behalf of Swift:
//   - kh_trampoline: every Swift function Lua can call enters through it; Swift
//     returns a status code, and only after the Swift frame is gone does the
//     trampoline call lua_error / luaL_argerror.
//   - kh_p_*: Swift needs a few Lua operations that may raise (metamethods,
//     lua_next, luaL_tolstring, opening libraries). Each runs under lua_pcall.
//   - kh_alloc: the allocator never fails while a Swift frame is the innermost
//     one (memory-cap enforcement is paused), so the 'm' class of API
//     functions cannot raise inside Swift either.
// All exported symbols carry the kh_/KH_ prefix.
#ifndef CKEYHOSTLUA_H
#define CKEYHOSTLUA_H

#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>
#include <stddef.h>
#include <stdint.h>

// What a Swift binding returns to its trampoline (>= 0: number of results).
#define KH_RAISE_VALUE (-1)    // error object on top of the stack: raise it unchanged
#define KH_RAISE_MESSAGE (-2)  // message string on top: prefix "chunk:line:" and raise
#define KH_ARGERROR (-3)       // message on top, argument index in *argn: luaL_argerror
#define KH_RAISE_INTERRUPT (-4) // Ctrl-C stopped the Swift call: raise "interrupted" as the count hook would

/// Per-state host data, passed to the allocator as its userdata.
typedef struct kh_host {
    size_t used;            // bytes currently allocated by this state
    size_t limit;           // 0 = no cap
    int enforce;            // cap enforced only while Lua code (not Swift) runs
    int cap_hit;            // set when an allocation was refused by the cap
    uint64_t budget;        // instruction budget, 0 = none
    uint64_t executed;      // instructions counted so far (all threads)
    int budget_hit;
    double deadline;        // CLOCK_MONOTONIC seconds, 0 = none
    double time_limit;      // seconds, for the message
    int time_hit;
    volatile int interrupted; // set from a SIGINT handler
    int hook_count;         // instructions between hook calls
    int interrupt_hit;
    void *owner;            // the Swift object owning the state (unretained)
    void *stack_low;        // lowest address of the running thread's C stack (found lazily each run)
    int stack_hit;          // set when the C stack guard refused (its depth depends on the process's stack size)
    struct kh_arena *arena; // deterministic states: where address-hashed objects live (Arena.c)
} kh_host;

typedef int (*kh_dispatch_fn)(lua_State *L, void *box, int *argn);
typedef void (*kh_release_fn)(void *box);

/// Installs the Swift entry points (once per process).
void kh_install(kh_dispatch_fn dispatch, kh_release_fn release);

/// Creates a state whose allocator honours host->limit. host must outlive it.
lua_State *kh_newstate(kh_host *host);
/// Creates a state for the deterministic sandbox: as kh_newstate, but tables, closures,
/// userdata and coroutines come from an arena that gives them the same hash in every
/// process (Arena.c). `limit` is the memory cap; NULL when the arena cannot be reserved.
lua_State *kh_newstate_deterministic(kh_host *host, size_t limit);
/// The address space kh_newstate_deterministic reserves for a cap of `limit` bytes.
size_t kh_arena_reservation(size_t limit);
/// Closes a state made by either function and releases what it holds. A deterministic state's
/// arena is zeroed and kept for the process's next one when it stayed small (Arena.c).
void kh_close(lua_State *L);
/// For tests: whether the arena kept for the next deterministic state is clear (every byte it
/// ever handed out zero, nothing on its free lists): 1, 0 when it is not, -1 when none is kept.
int kh_arena_kept_is_clear(void);
kh_host *kh_gethost(lua_State *L);

/// Pushes a Lua function that calls Swift's dispatch with the retained box.
/// The box is released (kh_release_fn) when the function is collected.
void kh_push_swift_function(lua_State *L, void *box);

/// Pushes a new userdata carrying box, with the metatable registered as tname
/// (created with __name, a hidden __metatable and a checked __gc if missing;
/// *created set to 1 then). Released on __gc. The registry is used raw.
void kh_push_object(lua_State *L, void *box, const char *tname, int *created);
/// Pushes the metatable registered as tname (for tables: no __gc), creating it
/// with __name and a hidden __metatable; returns 1 when it was created.
int kh_push_metatable(lua_State *L, const char *tname);
/// The box of the userdata at idx if it is one of ours with metatable tname,
/// else NULL. *closed is set when the object exists but was closed/collected.
void *kh_to_object(lua_State *L, int idx, const char *tname, int *closed);
/// Detaches the box from the userdata at idx (after __close) if it is one of
/// ours with metatable tname; returns it, or NULL.
void *kh_detach_object(lua_State *L, int idx, const char *tname);

/// For the deterministic sandbox, right after kh_newstate: fixes the string hash seed and
/// makes every table strong (weak modes ignored). Returns 0, changing nothing, when this
/// Lua's internals are not the 5.4.4 layout it knows. Raises nothing.
int kh_make_deterministic(lua_State *L);

/// Pushes the C string `s` by its length. Use it, never lua_pushstring, for any text that is not a
/// short C literal: lua_pushstring looks texts up in a cache keyed by their address, and a long
/// text's allocations then depend on where it lies (StringCache.c).
void kh_pushtext(lua_State *L, const char *s);

/// luaL_loadbufferx with the state's memory cap enforced while compiling. In a deterministic
/// state a name longer than 40 bytes is cut to its first 40 (StringCache.c).
int kh_load(lua_State *L, const char *buffer, size_t size, const char *name, const char *mode);

// The Lua function on top of the stack as a binary chunk (lua_dump, debug info kept), in a buffer
// from malloc that the caller frees; NULL when it cannot be dumped. Never raises.
char *kh_dump(lua_State *L, size_t *size);
/// Compiles `code` in a state of its own and returns its dump as kh_dump does, or NULL when it does
/// not compile: a deterministic state then loads keyhost's own chunks as bytecode every time, and
/// never runs the parser, whose objects would otherwise come from its arena on a process's first
/// state only (and shift where the program's objects land).
char *kh_compile(const char *code, size_t length, const char *name, size_t *size);

// Protected operations: each returns a lua status (LUA_OK or an error code);
// on error the error object is left on the stack instead of the result.
int kh_pcall(lua_State *L, int nargs, int nresults, int traceback);
int kh_p_openlibs(lua_State *L, int sandbox);      // sandbox: 0 full, 1 sandbox, 2 deterministic sandbox
int kh_p_gettable(lua_State *L, int idx);          // key on top -> value
int kh_p_settable(lua_State *L, int idx);          // key, value on top -> nothing
int kh_p_next(lua_State *L, int idx, int *more);   // key on top -> key, value (if *more)
int kh_p_tolstring(lua_State *L, int idx);         // pushes luaL_tolstring result

/// lua.c's message handler: honours __tostring and appends a traceback.
int kh_msghandler(lua_State *L);

/// Count hook used for instruction budgets, wall-clock limits and Ctrl-C.
void kh_enable_hook(lua_State *L, int count);
/// Async-signal-safe: asks the running code to stop with "interrupted".
void kh_interrupt(lua_State *L);
/// Routes SIGINT to kh_interrupt(L) until kh_sigint_end (the REPL's Ctrl-C).
void kh_sigint_begin(lua_State *L);
void kh_sigint_end(void);
/// Starts a new top-level run: resets counters, arms the deadline.
void kh_begin_run(lua_State *L);
/// True (and the time limit marked as hit) when the run's deadline has passed:
/// a single long call into C cannot be stopped half-way, but is reported.
int kh_overran(lua_State *L);

/// lua_State macros that Swift cannot import, as functions.
int kh_upvalueindex(int i);
int kh_registryindex(void);
void kh_pop(lua_State *L, int n);
int kh_isnoneornil(lua_State *L, int idx);
const char *kh_loaded_table_key(void);
const char *kh_preload_table_key(void);
lua_Integer kh_maxinteger(void);

/// A plain C function `add(a, b)`, the baseline the binding benchmark compares against.
void kh_push_c_add(lua_State *L);

/// The Lua release keyhost was compiled against ("Lua 5.4.4"); `LUA_RELEASE` is a macro Swift cannot import.
const char *kh_lua_release(void);

#endif
