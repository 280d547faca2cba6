// Lua 5.4's string patterns (string.find, match, gmatch, gsub) with every
// matching step charged to the sandbox's limits.
//
// Lua's own matcher backtracks without ever returning to the VM: a 60-byte
// pattern over a 100-byte subject can run for hours and no hook sees it. The
// semantics here are Lua 5.4's, results and error messages included (the test
// suite compares both implementations on generated patterns); the difference
// is that each step of the matcher counts like an instruction, so the
// instruction budget, the time limit and Ctrl-C stop it.
#define _GNU_SOURCE
#include "Metering.h"

#include <ctype.h>
#include <string.h>

#define KH_MAXCAPTURES 32 // lstrlib.c's LUA_MAXCAPTURES, which no header exports
#define KH_MATCHDEPTH 200 // lstrlib's MAXCCALLS: recursion allowed in one match
#define KH_CAP_UNFINISHED (-1)
#define KH_CAP_POSITION (-2)
#define KH_ESC '%'
#define KH_SPECIALS "^$*+?.([%-"
#define KH_CHARGE_EVERY 1024

#define uchar(c) ((unsigned char)(c))

typedef struct {
    const char *src_init, *src_end, *p_end;
    lua_State *L;
    int depth; // recursion left before "pattern too complex"
    int level; // captures in use
    uint64_t steps; // not yet charged
    struct {
        const char *init;
        ptrdiff_t len;
    } capture[KH_MAXCAPTURES];
} kh_match;

static void step(kh_match *m, uint64_t n) {
    m->steps += n;
    if (m->steps >= KH_CHARGE_EVERY) {
        uint64_t due = m->steps;
        m->steps = 0;
        kh_charge(m->L, due);
    }
}

static void settle(kh_match *m) {
    uint64_t due = m->steps;
    m->steps = 0;
    if (due) kh_charge(m->L, due);
}

static const char *match(kh_match *m, const char *s, const char *p);

static int capture_index(kh_match *m, int c) {
    int l = c - '1';
    if (l < 0 || l >= m->level || m->capture[l].len == KH_CAP_UNFINISHED)
        return luaL_error(m->L, "invalid capture index %%%d", l + 1);
    return l;
}

static int open_capture(kh_match *m) {
    for (int level = m->level - 1; level >= 0; level--)
        if (m->capture[level].len == KH_CAP_UNFINISHED) return level;
    return luaL_error(m->L, "invalid pattern capture");
}

// The end of the single-character class starting at p.
static const char *class_end(kh_match *m, const char *p) {
    switch (*p++) {
    case KH_ESC:
        if (p == m->p_end) luaL_error(m->L, "malformed pattern (ends with '%%')");
        return p + 1;
    case '[':
        if (*p == '^') p++;
        do { // Lua strings end in '\0', so reading *p at p_end is safe
            if (p == m->p_end) luaL_error(m->L, "malformed pattern (missing ']')");
            if (*(p++) == KH_ESC && p < m->p_end) p++;
        } while (*p != ']');
        return p + 1;
    default:
        return p;
    }
}

static int in_class(int c, int cl) {
    int res;
    switch (tolower(cl)) {
    case 'a': res = isalpha(c); break;
    case 'c': res = iscntrl(c); break;
    case 'd': res = isdigit(c); break;
    case 'g': res = isgraph(c); break;
    case 'l': res = islower(c); break;
    case 'p': res = ispunct(c); break;
    case 's': res = isspace(c); break;
    case 'u': res = isupper(c); break;
    case 'w': res = isalnum(c); break;
    case 'x': res = isxdigit(c); break;
    default: return cl == c;
    }
    return isupper(cl) ? !res : res;
}

// p points at '[', last at the closing ']'.
static int in_set(int c, const char *p, const char *last) {
    int hit = 1;
    if (*(p + 1) == '^') {
        hit = 0;
        p++;
    }
    while (++p < last) {
        if (*p == KH_ESC) {
            p++;
            if (in_class(c, uchar(*p))) return hit;
        } else if (*(p + 1) == '-' && p + 2 < last) {
            p += 2;
            if (uchar(*(p - 2)) <= c && c <= uchar(*p)) return hit;
        } else if (uchar(*p) == c) {
            return hit;
        }
    }
    return !hit;
}

static int single(kh_match *m, const char *s, const char *p, const char *ep) {
    if (s >= m->src_end) return 0;
    int c = uchar(*s);
    switch (*p) {
    case '.': return 1;
    case KH_ESC: return in_class(c, uchar(*(p + 1)));
    case '[': return in_set(c, p, ep - 1);
    default: return uchar(*p) == c;
    }
}

