// The deterministic sandbox's allocator for the objects Lua hashes by address.
//
// A table, closure, userdata or coroutine used as a table key lands in the
// table by its address (lstring.h's point2uint: the low 32 bits). Which slot it
// lands in decides, after keys were removed, whether a new key reuses a slot or
// makes the table grow, and the size the table grows to decides which border
// `#t` returns. With malloc's addresses that differs between processes, so a
// program could return different lengths on two verifiers.
//
// Here those objects come from an arena whose base is aligned to 4 GiB, handed
// out by a rule that depends only on the sequence of requests: free lists by
// size class, then a bump pointer. A run makes the same requests in every
// process (the collector is driven by allocation sizes, not time), so every
// such object has the same low 32 bits everywhere. Strings, arrays and stacks
// are hashed by content or not at all, and stay with malloc.
#include "Metering.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define KH_ARENA_ALIGN ((size_t)1 << 32)
#define KH_ARENA_STEP ((size_t)1 << 20)  // made writable this much at a time
#define KH_SMALL_MAX 1024                // exact 16-byte classes up to here
#define KH_CLASSES (64 + 56)             // then powers of two from 2 KiB

struct kh_arena {
    char *base;
    size_t size;       // reserved, usable bytes from base
    size_t writable;   // bytes from base that are read-write
    size_t bump;       // bytes from base handed out at least once
    void *free[KH_CLASSES];
};

static int arena_class(size_t n, size_t *block) {
    if (n <= KH_SMALL_MAX) {
        size_t b = n <= 16 ? 16 : (n + 15) & ~(size_t)15;
        *block = b;
        return (int)(b / 16) - 1;
    }
    size_t b = 2 * KH_SMALL_MAX;
    int c = 64;
    while (b < n && c < KH_CLASSES - 1) {
        b <<= 1;
        c++;
    }
    *block = b;
    return b < n ? -1 : c;
}

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

// Reserves `size` bytes at an address whose low 32 bits are zero. First at
// fixed 4 GiB boundaries far above where Linux puts the program, the heap and
// the usual mappings, reserving exactly `size` (the worker's RLIMIT_AS counts
// reservations); if none is free, by reserving 4 GiB more and trimming.
static char *reserve_aligned(size_t size) {
    size_t step = (size + KH_ARENA_ALIGN - 1) & ~(KH_ARENA_ALIGN - 1);
    for (uintptr_t i = 0; i < 64; i++) {
        char *want = (char *)((uintptr_t)0x200000000000ULL + i * step);
        char *got = mmap(want, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
        if (got == want) return got;
        if (got != MAP_FAILED) munmap(got, size); // a kernel without NOREPLACE took it as a hint
        else if (errno != EEXIST) break;
    }
    char *raw = mmap(NULL, size + KH_ARENA_ALIGN, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (raw == MAP_FAILED) return NULL;
    char *base = (char *)(((uintptr_t)raw + KH_ARENA_ALIGN - 1) & ~(uintptr_t)(KH_ARENA_ALIGN - 1));
    if (base > raw) munmap(raw, (size_t)(base - raw));
    size_t tail = (size_t)((raw + size + KH_ARENA_ALIGN) - (base + size));
    if (tail > 0) munmap(base + size, tail);
    return base;
}

size_t kh_arena_reservation(size_t limit) {
    // The cap, what Swift may add while the cap is paused, and what the size
    // classes waste.
    size_t cap = limit != 0 ? limit : ((size_t)1 << 30);
    size_t size = cap + cap / 2 + ((size_t)16 << 20);
    return (size + KH_ARENA_STEP - 1) & ~(KH_ARENA_STEP - 1);
}

// One arena is kept when a state closes, for the process's next state of the
// same size: reserving, faulting in and unmapping its pages again was a tenth
// of a short token run. It is zeroed up to its bump pointer first (every byte
// any object of the closed state ever had), so the next state finds what a
// fresh mapping would hold, at the same low 32 bits. One that grew past
// KH_KEEP_MAX is unmapped instead: zeroing it would cost more than faulting a
// fresh one in, and it would keep its memory.
#define KH_KEEP_MAX ((size_t)4 << 20)
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;
static kh_arena *kept;

kh_arena *kh_arena_create(size_t size) {
    size = (size + KH_ARENA_STEP - 1) & ~(KH_ARENA_STEP - 1);
    if (size == 0 || size > ((size_t)1 << 44)) return NULL;
    pthread_mutex_lock(&kept_lock);
    kh_arena *reused = NULL;
    if (kept != NULL && kept->size == size) {
        reused = kept;
        kept = NULL;
    }
    pthread_mutex_unlock(&kept_lock);
    if (reused != NULL) return reused;
    // Only reserved: PROT_NONE costs no memory and counts against no overcommit
    // limit; pages become writable as the bump pointer reaches them.
    char *base = reserve_aligned(size);
    if (base == NULL) return NULL;
    kh_arena *a = calloc(1, sizeof *a);
    if (a == NULL) {
        munmap(base, size);
        return NULL;
    }
    a->base = base;
    a->size = size;
    return a;
}

void kh_arena_destroy(kh_arena *a) {
    if (a == NULL) return;
    if (a->bump <= KH_KEEP_MAX) {
        explicit_bzero(a->base, a->bump);
        a->bump = 0;
        memset(a->free, 0, sizeof a->free);
        pthread_mutex_lock(&kept_lock);
        if (kept == NULL) {
            kept = a;
            a = NULL;
        }
        pthread_mutex_unlock(&kept_lock);
        if (a == NULL) return;
    }
    munmap(a->base, a->size);
    free(a);
}

int kh_arena_owns(const kh_arena *a, const void *p) {
    return a != NULL && (const char *)p >= a->base && (const char *)p < a->base + a->size;
}

void *kh_arena_take(kh_arena *a, size_t n) {
    size_t block;
    int c = arena_class(n, &block);
    if (c < 0) return NULL;
    void *p = a->free[c];
    if (p != NULL) {
        memcpy(&a->free[c], p, sizeof(void *));
        return p;
    }
    if (block > a->size - a->bump) return NULL;
    if (a->bump + block > a->writable) {
        size_t want = (a->bump + block + KH_ARENA_STEP - 1) & ~(KH_ARENA_STEP - 1);
        if (want > a->size) want = a->size;
        if (mprotect(a->base + a->writable, want - a->writable, PROT_READ | PROT_WRITE) != 0) return NULL;
        a->writable = want;
    }
    p = a->base + a->bump;
    a->bump += block;
    return p;
}

void kh_arena_give(kh_arena *a, void *p, size_t n) {
    size_t block;
    int c = arena_class(n, &block);
    if (c < 0) return; // cannot have come from here
    memcpy(p, &a->free[c], sizeof(void *));
    a->free[c] = p;
}

int kh_arena_kept_is_clear(void) {
    pthread_mutex_lock(&kept_lock);
    int clear = -1;
    if (kept != NULL) {
        clear = kept->bump == 0;
        for (int c = 0; c < KH_CLASSES && clear; c++) clear = kept->free[c] == NULL;
        // Every byte that was ever writable: a closed state's objects lay below its bump pointer.
        for (size_t i = 0; i < kept->writable && clear; i++) clear = kept->base[i] == 0;
    }
    pthread_mutex_unlock(&kept_lock);
    return clear;
}
