// libsqlite3, loaded when a wallet or ledger file is first opened (see CKeyhostLoader.h).
#include "Loader.h"
#include <sqlite3.h>

static kh_library sqlite = {"libsqlite3.so.0", "libsqlite3-0", NULL};

KH_FORWARD(sqlite, int, sqlite3_open_v2, (const char *filename, sqlite3 **db, int flags, const char *vfs), (filename, db, flags, vfs))
KH_FORWARD(sqlite, int, sqlite3_close_v2, (sqlite3 *db), (db))
KH_FORWARD(sqlite, int, sqlite3_busy_timeout, (sqlite3 *db, int ms), (db, ms))
KH_FORWARD(sqlite, int, sqlite3_extended_result_codes, (sqlite3 *db, int onoff), (db, onoff))
KH_FORWARD(sqlite, int, sqlite3_get_autocommit, (sqlite3 *db), (db))
KH_FORWARD(sqlite, sqlite3_int64, sqlite3_changes64, (sqlite3 *db), (db))
KH_FORWARD(sqlite, const char *, sqlite3_errmsg, (sqlite3 *db), (db))
KH_FORWARD(sqlite, const char *, sqlite3_errstr, (int code), (code))
KH_FORWARD(sqlite, int, sqlite3_extended_errcode, (sqlite3 *db), (db))

KH_FORWARD(sqlite, int, sqlite3_prepare_v2, (sqlite3 *db, const char *sql, int bytes, sqlite3_stmt **statement, const char **tail),
           (db, sql, bytes, statement, tail))
KH_FORWARD(sqlite, int, sqlite3_prepare_v3,
           (sqlite3 *db, const char *sql, int bytes, unsigned int flags, sqlite3_stmt **statement, const char **tail),
           (db, sql, bytes, flags, statement, tail))
KH_FORWARD(sqlite, int, sqlite3_step, (sqlite3_stmt *statement), (statement))
KH_FORWARD(sqlite, int, sqlite3_reset, (sqlite3_stmt *statement), (statement))
KH_FORWARD(sqlite, int, sqlite3_finalize, (sqlite3_stmt *statement), (statement))
KH_FORWARD(sqlite, int, sqlite3_clear_bindings, (sqlite3_stmt *statement), (statement))
KH_FORWARD(sqlite, const char *, sqlite3_sql, (sqlite3_stmt *statement), (statement))
KH_FORWARD(sqlite, sqlite3 *, sqlite3_db_handle, (sqlite3_stmt *statement), (statement))

KH_FORWARD(sqlite, int, sqlite3_bind_parameter_count, (sqlite3_stmt *statement), (statement))
KH_FORWARD(sqlite, int, sqlite3_bind_null, (sqlite3_stmt *statement, int index), (statement, index))
KH_FORWARD(sqlite, int, sqlite3_bind_int64, (sqlite3_stmt *statement, int index, sqlite3_int64 value), (statement, index, value))
KH_FORWARD(sqlite, int, sqlite3_bind_double, (sqlite3_stmt *statement, int index, double value), (statement, index, value))
KH_FORWARD(sqlite, int, sqlite3_bind_zeroblob, (sqlite3_stmt *statement, int index, int bytes), (statement, index, bytes))
KH_FORWARD(sqlite, int, sqlite3_bind_blob64,
           (sqlite3_stmt *statement, int index, const void *bytes, sqlite3_uint64 count, void (*destructor)(void *)),
           (statement, index, bytes, count, destructor))
KH_FORWARD(sqlite, int, sqlite3_bind_text64,
           (sqlite3_stmt *statement, int index, const char *text, sqlite3_uint64 count, void (*destructor)(void *), unsigned char encoding),
           (statement, index, text, count, destructor, encoding))

KH_FORWARD(sqlite, int, sqlite3_column_count, (sqlite3_stmt *statement), (statement))
KH_FORWARD(sqlite, const char *, sqlite3_column_name, (sqlite3_stmt *statement, int column), (statement, column))
KH_FORWARD(sqlite, int, sqlite3_column_type, (sqlite3_stmt *statement, int column), (statement, column))
KH_FORWARD(sqlite, sqlite3_int64, sqlite3_column_int64, (sqlite3_stmt *statement, int column), (statement, column))
KH_FORWARD(sqlite, double, sqlite3_column_double, (sqlite3_stmt *statement, int column), (statement, column))
KH_FORWARD(sqlite, const void *, sqlite3_column_blob, (sqlite3_stmt *statement, int column), (statement, column))
KH_FORWARD(sqlite, const unsigned char *, sqlite3_column_text, (sqlite3_stmt *statement, int column), (statement, column))
KH_FORWARD(sqlite, int, sqlite3_column_bytes, (sqlite3_stmt *statement, int column), (statement, column))
