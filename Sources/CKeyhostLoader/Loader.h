#ifndef CKEYHOST_LOADER_PRIVATE_H
#define CKEYHOST_LOADER_PRIVATE_H

#include <stdatomic.h>

/// A shared library opened on first use.
typedef struct kh_library {
    const char *soname;   // e.g. "libcrypto.so.3": the ABI the headers we compiled against describe
    const char *package;  // the Debian package that ships it, for the message when it is missing
    _Atomic(void *) handle;
} kh_library;

/// The address of `name` in `library`, loading the library first if needed. Never returns NULL:
/// a missing library or symbol is a broken installation, reported and exited from like the
/// dynamic loader does at start-up (exit status 127).
void *kh_library_symbol(kh_library *library, const char *name);

// The address of the library's own `name`, typed as the header declares it; looked up once and
// cached (dlsym answers the same address to every thread, so a race only repeats the lookup).
#define KH_RESOLVE(library, name)                                                         \
    ({                                                                                    \
        static _Atomic(__typeof__(&name)) cached;                                        \
        __typeof__(&name) fn = atomic_load_explicit(&cached, memory_order_acquire);       \
        if (!fn) {                                                                        \
            fn = (__typeof__(&name))kh_library_symbol(&(library), #name);                 \
            atomic_store_explicit(&cached, fn, memory_order_release);                     \
        }                                                                                 \
        fn;                                                                               \
    })

// Defines `name` with the prototype its header declares (a mismatch does not compile) and forwards
// each call to the library's own `name`.
#define KH_FORWARD(library, ret, name, params, args) \
    ret name params { return KH_RESOLVE(library, name) args; }

#define KH_FORWARD_VOID(library, name, params, args) \
    void name params { KH_RESOLVE(library, name) args; }

#endif
