#include "CKeyhostLua.h"
#include "Metering.h"
#include "CKeyhostProcess.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static kh_dispatch_fn kh_dispatch = NULL;
static kh_release_fn kh_release = NULL;

void kh_install(kh_dispatch_fn dispatch, kh_release_fn release) {
    kh_dispatch = dispatch;
    kh_release = release;
}

// ---------------------------------------------------------------- allocator

// The cap is enforced only while Lua code is the innermost caller
// (host->enforce). While a Swift frame is active the allocator never refuses,
// so Lua API calls tagged 'm' cannot raise through Swift; the overshoot is
// bounded by what one binding allocates and is caught at the next allocation
// made by Lua code. A real malloc failure in that window aborts, which is what
// Swift itself does when it runs out of memory.
//
// In the deterministic sandbox (host->arena set) the objects Lua hashes by
// address (Lua passes their type as osize when ptr is NULL) come from the
// state's arena (Arena.c). When the arena is full the allocation fails as the
// cap does; while a Swift frame runs it may not fail, so the object comes from
// malloc and the run is failed by the cap flag afterwards.
static void *kh_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
    kh_host *h = (kh_host *)ud;
    int tag = 0;
    if (ptr == NULL) {
        tag = (int)osize;
        osize = 0;
    }
    int owned = ptr != NULL && h->arena != NULL && kh_arena_owns(h->arena, ptr);
    if (nsize == 0) {
        if (owned) kh_arena_give(h->arena, ptr, osize);
        else free(ptr);
        h->used -= osize;
        return NULL;
    }
    if (h->limit != 0 && h->enforce && nsize > osize && h->used - osize + nsize > h->limit) {
        h->cap_hit = 1;
        return NULL;
    }
    void *p;
    if (h->arena != NULL && (owned || (ptr == NULL && tag >= LUA_TTABLE && tag <= LUA_TTHREAD))) {
        p = kh_arena_take(h->arena, nsize);
        if (p == NULL) {
            h->cap_hit = 1;
            if (h->enforce) return NULL;
            p = malloc(nsize);
        }
        // Lua never resizes an object; kept correct for any caller all the same.
        if (p != NULL && owned) {
            memcpy(p, ptr, osize < nsize ? osize : nsize);
            kh_arena_give(h->arena, ptr, osize);
        }
    } else {
        p = realloc(ptr, nsize);
    }
    if (p == NULL) {
        if (!h->enforce) {
            fputs("keyhost: out of memory\n", stderr);
            abort();
        }
        return NULL;
    }
    h->used = h->used - osize + nsize;
    return p;
}

static int kh_panic(lua_State *L) {
    const char *msg = lua_tostring(L, -1);
    fprintf(stderr, "keyhost: unprotected Lua error (this is a bug in keyhost): %s\n", msg ? msg : "?");
    abort();
}

lua_State *kh_newstate(kh_host *host) {
    memset(host, 0, sizeof *host);
    lua_State *L = lua_newstate(kh_alloc, host);
    if (L != NULL) {
        lua_atpanic(L, kh_panic);
        lua_setwarnf(L, NULL, NULL); // warnings stay off unless a script turns them on
    }
    return L;
}

lua_State *kh_newstate_deterministic(kh_host *host, size_t limit) {
    memset(host, 0, sizeof *host);
    host->arena = kh_arena_create(kh_arena_reservation(limit));
    if (host->arena == NULL) return NULL;
    lua_State *L = lua_newstate(kh_alloc, host);
    if (L == NULL) {
        kh_arena_destroy(host->arena);
        host->arena = NULL;
        return NULL;
    }
    lua_atpanic(L, kh_panic);
    lua_setwarnf(L, NULL, NULL);
    return L;
}

void kh_close(lua_State *L) {
    kh_host *h = kh_gethost(L);
    lua_close(L);
    if (h != NULL && h->arena != NULL) {
        kh_arena_destroy(h->arena);
        h->arena = NULL;
    }
}

kh_host *kh_gethost(lua_State *L) {
    void *ud = NULL;
    lua_getallocf(L, &ud);
    return (kh_host *)ud;
}

// ---------------------------------------------------------------- metatables

