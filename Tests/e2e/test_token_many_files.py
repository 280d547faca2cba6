"""token import, verify-receipt and verify-proof take many files, as deposit and run take many.

import reads and checks every file before adding any token (as deposit reads all its files first); the verifiers
report each file's verdict and exit 1 when any fails. Before, each took exactly one file ("Unexpected argument").
"""
import json
import subprocess

ISSUER = "11" * 32


def make(keyhost_bin, tmp_path):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state"), "ISSUER_KEY": ISSUER}

    def run(*args, check=True):
        r = subprocess.run([keyhost_bin, *args], cwd=tmp_path, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL)
        if check:
            assert r.returncode == 0, (args, r.stderr)
        return r
    return run


def test_import_and_verify_receipt_take_many_files(keyhost_bin, tmp_path):
    run = make(keyhost_bin, tmp_path)
    holder = json.loads(run("token", "wallet", "init", "--json").stdout)["holder"]
    (tmp_path / "p.lua").write_text("local t = ...\nt.emit { ran = t.token.value }\n")
    for name, value in (("a.tok", "1"), ("b.tok", "2")):
        run("token", "issue", "--program", "p.lua", "--value", value, "--unit", "EUR-cent", "--to", holder,
            "--issuer-key-env", "ISSUER_KEY", "-o", name)
    imported = json.loads(run("token", "import", "a.tok", "b.tok", "--json").stdout)["imported"]
    assert [row["result"] for row in imported] == ["added", "added"]
    ids = [row["id"] for row in imported]
    for n, token in enumerate(ids):
        run("token", "run", token, "--receipt", f"r{n}.rcpt")
    r = run("token", "verify-receipt", "r0.rcpt", "r1.rcpt", "--json")
    results = json.loads(r.stdout)["results"]
    assert [(x["file"], x["valid"]) for x in results] == [("r0.rcpt", True), ("r1.rcpt", True)]
    # A receipt that cannot be read is reported in its place; the other is still judged; exit 1.
    (tmp_path / "bad.rcpt").write_text("khrcpt1:not-a-receipt\n")
    r = run("token", "verify-receipt", "r0.rcpt", "bad.rcpt", "--json", check=False)
    assert r.returncode == 1, r.stderr
    results = json.loads(r.stdout)["results"]
    assert results[0]["valid"] is True and results[1]["file"] == "bad.rcpt" and results[1]["valid"] is False
    assert results[1]["error"]["kind"] != "failed"
    # One bad file refuses the whole import: nothing of the good one is added.
    run("token", "issue", "--program", "p.lua", "--value", "3", "--unit", "EUR-cent", "--to", holder,
        "--issuer-key-env", "ISSUER_KEY", "-o", "c.tok")
    (tmp_path / "junk.tok").write_text("khtok1:junk\n")
    r = run("token", "import", "c.tok", "junk.tok", check=False)
    assert r.returncode == 1
    listed = json.loads(run("token", "list", "--json").stdout)["tokens"]
    assert len(listed) == 2
