#include "Loader.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void fail(const kh_library *library, const char *what, const char *detail) {
    // No stdio buffering games: this may run inside any call, and the process ends here.
    fprintf(stderr, "keyhost: cannot load %s%s%s: %s\nkeyhost: install the Debian package %s (scripts/bootstrap installs it) and try again\n",
            library->soname, what ? ", function " : "", what ? what : "", detail ? detail : "unknown error", library->package);
    fflush(stderr);
    _exit(127);
}

static void *open_library(kh_library *library) {
    void *handle = atomic_load_explicit(&library->handle, memory_order_acquire);
    if (handle) return handle;
    // dlopen is reference counted and thread-safe: two threads racing here get the same handle.
    // RTLD_NODELETE: keyhost never closes it, and OpenSSL must not be unloaded while its atexit runs.
    handle = dlopen(library->soname, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!handle) fail(library, NULL, dlerror());
    atomic_store_explicit(&library->handle, handle, memory_order_release);
    return handle;
}

void *kh_library_symbol(kh_library *library, const char *name) {
    void *handle = open_library(library);
    dlerror();
    void *symbol = dlsym(handle, name);
    if (!symbol) fail(library, name, dlerror());
    return symbol;
}
