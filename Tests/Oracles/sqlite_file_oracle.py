"""Python's own sqlite3 module (CPython's binding, not keyhost's) reading a file keyhost wrote.

  sqlite_file_oracle.py PATH -> one JSON object: integrity_check, foreign_key_check, journal_mode,
                                user_version, tables (name -> row count) and migrations
                                (the grdb_migrations identifiers, or null without that table)
"""
import json
import sqlite3
import sys


def main():
    db = sqlite3.connect(sys.argv[1])
    try:
        tables = [name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        print(json.dumps({
            "integrity_check": [row[0] for row in db.execute("PRAGMA integrity_check")],
            "foreign_key_check": len(db.execute("PRAGMA foreign_key_check").fetchall()),
            "journal_mode": db.execute("PRAGMA journal_mode").fetchone()[0],
            "user_version": db.execute("PRAGMA user_version").fetchone()[0],
            "tables": {name: db.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0] for name in tables},
            "migrations": [i for (i,) in db.execute("SELECT identifier FROM grdb_migrations ORDER BY rowid")]
            if "grdb_migrations" in tables else None,
        }, sort_keys=True))
    finally:
        db.close()


main()
