// The deterministic sandbox's fixes that Lua code cannot make (token programs,
// docs/lua-api.md "What a run can depend on"). A receipt is checked by running the
// program again elsewhere, so everything below closes a way for a run to depend
// on the clock, on addresses or on this process's random hash seed.
#include "Metering.h"

#include <limits.h>
#include <stddef.h>
#include <string.h>

// ---------------------------------------------------------------- Lua internals

// Lua 5.4.4 seeds its string hash from time(), the state's address, a stack
// address and a library address (luai_makeseed in lstate.c; Debian's liblua5.4
// keeps it). The seed decides where string keys land in a table's hash part,
// and with it when a table is resized after keys were removed, which decides
// which border `#t` returns for a table with holes. Lua has no API to set the
// seed, so kh_make_deterministic rewrites it, and the names Lua hashed with the
// old one, right after lua_newstate. The layout below is 5.4.4's (lstate.h,
// lobject.h); every field used is checked against values known independently
// before anything is written, and a state whose layout does not check out is
// refused rather than run nondeterministically.

typedef unsigned char kh_byte;
typedef struct kh_GCObject kh_GCObject;

typedef struct kh_TString {
    kh_GCObject *next;
    kh_byte tt;
    kh_byte marked;
    kh_byte extra;
    kh_byte shrlen;
    unsigned int hash;
    union {
        size_t lnglen;
        struct kh_TString *hnext;
    } u;
    char contents[1];
} kh_TString;

typedef union {
    kh_GCObject *gc;
    void *p;
    lua_CFunction f;
    lua_Integer i;
    lua_Number n;
} kh_Value;

typedef struct {
    kh_Value value_;
    kh_byte tt_;
} kh_TValue;

#define KH_TM_MODE 3
#define KH_TM_N 25

typedef struct {
    lua_Alloc frealloc;
    void *ud;
    ptrdiff_t totalbytes;
    ptrdiff_t GCdebt;
    size_t GCestimate;
    size_t lastatomic;
    struct {
        kh_TString **hash;
        int nuse;
        int size;
    } strt;
    kh_TValue l_registry;
    kh_TValue nilvalue;
    unsigned int seed;
    kh_byte currentwhite, gcstate, gckind, gcstopem, genminormul, genmajormul, gcstp, gcemergency, gcpause,
        gcstepmul, gcstepsize;
    kh_GCObject *allgc;
    kh_GCObject **sweepgc;
    kh_GCObject *finobj, *gray, *grayagain, *weak, *ephemeron, *allweak, *tobefnz, *fixedgc;
    kh_GCObject *survival, *old1, *reallyold, *firstold1, *finobjsur, *finobjold1, *finobjrold;
    lua_State *twups;
    lua_CFunction panic;
    lua_State *mainthread;
    kh_TString *memerrmsg;
    kh_TString *tmname[KH_TM_N];
} kh_global_State;

typedef struct {
    kh_GCObject *next;
    kh_byte tt;
    kh_byte marked;
    kh_byte status;
    kh_byte allowhook;
    unsigned short nci;
    void *top;
    kh_global_State *l_G;
} kh_lua_State;

#define KH_VSHRSTR (LUA_TSTRING | (0 << 4))
#define KH_VLNGSTR (LUA_TSTRING | (1 << 4))

// Any fixed value does; this one spells "khsd".
#define KH_FIXED_SEED 0x6b687364u

static const char *const kh_event_names[KH_TM_N] = {
    "__index", "__newindex", "__gc", "__mode", "__len", "__eq", "__add", "__sub", "__mul",
    "__mod", "__pow", "__div", "__idiv", "__band", "__bor", "__bxor", "__shl", "__shr",
    "__unm", "__bnot", "__lt", "__le", "__concat", "__call", "__close"};

// luaS_hash of 5.4.4 (not exported by the library).
static unsigned int kh_string_hash(const char *str, size_t l, unsigned int seed) {
    unsigned int h = seed ^ (unsigned int)l;
    for (; l > 0; l--) h ^= ((h << 5) + (h >> 2) + (kh_byte)str[l - 1]);
    return h;
}

static int kh_is_short_string(const kh_TString *ts, const char *text, unsigned int seed) {
    size_t l = strlen(text);
    return ts != NULL && ts->tt == KH_VSHRSTR && ts->shrlen == l && memcmp(ts->contents, text, l) == 0 &&
           ts->hash == kh_string_hash(text, l, seed);
}

static int kh_nop_panic(lua_State *L) {
    (void)L;
    return 0;
}