// luaL_newmetatable and luaL_testudata read the registry with lua_getfield,
// which runs the registry's own metamethods if a script gave it some
// (debug.getregistry()); an error there would longjmp over the Swift frame
// that called us. Everything below touches the registry with raw operations.

// Pushes registry[tname] (raw); returns its type.
static int kh_rawregistry(lua_State *L, const char *tname) {
    kh_pushtext(L, tname);
    return lua_rawget(L, LUA_REGISTRYINDEX);
}

// Pushes the metatable registered as tname, creating it if missing: __name, a
// hidden __metatable (scripts cannot reach or replace our metamethods), and a
// __gc (when given) that checks its argument: upvalue 1 is the metatable
// itself. Returns 1 when it was created.
static int kh_metatable(lua_State *L, const char *tname, lua_CFunction gc) {
    if (kh_rawregistry(L, tname) != LUA_TNIL) return 0;
    lua_pop(L, 1);
    lua_createtable(L, 0, 6);
    lua_pushliteral(L, "__name");
    kh_pushtext(L, tname);
    lua_rawset(L, -3);
    lua_pushliteral(L, "__metatable");
    lua_pushboolean(L, 0);
    lua_rawset(L, -3);
    if (gc != NULL) {
        // Lua marks an object for finalization only if __gc is present when the
        // metatable is set, so it goes in before the first object gets it.
        lua_pushliteral(L, "__gc");
        lua_pushvalue(L, -2);
        lua_pushcclosure(L, gc, 1);
        lua_rawset(L, -3);
    }
    kh_pushtext(L, tname);
    lua_pushvalue(L, -2);
    lua_rawset(L, LUA_REGISTRYINDEX);
    return 1;
}

typedef struct { void *box; } kh_boxholder;

// The box of the userdata at idx when it is one of ours: a full userdata of
// the right size whose metatable is the one in upvalue 1 of the running
// finalizer (or `mt` on the stack). Anything else (a FILE* handle, a table,
// another type's object) yields NULL: finalizers and methods can be called by
// hand with any argument.
static kh_boxholder *kh_checked_holder(lua_State *L, int idx, int mt) {
    if (lua_type(L, idx) != LUA_TUSERDATA || lua_rawlen(L, idx) != sizeof(kh_boxholder)) return NULL;
    if (!lua_getmetatable(L, idx)) return NULL;
    int same = lua_rawequal(L, -1, mt);
    lua_pop(L, 1);
    return same ? (kh_boxholder *)lua_touserdata(L, idx) : NULL;
}

static int kh_box_gc(lua_State *L) {
    kh_boxholder *b = kh_checked_holder(L, 1, lua_upvalueindex(1));
    if (b != NULL && b->box != NULL && kh_release != NULL) {
        void *box = b->box;
        b->box = NULL;
        kh_release(box);
    }
    return 0;
}

// ---------------------------------------------------------------- trampoline

static int kh_trampoline(lua_State *L) {
    kh_boxholder *b = (kh_boxholder *)lua_touserdata(L, lua_upvalueindex(1));
    kh_host *h = kh_gethost(L);
    int argn = 0;
    if (b == NULL || b->box == NULL) return luaL_error(L, "keyhost function called after it was released");
    // Lua guarantees LUA_MINSTACK (20) free slots to a C function; Swift code
    // that pushes more calls lua_checkstack itself (LuaStack.ensure).
    int saved = h->enforce;
    h->enforce = 0;
    int n = kh_dispatch(L, b->box, &argn);
    h->enforce = saved;
    // The Swift frame has returned: raising is safe from here on.
    switch (n) {
    case KH_RAISE_VALUE:
        return lua_error(L);
    case KH_RAISE_MESSAGE:
        luaL_where(L, 1);
        lua_insert(L, -2);
        lua_concat(L, 2);
        return lua_error(L);
    case KH_ARGERROR:
        return luaL_argerror(L, argn, lua_tostring(L, -1));
    case KH_RAISE_INTERRUPT:
        // Consumed here: the hook must not raise it a second time in the code that handles this error.
        h->interrupted = 0;
        h->interrupt_hit = 1;
        khp_cancel_clear();
        kh_restore_hook(L);
        return luaL_error(L, "interrupted");
    default:
        return n;
    }
}

