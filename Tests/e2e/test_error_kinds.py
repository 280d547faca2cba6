"""Every error a command reports has a kind of its own, and every error line starts "keyhost: ".

`--json` errors used to fall back to the catch-all kind `failed` for anything that was not a structured error (an
unreadable file, an unset variable, a token id that is not there); the parser's own messages started "Error:" while
keyhost's started "keyhost:". docs/json.md lists the kinds.
"""
import json
import subprocess

import pytest

G = "0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798"  # the generator: a valid holder key
WORDS = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"


def run(keyhost_bin, tmp_path, *args, env=None):
    environment = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state")}
    environment.update(env or {})
    return subprocess.run(["setsid", "-w", keyhost_bin, *args], cwd=tmp_path, env=environment, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("args, env, kind", [
    (["eth", "sign-tx", "missing.json"], {"KEYHOST_MNEMONIC": WORDS}, "io"),
    (["psbt", "inspect", "missing.psbt"], {}, "io"),
    (["token", "issue", "--program", "keyhost.cash", "--value", "1", "--unit", "EUR-cent", "--to", G,
      "--issuer-key-env", "NO_SUCH_VARIABLE", "-o", "x.tok"], {}, "no_secret"),
    (["token", "issue", "--program", "no_such_program.lua", "--value", "1", "--unit", "EUR-cent", "--to", G,
      "--issuer-key-env", "K", "-o", "x.tok"], {"K": "11" * 32}, "not_found"),
    (["discover", "--mnemonic-env", "W", "--source", "index:used.txt"], {"W": WORDS.replace("about", "abandon")}, "invalid_mnemonic"),
])
def test_json_errors_have_a_specific_kind(keyhost_bin, tmp_path, args, env, kind):
    (tmp_path / "used.txt").write_text("")
    r = run(keyhost_bin, tmp_path, *args, "--json", env=env)
    assert r.returncode == 1, r.stderr
    error = json.loads(r.stderr)["error"]
    assert error["kind"] == kind, error


@pytest.mark.parametrize("args", [
    ["frobnicate"],
    ["key", "address", "--no-such-option"],
    ["psbt", "sign"],
    ["discover", "--gap-limit", "0", "--source", "index:x", "--xpub", "x"],
])
def test_every_error_line_starts_with_keyhost(keyhost_bin, tmp_path, args):
    r = run(keyhost_bin, tmp_path, *args)
    assert r.returncode == 64, r.stderr
    assert r.stderr.startswith("keyhost: "), r.stderr
    assert "Error:" not in r.stderr