static int kh_layout_checks_out(lua_State *L, kh_global_State *g) {
    void *ud = NULL;
    lua_Alloc f = lua_getallocf(L, &ud);
    lua_CFunction panic = lua_atpanic(L, kh_nop_panic);
    lua_atpanic(L, panic);
    if (g == NULL || g->frealloc != f || g->ud != ud || g->mainthread != L || g->panic != panic) return 0;
    if (!kh_is_short_string(g->memerrmsg, "not enough memory", g->seed)) return 0;
    for (int i = 0; i < KH_TM_N; i++)
        if (!kh_is_short_string(g->tmname[i], kh_event_names[i], g->seed)) return 0;
    int size = g->strt.size, count = 0;
    if (size <= 0 || (size & (size - 1)) != 0 || g->strt.hash == NULL) return 0;
    for (int i = 0; i < size; i++) {
        for (kh_TString *ts = g->strt.hash[i]; ts != NULL; ts = ts->u.hnext) {
            if (ts->tt != KH_VSHRSTR || ts->hash != kh_string_hash(ts->contents, ts->shrlen, g->seed) ||
                (int)(ts->hash & (unsigned int)(size - 1)) != i || ++count > g->strt.nuse)
                return 0;
        }
    }
    return count == g->strt.nuse;
}

static const char kh_weak_mode_key = 0;

int kh_make_deterministic(lua_State *L) {
    kh_global_State *g = ((kh_lua_State *)L)->l_G;
    if (!kh_layout_checks_out(L, g)) return 0;

    // A fresh state holds only the strings Lua interned for itself (reserved
    // words, metamethod names, the memory error) and no table has string keys
    // yet, so re-hashing the string table is all a new seed needs.
    int size = g->strt.size;
    kh_TString *all = NULL;
    for (int i = 0; i < size; i++) {
        kh_TString *ts = g->strt.hash[i];
        while (ts != NULL) {
            kh_TString *next = ts->u.hnext;
            ts->u.hnext = all;
            all = ts;
            ts = next;
        }
        g->strt.hash[i] = NULL;
    }
    g->seed = KH_FIXED_SEED;
    while (all != NULL) {
        kh_TString *next = all->u.hnext;
        all->hash = kh_string_hash(all->contents, all->shrlen, g->seed);
        kh_TString **bucket = &g->strt.hash[all->hash & (unsigned int)(size - 1)];
        all->u.hnext = *bucket;
        *bucket = all;
        all = next;
    }

    // Weak tables lose entries when the collector runs, and when it runs depends
    // on this build's allocation sizes. The collector looks a table's mode up by
    // the interned name "__mode", comparing short strings by identity; pointing
    // that name at a private long string, which no key a program makes can be,
    // makes every table strong, however and whenever a program sets __mode.
    // Kept alive by the registry.
    static const char unreachable[] =
        "keyhost: the deterministic sandbox's name for __mode, which no program can use as a key";
    lua_pushlightuserdata(L, (void *)&kh_weak_mode_key);
    lua_pushlstring(L, unreachable, sizeof unreachable - 1);
    kh_TString *mode = (kh_TString *)(uintptr_t)(lua_tostring(L, -1) - offsetof(kh_TString, contents));
    if (mode->tt != KH_VLNGSTR || mode->u.lnglen != sizeof unreachable - 1) {
        lua_pop(L, 2);
        return 0;
    }
    lua_rawset(L, LUA_REGISTRYINDEX);
    g->tmname[KH_TM_MODE] = mode;
    return 1;
}

// ---------------------------------------------------------------- tostring

// tostring without addresses: a table or userdata shows its __tostring if its
// real metatable has one, else only its type. The metatable is read with
// lua_getmetatable, which a fake __metatable field cannot hide or imitate.
static int plain_tostring(lua_State *L) {
    luaL_checkany(L, 1);
    switch (lua_type(L, 1)) {
    case LUA_TTABLE:
    case LUA_TUSERDATA:
        if (luaL_getmetafield(L, 1, "__tostring") != LUA_TNIL) {
            lua_pop(L, 1);
            luaL_tolstring(L, 1, NULL);
            return 1;
        }
        /* fall through */
    case LUA_TFUNCTION:
    case LUA_TTHREAD:
    case LUA_TLIGHTUSERDATA:
        kh_pushtext(L, luaL_typename(L, 1));
        return 1;
    default:
        luaL_tolstring(L, 1, NULL);
        return 1;
    }
}

// ---------------------------------------------------------------- table.sort

// Lua 5.4.4's quicksort (ltablib.c, MIT licence) with one change: where Lua
// re-seeds its pivot from clock() and time() after a badly unbalanced
// partition, this takes the next value of a fixed sequence. With an order
// function that is not consistent, or that adapts to the comparisons it sees,
// the result depends on the pivots, so they must be the same on every run.
// Fixed pivots can be driven to quadratic work, which the charge below turns
// into the instruction limit instead of a run that overstays its time.

