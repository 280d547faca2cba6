"""One unreadable token row in the wallet file (edited with Python's sqlite3, as a bad disk block or a
careless hand would) is reported and set aside: `wallet info` counts it, `list` shows it as damaged with
the reason, it never runs, and the other tokens list and run as before."""
import json
import sqlite3
import subprocess

import pytest

ISSUER = "0b432b2677937381aef05bb02a66ecd012773062cf3fa2549e44f58ed2401710"
PROGRAM = "local t = ...\nt.emit { value = t.token.value }\n"


@pytest.fixture
def wallet(keyhost_bin, tmp_path):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "ISSUER": ISSUER}
    path = str(tmp_path / "wallet.db")

    def keyhost(*args, with_wallet=True):
        full = [keyhost_bin, *args] + (["--wallet", path] if with_wallet else [])
        return subprocess.run(full, capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path)

    out = keyhost("token", "wallet", "init", "--json")
    assert out.returncode == 0, out.stderr
    holder = json.loads(out.stdout)["holder"]
    (tmp_path / "p.lua").write_text(PROGRAM)
    lines = []
    for value in ("7", "8", "9"):
        out = keyhost("token", "issue", "--program", "p.lua", "--value", value, "--unit", "pt", "--to", holder,
                      "--issuer-key-env", "ISSUER", with_wallet=False)
        assert out.returncode == 0, out.stderr
        lines.append(out.stdout.strip())
    (tmp_path / "batch.tok").write_text("\n".join(lines) + "\n")
    out = keyhost("token", "import", "batch.tok")
    assert out.returncode == 0, out.stderr
    listed = json.loads(keyhost("token", "list", "--json").stdout)["tokens"]
    ids = {t["value"]: t["id"] for t in listed}
    return keyhost, path, ids


def damage(path, token_id, column, value):
    db = sqlite3.connect(path)
    try:
        db.execute("PRAGMA ignore_check_constraints = ON")  # as a hand editing the file would
        db.execute(f"UPDATE tokens SET {column} = ? WHERE id = ?", (value, bytes.fromhex(token_id)))
        db.commit()
    finally:
        db.close()


@pytest.mark.parametrize("column,value", [("encoded", bytes.fromhex("deadbeef")), ("state", "MISLAID"), ("transfers", b"\x01")])
def test_a_damaged_row_is_set_aside_and_the_rest_stays_usable(wallet, column, value):
    keyhost, path, ids = wallet
    bad, good, other = ids[8], ids[7], ids[9]
    damage(path, bad, column, value)

    info = keyhost("token", "wallet", "info")
    assert info.returncode == 0, info.stderr
    assert "tokens      2 held, 0 pending, 0 spent, 1 damaged (set aside; 'keyhost token list' says why)" in info.stdout
    counts = json.loads(keyhost("token", "wallet", "info", "--json").stdout)["tokens"]
    assert counts == {"held": 2, "pending": 0, "spent": 0, "damaged": 1}

    listed = keyhost("token", "list")
    assert listed.returncode == 0, listed.stderr
    assert f"{good}  HELD" in listed.stdout and f"{other}  HELD" in listed.stdout
    assert f"{bad}  DAMAGED  its " in listed.stdout
    rows = json.loads(keyhost("token", "list", "--json").stdout)["tokens"]
    damaged = [r for r in rows if r["state"] == "damaged"]
    assert [r["id"] for r in damaged] == [bad] and damaged[0]["reason"].startswith("its ")
    assert sorted(r["id"] for r in rows if r["state"] == "held") == sorted([good, other])

    # The good ones run; the damaged one is refused by name, and stays in the file as it was.
    ran = keyhost("token", "run", good)
    assert ran.returncode == 0, ran.stderr
    refused = keyhost("token", "run", bad[:12])
    assert refused.returncode == 1
    assert f"token {bad[:12]}… is damaged and set aside: its " in refused.stderr, refused.stderr
    ran = keyhost("token", "run", other[:8])
    assert ran.returncode == 0, ran.stderr
    counts = json.loads(keyhost("token", "wallet", "info", "--json").stdout)["tokens"]
    assert counts == {"held": 0, "pending": 0, "spent": 2, "damaged": 1}
