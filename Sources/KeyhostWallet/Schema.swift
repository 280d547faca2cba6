import KeyhostSQLite

/// The wallet's tables, created and migrated by one `Migrator`. The constraints are the
/// state machine's last line of defence: even a buggy caller with raw SQL cannot make a SPENT
/// token without its run, nor a run whose token is not SPENT.
enum Schema {
    /// The schema this code writes, also stored as `PRAGMA user_version` so `sqlite3 wallet
    /// 'PRAGMA user_version'` shows it without knowing the `grdb_migrations` table.
    static let version = 2

    static var migrator: Migrator {
        // Applied migrations are recorded where GRDB recorded them while keyhost used it, with the
        // same identifiers: wallets made then open without running a migration again.
        var migrator = Migrator(table: "grdb_migrations")
        migrator.register("v1") { db in
            try db.executeScript("""
                CREATE TABLE settings (
                    name  TEXT PRIMARY KEY NOT NULL,
                    value BLOB NOT NULL
                ) WITHOUT ROWID;

                CREATE TABLE trusted_issuers (
                    issuer     BLOB PRIMARY KEY NOT NULL CHECK (length(issuer) = 32),
                    trusted_at INTEGER NOT NULL
                ) WITHOUT ROWID;

                -- Tokens and runs are rowid tables: their rows hold blobs up to hundreds of KiB,
                -- which WITHOUT ROWID tables store badly.
                -- One row per token. The owner columns say who holds a PENDING token; spent_at and
                -- receipt_id say how it was spent. Which are set is fixed by the state.
                CREATE TABLE tokens (
                    id            BLOB PRIMARY KEY NOT NULL CHECK (length(id) = 32),
                    encoded       BLOB NOT NULL,
                    issuer        BLOB NOT NULL CHECK (length(issuer) = 32),
                    imported_at   INTEGER NOT NULL,
                    state         TEXT NOT NULL DEFAULT 'HELD' CHECK (state IN ('HELD', 'PENDING', 'SPENT')),
                    run_id        BLOB CHECK (run_id IS NULL OR length(run_id) = 16),
                    owner_pid     INTEGER,
                    owner_start   INTEGER,
                    owner_boot    TEXT,
                    pending_since INTEGER,
                    spent_at      INTEGER,
                    receipt_id    BLOB,
                    CHECK ((state = 'PENDING') = (owner_pid IS NOT NULL AND owner_start IS NOT NULL
                                                  AND owner_boot IS NOT NULL AND pending_since IS NOT NULL)),
                    CHECK ((state = 'PENDING' OR state = 'SPENT') = (run_id IS NOT NULL)),
                    CHECK ((state = 'SPENT') = (spent_at IS NOT NULL AND receipt_id IS NOT NULL)),
                    -- The parent key of runs(token_id, token_state) below.
                    UNIQUE (id, state),
                    -- A SPENT token has its run (receipt_id is NULL, so unchecked, in the other states).
                    FOREIGN KEY (id, receipt_id) REFERENCES runs (token_id, receipt_id) DEFERRABLE INITIALLY DEFERRED
                );

                -- The committed run of each SPENT token: its effects and receipt, written in the same
                -- transaction that makes the token SPENT, and never changed after.
                CREATE TABLE runs (
                    token_id    BLOB PRIMARY KEY NOT NULL,
                    -- Always 'SPENT': with the foreign key it says a run exists only for a SPENT token
                    -- (checked at commit, so effects without SPENT cannot be committed).
                    token_state TEXT NOT NULL DEFAULT 'SPENT' CHECK (token_state = 'SPENT'),
                    run_id      BLOB NOT NULL UNIQUE CHECK (length(run_id) = 16),
                    receipt_id  BLOB NOT NULL UNIQUE,
                    receipt     BLOB NOT NULL,
                    effects     BLOB NOT NULL,
                    owner_pid   INTEGER NOT NULL,
                    started_at  INTEGER NOT NULL,
                    spent_at    INTEGER NOT NULL,
                    UNIQUE (token_id, receipt_id),
                    FOREIGN KEY (token_id, token_state) REFERENCES tokens (id, state) DEFERRABLE INITIALLY DEFERRED
                );

                CREATE TRIGGER runs_are_final_update BEFORE UPDATE ON runs
                BEGIN SELECT RAISE(ABORT, 'a committed run is never changed'); END;
                CREATE TRIGGER runs_are_final_delete BEFORE DELETE ON runs
                BEGIN SELECT RAISE(ABORT, 'a committed run is never deleted'); END;
                CREATE TRIGGER spent_is_final BEFORE UPDATE OF state ON tokens
                WHEN OLD.state = 'SPENT' AND NEW.state IS NOT 'SPENT'
                BEGIN SELECT RAISE(ABORT, 'a spent token stays spent'); END;

                CREATE INDEX tokens_by_import ON tokens (imported_at, id);
                CREATE INDEX tokens_pending ON tokens (state) WHERE state = 'PENDING';

                PRAGMA user_version = 1;
                """)
        }
        // Payments (docs/payments.md): a token's transfer chain, the exchange keys this wallet
        // handed out, its requests, and the chain each transferring run handed on, written with
        // that run so a payment can always be printed again.
        migrator.register("v2") { db in
            try db.executeScript("""
                ALTER TABLE tokens ADD COLUMN transfers BLOB;

                CREATE TABLE exchange_keys (
                    idx        INTEGER PRIMARY KEY NOT NULL CHECK (idx >= 0),
                    public     BLOB NOT NULL UNIQUE CHECK (length(public) = 33),
                    request_id BLOB,
                    issued_at  INTEGER NOT NULL,
                    used_at    INTEGER,
                    token_id   BLOB,
                    CHECK ((used_at IS NULL) = (token_id IS NULL))
                );

                CREATE TABLE requests (
                    id         BLOB PRIMARY KEY NOT NULL CHECK (length(id) = 32),
                    encoded    BLOB NOT NULL,
                    created_at INTEGER NOT NULL
                ) WITHOUT ROWID;

                CREATE TABLE outgoing (
                    token_id   BLOB PRIMARY KEY NOT NULL REFERENCES runs (token_id),
                    request_id BLOB NOT NULL,
                    chain      BLOB NOT NULL
                );
                CREATE INDEX outgoing_by_request ON outgoing (request_id);
                CREATE TRIGGER outgoing_is_final BEFORE UPDATE ON outgoing
                BEGIN SELECT RAISE(ABORT, 'a transfer that was made is never changed'); END;

                PRAGMA user_version = 2;
                """)
        }
        return migrator
    }
}