typedef unsigned int kh_idx;

typedef struct {
    uint64_t prepaid; // elements partitioned that are already paid for
    uint64_t work;    // elements partitioned so far
} kh_sort_meter;

#define KH_RANLIMIT 100u

static void set2(lua_State *L, kh_idx i, kh_idx j) {
    lua_seti(L, 1, i);
    lua_seti(L, 1, j);
}

static int sort_comp(lua_State *L, int a, int b) {
    if (lua_isnil(L, 2)) return lua_compare(L, a, b, LUA_OPLT);
    lua_pushvalue(L, 2);
    lua_pushvalue(L, a - 1);
    lua_pushvalue(L, b - 2);
    lua_call(L, 2, 1);
    int res = lua_toboolean(L, -1);
    lua_pop(L, 1);
    return res;
}

static kh_idx partition(lua_State *L, kh_idx lo, kh_idx up) {
    kh_idx i = lo, j = up - 1;
    for (;;) {
        while ((void)lua_geti(L, 1, ++i), sort_comp(L, -1, -2)) {
            if (i == up - 1) luaL_error(L, "invalid order function for sorting");
            lua_pop(L, 1);
        }
        while ((void)lua_geti(L, 1, --j), sort_comp(L, -3, -1)) {
            if (j < i) luaL_error(L, "invalid order function for sorting");
            lua_pop(L, 1);
        }
        if (j < i) {
            lua_pop(L, 1);
            set2(L, up - 1, i);
            return i;
        }
        set2(L, i, j);
    }
}

static kh_idx choose_pivot(kh_idx lo, kh_idx up, unsigned int rnd) {
    kh_idx r4 = (up - lo) / 4;
    return rnd % (r4 * 2) + (lo + r4);
}

static void charge_partition(lua_State *L, kh_sort_meter *meter, kh_idx lo, kh_idx up) {
    meter->work += (uint64_t)(up - lo) + 1;
    if (meter->work > meter->prepaid) {
        // Same rate as the up-front charge: about ten instructions an element.
        kh_charge(L, 10 * (meter->work - meter->prepaid));
        meter->prepaid = meter->work;
    }
}

static void auxsort(lua_State *L, kh_idx lo, kh_idx up, unsigned int rnd, kh_sort_meter *meter) {
    while (lo < up) {
        kh_idx p, n;
        charge_partition(L, meter, lo, up);
        lua_geti(L, 1, lo);
        lua_geti(L, 1, up);
        if (sort_comp(L, -1, -2))
            set2(L, lo, up);
        else
            lua_pop(L, 2);
        if (up - lo == 1) return;
        if (up - lo < KH_RANLIMIT || rnd == 0)
            p = (lo + up) / 2;
        else
            p = choose_pivot(lo, up, rnd);
        lua_geti(L, 1, p);
        lua_geti(L, 1, lo);
        if (sort_comp(L, -2, -1))
            set2(L, p, lo);
        else {
            lua_pop(L, 1);
            lua_geti(L, 1, up);
            if (sort_comp(L, -1, -2))
                set2(L, p, up);
            else
                lua_pop(L, 2);
        }
        if (up - lo == 2) return;
        lua_geti(L, 1, p);
        lua_pushvalue(L, -1);
        lua_geti(L, 1, up - 1);
        set2(L, p, up - 1);
        p = partition(L, lo, up);
        if (p - lo < up - p) {
            auxsort(L, lo, p - 1, rnd, meter);
            n = p - lo;
            lo = p + 1;
        } else {
            auxsort(L, p + 1, up, rnd, meter);
            n = up - p;
            up = p - 1;
        }
        if ((up - lo) / 128 > n) rnd = rnd * 1103515245u + 12345u;
    }
}

static int deterministic_sort(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    // The up-front charge of the sandbox's metered sort (MeteredLibrary.c).
    uint64_t raw = (uint64_t)lua_rawlen(L, 1), levels = 0;
    for (uint64_t m = raw; m > 1; m >>= 1) levels++;
    if (raw > 1) kh_charge(L, 10 * raw * (levels + 1));
    lua_Integer n = luaL_len(L, 1);
    if (n > 1) {
        luaL_argcheck(L, n < INT_MAX, 1, "array too big");
        if (!lua_isnoneornil(L, 2)) luaL_checktype(L, 2, LUA_TFUNCTION);
        lua_settop(L, 2);
        // Partitions touch about n·log n elements in all; twice that passes free (what
        // the up-front charge paid for), so only a sort driven towards n² pays more.
        kh_sort_meter meter = {2 * raw * (levels + 1), 0};
        auxsort(L, 1, (kh_idx)n, 0, &meter);
    }
    return 0;
}

