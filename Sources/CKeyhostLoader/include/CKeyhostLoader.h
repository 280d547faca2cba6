#ifndef CKEYHOST_LOADER_H
#define CKEYHOST_LOADER_H

// keyhost loads the C libraries that a plain `keyhost run` never touches (libcrypto, libssl,
// libsqlite3, libedit) when one of their functions is first called, not at every start: loading
// libcrypto alone costs about as much as Lua's whole start-up. Each of those libraries' functions
// that keyhost calls is defined in this target under its own name (OpenSSL.c, SQLite.c, EditLine.c)
// and forwards to the real one, so the Swift code calls the C API as declared in its header.
//
// Nothing here is called from Swift: the targets that use those libraries depend on this one so
// that its definitions are linked in. Tests/e2e/test_lazy_libraries.py watches the loading.

#endif