static const char *const KH_BOXHOLDER = "keyhost.function";

void kh_push_swift_function(lua_State *L, void *box) {
    kh_boxholder *b = (kh_boxholder *)lua_newuserdatauv(L, sizeof *b, 0);
    b->box = box;
    kh_metatable(L, KH_BOXHOLDER, kh_box_gc);
    lua_setmetatable(L, -2);
    lua_pushcclosure(L, kh_trampoline, 1);
}

// ---------------------------------------------------------------- objects

void kh_push_object(lua_State *L, void *box, const char *tname, int *created) {
    kh_boxholder *o = (kh_boxholder *)lua_newuserdatauv(L, sizeof *o, 1);
    o->box = box;
    *created = kh_metatable(L, tname, kh_box_gc);
    lua_setmetatable(L, -2);
}

int kh_push_metatable(lua_State *L, const char *tname) {
    return kh_metatable(L, tname, NULL);
}

void *kh_to_object(lua_State *L, int idx, const char *tname, int *closed) {
    *closed = 0;
    idx = lua_absindex(L, idx);
    if (kh_rawregistry(L, tname) != LUA_TTABLE) {
        lua_pop(L, 1);
        return NULL;
    }
    kh_boxholder *o = kh_checked_holder(L, idx, lua_gettop(L));
    lua_pop(L, 1);
    if (o == NULL) return NULL;
    if (o->box == NULL) *closed = 1;
    return o->box;
}

void *kh_detach_object(lua_State *L, int idx, const char *tname) {
    int closed = 0;
    void *box = kh_to_object(L, idx, tname, &closed);
    if (box == NULL) return NULL;
    ((kh_boxholder *)lua_touserdata(L, idx))->box = NULL;
    return box;
}

// ---------------------------------------------------------------- protection

int kh_msghandler(lua_State *L) {
    // With the Lua stack nearly full (an error from a stack overflow), a
    // traceback could itself fail: hand the error back as it is.
    if (!lua_checkstack(L, LUA_MINSTACK)) return 1;
    const char *msg = lua_tostring(L, 1);
    if (msg == NULL) {
        if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING)
            return 1; // an error object that describes itself: no traceback added
        msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    }
    luaL_traceback(L, L, msg, 1);
    return 1;
}

int kh_pcall(lua_State *L, int nargs, int nresults, int traceback) {
    kh_host *h = kh_gethost(L);
    int base = 0;
    if (traceback) {
        base = lua_gettop(L) - nargs;
        lua_pushcfunction(L, kh_msghandler);
        lua_insert(L, base);
    }
    int saved = h->enforce;
    h->enforce = 1;
    int status = lua_pcall(L, nargs, nresults, base);
    h->enforce = saved;
    if (traceback) lua_remove(L, base);
    return status;
}

// Lua's os.exit would skip __close and __gc; closing the state first runs them.
static int kh_os_exit(lua_State *L) {
    int status;
    if (lua_isboolean(L, 1))
        status = lua_toboolean(L, 1) ? EXIT_SUCCESS : EXIT_FAILURE;
    else
        status = (int)luaL_optinteger(L, 1, EXIT_SUCCESS);
    fflush(stdout);
    lua_close(L);
    fflush(NULL);
    exit(status);
    return 0;
}

static int p_openlibs(lua_State *L) {
    int sandbox = (int)lua_tointeger(L, 1);
    if (sandbox) {
        // The string metatable is shared by every string: sandboxed code may
        // read strings' methods but must not replace them for the host.
        luaL_requiref(L, LUA_STRLIBNAME, luaopen_string, 1);
        lua_pop(L, 1);
        lua_pushliteral(L, "");
        lua_getmetatable(L, -1);
        lua_pushliteral(L, "__metatable");
        lua_pushboolean(L, 0);
        lua_rawset(L, -3);
        lua_pop(L, 2);
    }
    if (!sandbox) {
        luaL_openlibs(L);
        kh_install_guards(L);
        lua_getglobal(L, "os");
        lua_pushcfunction(L, kh_os_exit);
        lua_setfield(L, -2, "exit");
        lua_pop(L, 1);
        return 0;
    }
    static const luaL_Reg libs[] = {
        {LUA_GNAME, luaopen_base},
        {LUA_STRLIBNAME, luaopen_string},
        {LUA_TABLIBNAME, luaopen_table},
        {LUA_MATHLIBNAME, luaopen_math},
        {LUA_UTF8LIBNAME, luaopen_utf8},
        {LUA_COLIBNAME, luaopen_coroutine},
        {NULL, NULL}};
    for (const luaL_Reg *lib = libs; lib->func; lib++) {
        luaL_requiref(L, lib->name, lib->func, 1);
        lua_pop(L, 1);
    }
    kh_install_guards(L);
    kh_install_metering(L);
    if (sandbox == 2) {
        kh_install_determinism(L);
        kh_hide_code_addresses(L);
    }
    return 0;
}