static const char *balance(kh_match *m, const char *s, const char *p) {
    if (p >= m->p_end - 1) luaL_error(m->L, "malformed pattern (missing arguments to '%%b')");
    if (*s != *p) return NULL;
    int open = *p, close = *(p + 1), depth = 1;
    while (++s < m->src_end) {
        step(m, 1);
        if (*s == close) {
            if (--depth == 0) return s + 1;
        } else if (*s == open) {
            depth++;
        }
    }
    return NULL;
}

static const char *longest(kh_match *m, const char *s, const char *p, const char *ep) {
    ptrdiff_t i = 0;
    while (single(m, s + i, p, ep)) {
        step(m, 1);
        i++;
    }
    for (; i >= 0; i--) { // the longest run first, giving back one character at a time
        step(m, 1);
        const char *res = match(m, s + i, ep + 1);
        if (res) return res;
    }
    return NULL;
}

static const char *shortest(kh_match *m, const char *s, const char *p, const char *ep) {
    for (;;) {
        step(m, 1);
        const char *res = match(m, s, ep + 1);
        if (res) return res;
        if (!single(m, s, p, ep)) return NULL;
        s++;
    }
}

static const char *start_capture(kh_match *m, const char *s, const char *p, int what) {
    int level = m->level;
    if (level >= KH_MAXCAPTURES) luaL_error(m->L, "too many captures");
    m->capture[level].init = s;
    m->capture[level].len = what;
    m->level = level + 1;
    const char *res = match(m, s, p);
    if (res == NULL) m->level--;
    return res;
}

static const char *end_capture(kh_match *m, const char *s, const char *p) {
    int l = open_capture(m);
    m->capture[l].len = s - m->capture[l].init;
    const char *res = match(m, s, p);
    if (res == NULL) m->capture[l].len = KH_CAP_UNFINISHED;
    return res;
}

static const char *back_reference(kh_match *m, const char *s, int c) {
    int l = capture_index(m, c);
    size_t len = (size_t)m->capture[l].len;
    step(m, len / 64);
    if ((size_t)(m->src_end - s) >= len && memcmp(m->capture[l].init, s, len) == 0) return s + len;
    return NULL;
}

static const char *match(kh_match *m, const char *s, const char *p) {
    if (m->depth-- == 0) luaL_error(m->L, "pattern too complex");
again:
    step(m, 1);
    if (p != m->p_end) {
        switch (*p) {
        case '(':
            if (*(p + 1) == ')')
                s = start_capture(m, s, p + 2, KH_CAP_POSITION);
            else
                s = start_capture(m, s, p + 1, KH_CAP_UNFINISHED);
            break;
        case ')':
            s = end_capture(m, s, p + 1);
            break;
        case '$':
            if (p + 1 != m->p_end) goto plain;
            s = (s == m->src_end) ? s : NULL;
            break;
        case KH_ESC:
            switch (*(p + 1)) {
            case 'b':
                s = balance(m, s, p + 2);
                if (s != NULL) {
                    p += 4;
                    goto again;
                }
                break;
            case 'f': {
                p += 2;
                if (*p != '[') luaL_error(m->L, "missing '[' after '%%f' in pattern");
                const char *ep = class_end(m, p);
                int previous = (s == m->src_init) ? '\0' : uchar(*(s - 1));
                if (!in_set(previous, p, ep - 1) && in_set(uchar(*s), p, ep - 1)) {
                    p = ep;
                    goto again;
                }
                s = NULL;
                break;
            }
            case '0': case '1': case '2': case '3': case '4':
            case '5': case '6': case '7': case '8': case '9':
                s = back_reference(m, s, uchar(*(p + 1)));
                if (s != NULL) {
                    p += 2;
                    goto again;
                }
                break;
            default:
                goto plain;
            }
            break;
        default:
        plain: {
            const char *ep = class_end(m, p);
            if (!single(m, s, p, ep)) {
                if (*ep == '*' || *ep == '?' || *ep == '-') { // these accept zero repetitions
                    p = ep + 1;
                    goto again;
                }
                s = NULL;
            } else {
                switch (*ep) {
                case '?': {
                    const char *res = match(m, s + 1, ep + 1);
                    if (res != NULL) {
                        s = res;
                    } else {
                        p = ep + 1;
                        goto again;
                    }
                    break;
                }
                case '+': s = longest(m, s + 1, p, ep); break;
                case '*': s = longest(m, s, p, ep); break;
                case '-': s = shortest(m, s, p, ep); break;
                default:
                    s++;
                    p = ep;
                    goto again;
                }
            }
            break;
        }
        }
    }
    m->depth++;
    return s;
}

// ---------------------------------------------------------------- captures

