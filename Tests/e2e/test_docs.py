"""Docs that run: every fenced Lua block in README.md and docs/*.md runs as written with `keyhost run -`.

A block that is deliberately a fragment (it needs a network service, a real card, or is a piece of a larger
script) says so in its info string: ```lua fragment — and is skipped. Everything else must exit 0.
"""
import os
import pathlib
import re
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^```(\S*)([^\n]*)\n(.*?)^```\s*$", re.S | re.M)

# The secrets the examples take from the environment, as a user would set them.
DOC_ENV = {
    "KEYHOST_PIN": "123456",
    "KEYHOST_PUK": "123456789012",
    "KEYHOST_PAIRING_PASSWORD": "KeycardTest",
    "KEYHOST_MNEMONIC": "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about",
}


def doc_files():
    return [REPO / "README.md"] + sorted((REPO / "docs").glob("*.md"))


def blocks(language):
    """(id, info words, code) of every fenced block in `language`."""
    found = []
    for path in doc_files():
        text = path.read_text()
        for match in FENCE.finditer(text):
            if match.group(1) != language:
                continue
            line = text.count("\n", 0, match.start()) + 1
            found.append((f"{path.relative_to(REPO)}:{line}", match.group(2).split(), match.group(3)))
    return found


def env_for(tmp_path):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state")}
    env.update(DOC_ENV)
    return env


LUA_BLOCKS = blocks("lua")


def test_the_docs_have_lua_blocks():
    # The extraction itself must find something, or every test below would pass vacuously.
    assert len(LUA_BLOCKS) >= 10
    assert any("fragment" not in info for _, info, _ in LUA_BLOCKS)


@pytest.mark.parametrize("where,info,code", LUA_BLOCKS, ids=[b[0] for b in LUA_BLOCKS])
def test_lua_block_runs(keyhost_bin, tmp_path, where, info, code):
    if "fragment" in info:
        pytest.skip("marked as a fragment")
    run = subprocess.run([keyhost_bin, "run", "-"], input=code, capture_output=True, text=True, cwd=REPO,
                         env=env_for(tmp_path), timeout=120)
    assert run.returncode == 0, f"{where} failed:\n{run.stderr}"
