import os
import pathlib

import pexpect
import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture
def keyhost_bin():
    path = os.environ.get("KEYHOST_BIN", str(REPO / ".build" / "debug" / "keyhost"))
    assert os.access(path, os.X_OK), f"keyhost binary not found at {path}; build it or set KEYHOST_BIN"
    return path


@pytest.fixture
def repl(keyhost_bin, tmp_path):
    """A keyhost REPL on a real pseudo-terminal, with its own history folder."""
    sessions = []

    def start(*args, extra_env=None):
        env = {"PATH": "/usr/bin:/bin", "TERM": "xterm", "HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state")}
        env.update(extra_env or {})
        # The timeout only ends a session that is stuck: a loaded machine answers far sooner.
        child = pexpect.spawn(keyhost_bin, list(args), env=env, encoding="utf-8", timeout=120, dimensions=(40, 200))
        child.expect_exact("> ")
        sessions.append(child)
        return child

    start.state_dir = tmp_path / "state"
    yield start
    for child in sessions:
        child.close(force=True)