// ---------------------------------------------------------------- install

// Called by p_openlibs for the deterministic sandbox, under lua_pcall, before
// the Lua prelude (Prelude.deterministic) builds on these.
void kh_install_determinism(lua_State *L) {
    lua_pushcfunction(L, plain_tostring);
    lua_setglobal(L, "tostring");
    lua_getglobal(L, LUA_TABLIBNAME);
    lua_pushcfunction(L, deterministic_sort);
    lua_setfield(L, -2, "sort");
    lua_pop(L, 1);
}

// ---------------------------------------------------------------- code addresses

// A C function registered without upvalues is a "light" function: a bare code
// pointer, hashed as a table key by that address, which moves with the
// program's load address. The deterministic sandbox hands programs closures of
// the same C functions instead (one unused upvalue makes Lua allocate them, from
// the arena), so they hash alike in every process. Equality is kept: each light
// function gets one closure, recorded in the map.

static int is_light_function(lua_State *L, int idx) {
    if (!lua_iscfunction(L, idx)) return 0;
    if (lua_getupvalue(L, idx, 1) != NULL) {
        lua_pop(L, 1);
        return 0;
    }
    return 1;
}

// Replaces the light function on top of the stack with its closure.
static void closure_for(lua_State *L, int map) {
    lua_pushvalue(L, -1);
    if (lua_rawget(L, map) == LUA_TNIL) {
        lua_pop(L, 1);
        lua_pushboolean(L, 0);
        lua_pushcclosure(L, lua_tocfunction(L, -2), 1);
        lua_pushvalue(L, -2);
        lua_pushvalue(L, -2);
        lua_rawset(L, map);
    }
    lua_remove(L, -2);
}

// Swaps each light function among the top n results for its closure.
static int closed_results(lua_State *L, int n, int map) {
    int top = lua_gettop(L);
    if (n > top) n = top;
    for (int i = top - n + 1; i <= top; i++) {
        if (!is_light_function(L, i)) continue;
        lua_pushvalue(L, i);
        closure_for(L, map);
        lua_replace(L, i);
    }
    return n;
}

// pairs and ipairs return a light iterator (next, ipairsaux): they run here, in
// this frame so that their errors read as before, and the iterator is swapped
// for its closure. Upvalue 1: the original, 2: the map.
static int closure_results(lua_State *L) {
    return closed_results(L, kh_run_upvalue(L, 1), lua_upvalueindex(2));
}

// The same for utf8.codes behind its guard (LibraryGuards.c), whose upvalues it
// takes over. Upvalue 1: the original codes, 2: utf8.len, 3: the map.
static int closed_codes(lua_State *L) {
    kh_check_codes(L, lua_upvalueindex(2));
    return closed_results(L, kh_run_upvalue(L, 1), lua_upvalueindex(3));
}

static void wrap_results(lua_State *L, int library, const char *name, int map) {
    kh_pushtext(L, name);
    lua_rawget(L, library);
    lua_pushvalue(L, map);
    lua_pushcclosure(L, closure_results, 2);
    kh_pushtext(L, name);
    lua_insert(L, -2);
    lua_rawset(L, library);
}

static void close_library(lua_State *L, int library, int map) {
    lua_pushnil(L);
    while (lua_next(L, library)) {
        if (is_light_function(L, -1)) {
            closure_for(L, map);
            lua_pushvalue(L, -2);
            lua_insert(L, -2);
            lua_rawset(L, library); // an existing key: allowed while traversing
        } else {
            lua_pop(L, 1);
        }
    }
}

void kh_hide_code_addresses(lua_State *L) {
    lua_newtable(L);
    int map = lua_gettop(L);
    lua_pushglobaltable(L);
    int globals = lua_gettop(L);
    wrap_results(L, globals, "pairs", map);
    wrap_results(L, globals, "ipairs", map);
    lua_getglobal(L, LUA_UTF8LIBNAME);
    lua_getfield(L, -1, "codes");
    if (lua_getupvalue(L, -1, 1) == NULL || lua_getupvalue(L, -2, 2) == NULL)
        luaL_error(L, "keyhost: utf8.codes is not the guarded one");
    lua_pushvalue(L, map);
    lua_pushcclosure(L, closed_codes, 3);
    lua_setfield(L, -3, "codes");
    lua_pop(L, 2);
    // Every library table is in package.loaded (the string metatable's __index
    // is the string table), _G among them.
    lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
    int loaded = lua_gettop(L);
    lua_pushnil(L);
    while (lua_next(L, loaded)) {
        if (lua_type(L, -1) == LUA_TTABLE) close_library(L, lua_gettop(L), map);
        lua_pop(L, 1);
    }
    lua_pop(L, 3);
}
