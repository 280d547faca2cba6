"""Rows of keyhost's own files edited by hand (Python's sqlite3, check constraints off as a careless
editor would have them): each is an error naming the file and the field, exit status 1, never a
Swift trap (a signal)."""
import json
import sqlite3
import subprocess

# The generator point, compressed: a valid public key for a row.
G = bytes.fromhex("0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798")


def run(keyhost_bin, tmp_path, *args):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    return subprocess.run([keyhost_bin, *args], capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path)


def edit(path, sql, *params):
    db = sqlite3.connect(path)
    try:
        db.execute("PRAGMA ignore_check_constraints = ON")
        db.execute(sql, params)
        db.commit()
    finally:
        db.close()


def test_a_ledger_whose_values_sum_below_zero_is_an_error(keyhost_bin, tmp_path):
    path = str(tmp_path / "ledger.db")
    # An issuer's ledger, made as Lua makes one (stats only read a ledger, they never create it).
    out = run(keyhost_bin, tmp_path, "eval", "local token, ec = require 'keyhost.token', require 'keyhost.ec'\n"
              f"local l <close> = token.ledger.open('sqlite:{path}', {{ issuers = {{ ec.generate() }} }})")
    assert out.returncode == 0, out.stderr
    out = run(keyhost_bin, tmp_path, "token", "ledger", "stats", "--db", f"sqlite:{path}")
    assert out.returncode == 0, out.stderr
    edit(path, "INSERT INTO deposits VALUES (?, ?, ?, ?, '1', -5, 0, 'pt', 0, 0)", b"\x01" * 32, b"\x02" * 32, b"x", b"\x03" * 32)
    out = run(keyhost_bin, tmp_path, "token", "ledger", "stats", "--db", f"sqlite:{path}")
    assert out.returncode == 1, (out.returncode, out.stderr)
    assert f"ledger {path}: the values of unit \"pt\" sum to a negative number (fields deposits.value_hi/value_lo): the file is damaged" in out.stderr


def test_an_exchange_key_index_past_31_bits_is_an_error(keyhost_bin, tmp_path):
    path = str(tmp_path / "wallet.db")
    out = run(keyhost_bin, tmp_path, "token", "wallet", "init", "--wallet", path)
    assert out.returncode == 0, out.stderr
    edit(path, "INSERT INTO exchange_keys (idx, public, issued_at) VALUES (?, ?, 0)", 1 << 40, G)
    out = run(keyhost_bin, tmp_path, "token", "keys", "--wallet", path)
    assert out.returncode == 1, (out.returncode, out.stderr)
    assert f"wallet {path}: the exchange key index {(1 << 40) + 1} is outside 0 to 2147483647 (field exchange_keys.idx): the file is damaged" in out.stderr