int kh_p_openlibs(lua_State *L, int sandbox) {
    lua_pushcfunction(L, p_openlibs);
    lua_pushinteger(L, sandbox);
    return kh_pcall(L, 1, 0, 1);
}

int kh_load(lua_State *L, const char *buffer, size_t size, const char *name, const char *mode) {
    kh_host *h = kh_gethost(L);
    int saved = h->enforce;
    h->cap_hit = 0;
    // lua_load catches its own errors (memory included), so the cap can be
    // enforced while the source is parsed: compiling is charged like running.
    h->enforce = 1;
    char cut[41];
    int status = luaL_loadbufferx(L, buffer, size, kh_short_chunkname(L, name, cut), mode);
    h->enforce = saved;
    return status;
}

typedef struct { char *data; size_t size, capacity; int failed; } kh_dump_buffer;

static int kh_dump_writer(lua_State *L, const void *p, size_t n, void *ud) {
    (void)L;
    kh_dump_buffer *b = ud;
    if (b->size + n > b->capacity) {
        size_t capacity = (b->capacity ? b->capacity * 2 : 4096);
        while (capacity < b->size + n) capacity *= 2;
        char *grown = realloc(b->data, capacity);
        if (!grown) { b->failed = 1; return 1; }
        b->data = grown;
        b->capacity = capacity;
    }
    memcpy(b->data + b->size, p, n);
    b->size += n;
    return 0;
}

char *kh_dump(lua_State *L, size_t *size) {
    kh_dump_buffer b = { NULL, 0, 0, 0 };
    if (!lua_isfunction(L, -1) || lua_dump(L, kh_dump_writer, &b, 0) != 0 || b.failed) {
        free(b.data);
        return NULL;
    }
    *size = b.size;
    return b.data;
}

char *kh_compile(const char *code, size_t length, const char *name, size_t *size) {
    lua_State *L = luaL_newstate();
    if (L == NULL) return NULL;
    char *out = NULL;
    if (luaL_loadbufferx(L, code, length, name, "t") == LUA_OK) out = kh_dump(L, size);
    lua_close(L);
    return out;
}

static int p_gettable(lua_State *L) {
    lua_gettable(L, 1);
    return 1;
}

int kh_p_gettable(lua_State *L, int idx) {
    idx = lua_absindex(L, idx);
    lua_pushcfunction(L, p_gettable);
    lua_pushvalue(L, idx);
    lua_rotate(L, -3, -1); // key f t -> f t key
    return kh_pcall(L, 2, 1, 0);
}

static int p_settable(lua_State *L) {
    lua_settable(L, 1);
    return 0;
}

int kh_p_settable(lua_State *L, int idx) {
    idx = lua_absindex(L, idx);
    lua_pushcfunction(L, p_settable);
    lua_pushvalue(L, idx);
    lua_rotate(L, -4, 2); // key value f t -> f t key value
    return kh_pcall(L, 3, 0, 0);
}

static int p_next(lua_State *L) {
    if (lua_next(L, 1)) return 2;
    return 0;
}

int kh_p_next(lua_State *L, int idx, int *more) {
    idx = lua_absindex(L, idx);
    int top = lua_gettop(L) - 1; // below the key
    lua_pushcfunction(L, p_next);
    lua_pushvalue(L, idx);
    lua_rotate(L, -3, -1); // key f t -> f t key
    int status = kh_pcall(L, 2, LUA_MULTRET, 0);
    *more = (status == LUA_OK && lua_gettop(L) - top == 2);
    return status;
}