static void prepare(kh_match *m, lua_State *L, const char *s, size_t ls, const char *p, size_t lp) {
    m->L = L;
    m->src_init = s;
    m->src_end = s + ls;
    m->p_end = p + lp;
    m->steps = 0;
}

static void restart(kh_match *m) {
    m->level = 0;
    m->depth = KH_MATCHDEPTH;
}

// Capture i: its bytes (length returned, start in *cap), or for a position
// capture KH_CAP_POSITION with the position already pushed.
static ptrdiff_t capture(kh_match *m, int i, const char *s, const char *e, const char **cap) {
    if (i >= m->level) {
        if (i != 0) luaL_error(m->L, "invalid capture index %%%d", i + 1);
        *cap = s;
        return e - s;
    }
    ptrdiff_t len = m->capture[i].len;
    *cap = m->capture[i].init;
    if (len == KH_CAP_UNFINISHED) luaL_error(m->L, "unfinished capture");
    else if (len == KH_CAP_POSITION) lua_pushinteger(m->L, (m->capture[i].init - m->src_init) + 1);
    return len;
}

static void push_capture(kh_match *m, int i, const char *s, const char *e) {
    const char *cap;
    ptrdiff_t len = capture(m, i, s, e, &cap);
    if (len != KH_CAP_POSITION) lua_pushlstring(m->L, cap, (size_t)len);
}

static int push_captures(kh_match *m, const char *s, const char *e) {
    int n = (m->level == 0 && s) ? 1 : m->level;
    luaL_checkstack(m->L, n, "too many captures");
    for (int i = 0; i < n; i++) push_capture(m, i, s, e);
    return n;
}

// ---------------------------------------------------------------- find, match

// A position argument as Lua's string functions read it (1-based, negative from the end).
static size_t position(lua_Integer pos, size_t len) {
    if (pos > 0) return (size_t)pos;
    if (pos == 0) return 1;
    if (pos < -(lua_Integer)len) return 1;
    return len + (size_t)pos + 1;
}

static int has_specials(const char *p, size_t lp) {
    size_t upto = 0;
    do { // strpbrk stops at '\0': look past each embedded zero too
        if (strpbrk(p + upto, KH_SPECIALS) != NULL) return 1;
        upto += strlen(p + upto) + 1;
    } while (upto <= lp);
    return 0;
}

static int find_or_match(lua_State *L, int find) {
    size_t ls, lp;
    const char *s = luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checklstring(L, 2, &lp);
    size_t init = position(luaL_optinteger(L, 3, 1), ls) - 1;
    if (init > ls) {
        luaL_pushfail(L);
        return 1;
    }
    if (find && (lua_toboolean(L, 4) || !has_specials(p, lp))) {
        // glibc's memmem is linear (two-way): no quadratic worst case to meter.
        kh_charge(L, (ls - init) / 64 + lp / 64 + 1);
        const char *hit = memmem(s + init, ls - init, p, lp);
        if (hit) {
            lua_pushinteger(L, (hit - s) + 1);
            lua_pushinteger(L, (hit - s) + (lua_Integer)lp);
            return 2;
        }
        luaL_pushfail(L);
        return 1;
    }
    kh_match m;
    const char *s1 = s + init;
    int anchor = (*p == '^');
    if (anchor) {
        p++;
        lp--;
    }
    prepare(&m, L, s, ls, p, lp);
    do {
        restart(&m);
        const char *res = match(&m, s1, p);
        if (res != NULL) {
            settle(&m);
            if (find) {
                lua_pushinteger(L, (s1 - s) + 1);
                lua_pushinteger(L, res - s);
                return push_captures(&m, NULL, 0) + 2;
            }
            return push_captures(&m, s1, res);
        }
    } while (s1++ < m.src_end && !anchor);
    settle(&m);
    luaL_pushfail(L);
    return 1;
}

static int kh_find(lua_State *L) { return find_or_match(L, 1); }
static int kh_match_fn(lua_State *L) { return find_or_match(L, 0); }

// ---------------------------------------------------------------- gmatch

typedef struct {
    const char *src, *p, *lastmatch;
    kh_match m;
} kh_gmatch;

static int gmatch_next(lua_State *L) {
    kh_gmatch *g = (kh_gmatch *)lua_touserdata(L, lua_upvalueindex(3));
    g->m.L = L;
    for (const char *src = g->src; src <= g->m.src_end; src++) {
        restart(&g->m);
        const char *e = match(&g->m, src, g->p);
        if (e != NULL && e != g->lastmatch) {
            g->src = g->lastmatch = e;
            settle(&g->m);
            return push_captures(&g->m, src, e);
        }
    }
    settle(&g->m);
    return 0;
}

