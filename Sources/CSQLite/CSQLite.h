#include <sqlite3.h>

// SQLITE_TRANSIENT is a macro casting -1 to a function pointer, which Swift cannot import: binding
// with it makes SQLite copy the bytes before sqlite3_bind_* returns, so a Swift buffer that lives
// only for the call is safe to pass.
static inline sqlite3_destructor_type csqlite_transient(void) { return SQLITE_TRANSIENT; }
