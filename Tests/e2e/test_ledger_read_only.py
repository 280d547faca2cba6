"""`keyhost token ledger stats --db sqlite:FILE` only reads: a mistyped path is an error naming it, never a new, empty
ledger that reports 0 (issue 32); a file that is not a ledger is refused and left as it was."""
import json
import os
import subprocess


def stats(keyhost_bin, location, *args):
    return subprocess.run([keyhost_bin, "token", "ledger", "stats", "--db", location, *args], capture_output=True, text=True,
                          timeout=120, env={"PATH": "/usr/bin:/bin"})


def test_stats_of_a_missing_ledger_is_an_error_and_creates_nothing(keyhost_bin, tmp_path):
    typo = tmp_path / "typo.db"
    for args in ([], ["--json"]):
        result = stats(keyhost_bin, f"sqlite:{typo}", *args)
        assert result.returncode == 1 and result.stdout == "", result.stdout
        assert f"there is no ledger at sqlite:{typo}" in result.stderr, result.stderr
        if args:
            assert json.loads(result.stderr)["error"]["kind"] == "location"
    assert list(tmp_path.iterdir()) == []


def test_stats_of_a_file_that_is_no_ledger_leaves_it_alone(keyhost_bin, tmp_path):
    other = tmp_path / "other.db"
    other.write_bytes(b"")
    os.chmod(other, 0o600)
    result = stats(keyhost_bin, f"sqlite:{other}")
    assert result.returncode == 1 and "is not a keyhost ledger" in result.stderr, result.stderr
    assert other.read_bytes() == b"" and [p.name for p in tmp_path.iterdir()] == ["other.db"]