static int kh_gmatch_fn(lua_State *L) {
    size_t ls, lp;
    const char *s = luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checklstring(L, 2, &lp);
    size_t init = position(luaL_optinteger(L, 3, 1), ls) - 1;
    lua_settop(L, 2); // the closure keeps both strings alive
    kh_gmatch *g = (kh_gmatch *)lua_newuserdatauv(L, sizeof *g, 0);
    if (init > ls) init = ls + 1;
    prepare(&g->m, L, s, ls, p, lp);
    g->src = s + init;
    g->p = p;
    g->lastmatch = NULL;
    lua_pushcclosure(L, gmatch_next, 3);
    return 1;
}

// ---------------------------------------------------------------- gsub

static void append_template(kh_match *m, luaL_Buffer *b, const char *s, const char *e) {
    lua_State *L = m->L;
    size_t l;
    const char *text = lua_tolstring(L, 3, &l);
    const char *p;
    step(m, l / 16 + 1);
    while ((p = (const char *)memchr(text, KH_ESC, l)) != NULL) {
        luaL_addlstring(b, text, (size_t)(p - text));
        p++;
        if (*p == KH_ESC) {
            luaL_addchar(b, *p);
        } else if (*p == '0') {
            luaL_addlstring(b, s, (size_t)(e - s));
        } else if (isdigit(uchar(*p))) {
            const char *cap;
            ptrdiff_t len = capture(m, *p - '1', s, e, &cap);
            if (len == KH_CAP_POSITION)
                luaL_addvalue(b);
            else
                luaL_addlstring(b, cap, (size_t)len);
        } else {
            luaL_error(L, "invalid use of '%c' in replacement string", KH_ESC);
        }
        l -= (size_t)(p + 1 - text);
        text = p + 1;
    }
    luaL_addlstring(b, text, l);
}

// Appends the replacement for one match; returns whether it changed anything.
static int append_replacement(kh_match *m, luaL_Buffer *b, const char *s, const char *e, int kind) {
    lua_State *L = m->L;
    switch (kind) {
    case LUA_TFUNCTION: {
        settle(m); // the function's own instructions are counted by the hook
        lua_pushvalue(L, 3);
        int n = push_captures(m, s, e);
        lua_call(L, n, 1);
        break;
    }
    case LUA_TTABLE:
        push_capture(m, 0, s, e);
        lua_gettable(L, 3);
        break;
    default:
        append_template(m, b, s, e);
        return 1;
    }
    if (!lua_toboolean(L, -1)) { // nil or false: keep the original text
        lua_pop(L, 1);
        luaL_addlstring(b, s, (size_t)(e - s));
        return 0;
    }
    if (!lua_isstring(L, -1)) return luaL_error(L, "invalid replacement value (a %s)", luaL_typename(L, -1));
    luaL_addvalue(b);
    return 1;
}

static int kh_gsub(lua_State *L) {
    size_t srcl, lp;
    const char *src = luaL_checklstring(L, 1, &srcl);
    const char *p = luaL_checklstring(L, 2, &lp);
    const char *lastmatch = NULL;
    int kind = lua_type(L, 3);
    lua_Integer max = luaL_optinteger(L, 4, (lua_Integer)srcl + 1);
    int anchor = (*p == '^');
    lua_Integer n = 0;
    int changed = 0;
    kh_match m;
    luaL_Buffer b;
    luaL_argexpected(L, kind == LUA_TNUMBER || kind == LUA_TSTRING || kind == LUA_TFUNCTION || kind == LUA_TTABLE, 3,
                     "string/function/table");
    luaL_buffinit(L, &b);
    if (anchor) {
        p++;
        lp--;
    }
    prepare(&m, L, src, srcl, p, lp);
    while (n < max) {
        restart(&m);
        const char *e = match(&m, src, p);
        if (e != NULL && e != lastmatch) {
            n++;
            changed = append_replacement(&m, &b, src, e, kind) | changed;
            src = lastmatch = e;
        } else if (src < m.src_end) {
            luaL_addchar(&b, *src++);
        } else {
            break;
        }
        if (anchor) break;
    }
    settle(&m);
    if (!changed) {
        lua_pushvalue(L, 1);
    } else {
        luaL_addlstring(&b, src, (size_t)(m.src_end - src));
        luaL_pushresult(&b);
    }
    lua_pushinteger(L, n);
    return 2;
}

void kh_install_metered_patterns(lua_State *L) {
    static const luaL_Reg functions[] = {
        {"find", kh_find}, {"match", kh_match_fn}, {"gmatch", kh_gmatch_fn}, {"gsub", kh_gsub}, {NULL, NULL}};
    for (const luaL_Reg *f = functions; f->name; f++) {
        kh_pushtext(L, f->name);
        lua_pushcfunction(L, f->func);
        lua_rawset(L, -3);
    }
}
