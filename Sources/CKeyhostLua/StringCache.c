// Keeping Lua's string cache out of a token run's behaviour.
//
// lua_pushstring, lua_getfield, lua_setfield, lua_getglobal, lua_setglobal and
// a chunk's name in lua_load go through luaS_new, which first looks the text up
// in a cache slot chosen by the text's C ADDRESS (lstring.c: point2uint(str) %
// STRCACHE_N). For a short string (at most LUAI_MAXSHORTLEN = 40 bytes) a hit
// and a miss end in the same interned string and allocate the same. For a long
// one a miss allocates a fresh copy and a hit does not, so whether it
// allocates depends on where malloc, the Swift heap or the loader put the text:
// a different allocation sequence moves the collector, the arena blocks later
// tables get (Arena.c), and `#` of a table with holes.
//
// So in keyhost's own code every text handed to Lua goes by its length
// (lua_pushlstring, never cached), and the luaS_new paths take only C literals
// of at most 40 bytes (LuaRuntimeTests' StringCacheInputTests scan for it); a
// chunk name, which can come from anywhere, is cut to 40 bytes in a
// deterministic state. The sandbox's `load` does the same for the names a
// program gives or its text makes (Prelude.deterministic).
#include "Metering.h"

#include <string.h>

#define KH_SHORT_NAME 40 // LUAI_MAXSHORTLEN: longer texts are long strings

void kh_pushtext(lua_State *L, const char *s) {
    lua_pushlstring(L, s, strlen(s));
}

const char *kh_short_chunkname(lua_State *L, const char *name, char out[KH_SHORT_NAME + 1]) {
    kh_host *h = kh_gethost(L);
    if (name == NULL || h == NULL || h->arena == NULL || strlen(name) <= KH_SHORT_NAME) return name;
    memcpy(out, name, KH_SHORT_NAME);
    out[KH_SHORT_NAME] = '\0';
    return out;
}