static int p_tolstring(lua_State *L) {
    luaL_tolstring(L, 1, NULL);
    return 1;
}

int kh_p_tolstring(lua_State *L, int idx) {
    idx = lua_absindex(L, idx);
    lua_pushcfunction(L, p_tolstring);
    lua_pushvalue(L, idx);
    return kh_pcall(L, 1, 1, 0);
}

// ---------------------------------------------------------------- hooks

double kh_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

// Once a limit is hit the hook fires on every instruction, so code that keeps
// catching the error with pcall still cannot run on.
static void kh_hook(lua_State *L, lua_Debug *ar) {
    (void)ar;
    kh_charge(L, (uint64_t)kh_gethost(L)->hook_count);
}

void kh_hook_every_instruction(lua_State *L) {
    lua_sethook(L, kh_hook, LUA_MASKCOUNT, 1);
}

void kh_enable_hook(lua_State *L, int count) {
    kh_host *h = kh_gethost(L);
    h->hook_count = count > 0 ? count : 1000;
    lua_sethook(L, kh_hook, LUA_MASKCOUNT, h->hook_count);
}

// Back to the state's usual hook after an interruption's per-instruction one (none for `keyhost run`).
void kh_restore_hook(lua_State *L) {
    kh_host *h = kh_gethost(L);
    if (h->hook_count > 0)
        lua_sethook(L, kh_hook, LUA_MASKCOUNT, h->hook_count);
    else
        lua_sethook(L, NULL, 0, 0);
}

void kh_interrupt(lua_State *L) {
    kh_host *h = kh_gethost(L);
    h->interrupted = 1;
    // lua_sethook is async-signal-safe (lua.c relies on it the same way).
    lua_sethook(L, kh_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKLINE | LUA_MASKCOUNT, 1);
}

void kh_begin_run(lua_State *L) {
    kh_host *h = kh_gethost(L);
    h->executed = 0;
    h->budget_hit = 0;
    h->time_hit = 0;
    h->cap_hit = 0;
    h->stack_hit = 0;
    h->interrupted = 0;
    h->interrupt_hit = 0;
    h->deadline = h->time_limit > 0 ? kh_now() + h->time_limit : 0;
    h->stack_low = NULL; // this run may be on another thread
    if (h->hook_count > 0)
        lua_sethook(L, kh_hook, LUA_MASKCOUNT, h->hook_count);
    else
        lua_sethook(L, NULL, 0, 0);
}

// ---------------------------------------------------------------- SIGINT

// Ctrl-C while Lua runs: keyhost's one SIGINT handler (CKeyhostProcess's Interrupt.c) sets the cancel
// request Swift calls check and, through this notifier, the hook that raises "interrupted" in the code.
static void kh_sigint_notify(void *context) { kh_interrupt((lua_State *)context); }

// No restart: a script blocked in io.read gets EINTR, returns to Lua, and the hook raises there.
void kh_sigint_begin(lua_State *L) { khp_interrupt_begin(KHP_INTERRUPT_SECOND_EXITS, kh_sigint_notify, L); }

void kh_sigint_end(void) { khp_interrupt_end(); }

// ---------------------------------------------------------------- macros

int kh_upvalueindex(int i) { return lua_upvalueindex(i); }
int kh_registryindex(void) { return LUA_REGISTRYINDEX; }
void kh_pop(lua_State *L, int n) { lua_pop(L, n); }
int kh_isnoneornil(lua_State *L, int idx) { return lua_isnoneornil(L, idx); }
const char *kh_loaded_table_key(void) { return LUA_LOADED_TABLE; }
const char *kh_preload_table_key(void) { return LUA_PRELOAD_TABLE; }
lua_Integer kh_maxinteger(void) { return LUA_MAXINTEGER; }

// ---------------------------------------------------------------- benchmark

static int kh_c_add(lua_State *L) {
    lua_pushinteger(L, luaL_checkinteger(L, 1) + luaL_checkinteger(L, 2));
    return 1;
}

void kh_push_c_add(lua_State *L) { lua_pushcfunction(L, kh_c_add); }

const char *kh_lua_release(void) { return LUA_RELEASE; }
