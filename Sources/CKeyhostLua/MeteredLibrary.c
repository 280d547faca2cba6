// The sandbox's limits applied inside library functions written in C.
//
// Every standard function whose running time is not bounded by the memory cap
// in a way the hook can see is charged before it starts (or, for pattern
// matching, step by step): the work is counted against the instruction
// budget in units of roughly one Lua instruction, so a call that would take
// minutes is refused up front instead of overrunning the time limit.
#include "Metering.h"
#include "CKeyhostProcess.h"


// The one place limits are enforced: the count hook charges its instructions
// here, the metered library functions their steps.
void kh_charge(lua_State *L, uint64_t steps) {
    kh_host *h = kh_gethost(L);
    h->executed = (UINT64_MAX - h->executed < steps) ? UINT64_MAX : h->executed + steps;
    if (h->interrupted) {
        h->interrupted = 0;
        h->interrupt_hit = 1;
        khp_cancel_clear(); // noticed: a later Ctrl-C is a first one again
        kh_restore_hook(L);
        luaL_error(L, "interrupted");
    }
    if (h->budget != 0 && h->executed > h->budget) {
        h->budget_hit = 1;
        kh_hook_every_instruction(L); // like the hook: code that catches this cannot run on
        luaL_error(L, "sandbox: instruction budget of %I instructions exceeded", (lua_Integer)h->budget);
    }
    if (h->deadline != 0 && kh_now() > h->deadline) {
        h->time_hit = 1;
        kh_hook_every_instruction(L);
        luaL_error(L, "sandbox: time limit of %f seconds exceeded", h->time_limit);
    }
}

int kh_overran(lua_State *L) {
    kh_host *h = kh_gethost(L);
    if (h->deadline == 0 || kh_now() <= h->deadline) return 0;
    h->time_hit = 1;
    return 1;
}

// Each wrapper keeps the original C function in upvalue 1, charges, then runs it
// with kh_run_upvalue (same frame, so its argument errors still name the function).

static uint64_t span(lua_Integer first, lua_Integer last) {
    return last < first ? 0 : (uint64_t)last - (uint64_t)first + 1;
}

// string.rep copies n times even when there is nothing to copy: rep("", 2^50)
// never returns. A result too big for the memory cap is left to the original,
// which fails at its one allocation before copying anything.
static int metered_rep(lua_State *L) {
    size_t l, lsep;
    luaL_checklstring(L, 1, &l);
    lua_Integer n = luaL_checkinteger(L, 2);
    luaL_optlstring(L, 3, "", &lsep);
    if (n <= 0 || l + lsep == 0) {
        lua_pushliteral(L, "");
        return 1;
    }
    kh_host *h = kh_gethost(L);
    uint64_t unit = (uint64_t)l + (uint64_t)lsep;
    uint64_t room = h->limit > h->used ? (uint64_t)(h->limit - h->used) : 0;
    if (h->limit == 0 || (uint64_t)n <= room / unit) kh_charge(L, (uint64_t)n / 4 + (uint64_t)n * unit / 64);
    return kh_run_upvalue(L, 1);
}

// About ten instructions' time per element and level of the quicksort.
static int metered_sort(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    uint64_t n = (uint64_t)lua_rawlen(L, 1);
    uint64_t levels = 0;
    for (uint64_t m = n; m > 1; m >>= 1) levels++;
    if (n > 1) kh_charge(L, 10 * n * (levels + 1));
    return kh_run_upvalue(L, 1);
}

static int metered_concat(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_Integer first = luaL_optinteger(L, 3, 1);
    lua_Integer last = lua_isnoneornil(L, 4) ? (lua_Integer)lua_rawlen(L, 1) : luaL_checkinteger(L, 4);
    kh_charge(L, span(first, last));
    return kh_run_upvalue(L, 1);
}

static int metered_unpack(lua_State *L) {
    lua_Integer first = luaL_optinteger(L, 2, 1);
    lua_Integer last = lua_isnoneornil(L, 3) ? (lua_Integer)lua_rawlen(L, 1) : luaL_checkinteger(L, 3);
    kh_charge(L, span(first, last));
    return kh_run_upvalue(L, 1);
}

// table.move({}, 1, 2^40, 1) loops 2^40 times over nothing.
static int metered_move(lua_State *L) {
    lua_Integer first = luaL_checkinteger(L, 2);
    lua_Integer last = luaL_checkinteger(L, 3);
    kh_charge(L, span(first, last));
    return kh_run_upvalue(L, 1);
}

// insert and remove at a position shift every element after it.
static int metered_shift(lua_State *L) {
    if (lua_type(L, 1) == LUA_TTABLE) kh_charge(L, (uint64_t)lua_rawlen(L, 1) + 1);
    return kh_run_upvalue(L, 1);
}

// For the sandbox prelude: load() charges a chunk's size before compiling it.
static int charge_from_lua(lua_State *L) {
    lua_Integer n = luaL_checkinteger(L, 1);
    if (n > 0) kh_charge(L, (uint64_t)n);
    return 0;
}

static void wrap(lua_State *L, const char *name, lua_CFunction f) {
    kh_pushtext(L, name);
    kh_pushtext(L, name);
    lua_rawget(L, -3);
    lua_pushcclosure(L, f, 1);
    lua_rawset(L, -3);
}

// Called by p_openlibs for the sandbox, under lua_pcall.
void kh_install_metering(lua_State *L) {
    lua_getglobal(L, LUA_STRLIBNAME);
    wrap(L, "rep", metered_rep);
    kh_install_metered_patterns(L);
    lua_pop(L, 1);

    lua_getglobal(L, LUA_TABLIBNAME);
    wrap(L, "sort", metered_sort);
    wrap(L, "concat", metered_concat);
    wrap(L, "unpack", metered_unpack);
    wrap(L, "move", metered_move);
    wrap(L, "insert", metered_shift);
    wrap(L, "remove", metered_shift);
    lua_pop(L, 1);

    lua_pushcfunction(L, charge_from_lua);
    lua_setglobal(L, "__keyhost_charge"); // taken and removed by the sandbox prelude
}
