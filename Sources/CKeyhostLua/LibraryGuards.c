// Guards around Lua 5.4.4 bugs that scripts can reach, in every profile.
// docs/sandbox-lua-bugs.md lists each bug and why this is the host's fix.
#define _GNU_SOURCE // pthread_getattr_np
#include "Metering.h"

#include <pthread.h>

// ---------------------------------------------------------------- coroutines

// Lua 5.4.4's lua_resetthread (coroutine.close, and coroutine.wrap after an
// error) runs __close handlers with the coroutine's own count of nested C
// calls, not the closer's, so handlers that close other coroutines nest
// without limit until the C stack overflows (fixed upstream in 5.4.5; Debian's
// 5.4.4 has it). Those two entry points refuse to go on when less than this
// much of the thread's C stack is left: a measure of the real resource, so it
// also holds for any other path into them.
#define KH_STACK_RESERVE (256 * 1024)

static void check_c_stack(lua_State *L) {
    kh_host *h = kh_gethost(L);
    char here;
    if (h->stack_low == NULL) {
        pthread_attr_t attr;
        void *low;
        size_t size;
        if (pthread_getattr_np(pthread_self(), &attr) == 0) {
            if (pthread_attr_getstack(&attr, &low, &size) == 0) h->stack_low = low;
            pthread_attr_destroy(&attr);
        }
        if (h->stack_low == NULL) return;
    }
    if ((uintptr_t)&here < (uintptr_t)h->stack_low + KH_STACK_RESERVE) {
        h->stack_hit = 1;
        luaL_error(L, "C stack overflow (coroutines closed inside one another too deeply)");
    }
}

// Runs the C function kept in upvalue `index` in this call frame: the stack
// is left untouched, so its results and error positions are Lua's own.
int kh_run_upvalue(lua_State *L, int index) {
    lua_CFunction original = lua_tocfunction(L, lua_upvalueindex(index));
    if (original == NULL) return luaL_error(L, "keyhost: guarded library function lost its original");
    return original(L);
}

static int guarded_close(lua_State *L) {
    check_c_stack(L);
    return kh_run_upvalue(L, 1);
}

// The function coroutine.wrap returns: upvalue 1 is the coroutine, as the
// original expects, and upvalue 2 the original closure.
static int guarded_resume(lua_State *L) {
    check_c_stack(L);
    return kh_run_upvalue(L, 2);
}

static int guarded_wrap(lua_State *L) {
    lua_CFunction wrap = lua_tocfunction(L, lua_upvalueindex(1));
    if (wrap == NULL || wrap(L) != 1 || lua_getupvalue(L, -1, 1) == NULL)
        return luaL_error(L, "keyhost: coroutine.wrap did not return a wrapped coroutine");
    lua_pushvalue(L, -2); // the thread, the original closure
    lua_pushcclosure(L, guarded_resume, 2);
    return 1;
}

// ---------------------------------------------------------------- utf8.codes

// 5.4.4's utf8.codes skips continuation bytes after a character without
// checking them, so "in\x80valid" iterates without an error (fixed in 5.4.5).
// utf8.len decodes strictly; a string it refuses is refused here before the
// first iteration.
void kh_check_codes(lua_State *L, int len) {
    luaL_checkstring(L, 1);
    int lax = lua_toboolean(L, 2);
    lua_pushvalue(L, len);
    lua_pushvalue(L, 1);
    lua_pushinteger(L, 1);
    lua_pushinteger(L, -1);
    lua_pushboolean(L, lax);
    lua_call(L, 4, 1);
    int valid = !lua_isnil(L, -1);
    lua_pop(L, 1);
    if (!valid) luaL_error(L, "invalid UTF-8 code");
}

// Upvalue 1: the original codes, 2: utf8.len.
static int guarded_codes(lua_State *L) {
    kh_check_codes(L, lua_upvalueindex(2));
    return kh_run_upvalue(L, 1);
}

static void replace(lua_State *L, const char *name, lua_CFunction f, int extra) {
    // stack: library [extra upvalues...]
    kh_pushtext(L, name);
    lua_rawget(L, -2 - extra);
    if (extra) lua_insert(L, -1 - extra);
    lua_pushcclosure(L, f, 1 + extra);
    kh_pushtext(L, name);
    lua_insert(L, -2);
    lua_rawset(L, -3);
}

// Called by p_openlibs for every profile, under lua_pcall.
void kh_install_guards(lua_State *L) {
    lua_getglobal(L, LUA_COLIBNAME);
    replace(L, "close", guarded_close, 0);
    replace(L, "wrap", guarded_wrap, 0);
    lua_pop(L, 1);

    lua_getglobal(L, LUA_UTF8LIBNAME);
    lua_pushliteral(L, "len");
    lua_rawget(L, -2);
    replace(L, "codes", guarded_codes, 1);
    lua_pop(L, 1);
}
