"""Ctrl-C stops long keyhost calls, not only Lua code: in `keyhost run` the script sees "interrupted" (its <close>
variables run) and keyhost exits 130; a second Ctrl-C during a call that cannot notice the first ends keyhost at once.

The deadlines below are generous on purpose (speed is measured by scripts/bench): without interruption each of these
calls would run for minutes, so finishing at all is the behaviour under test.
"""
import os
import signal
import socket
import subprocess
import threading
import time

import pytest

MNEMONIC = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"


def start(keyhost_bin, tmp_path, script):
    path = tmp_path / "long.lua"
    path.write_text(script)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    return subprocess.Popen([keyhost_bin, "run", str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def wait_for_line(process, text, timeout=30):
    deadline = time.time() + timeout
    line = ""
    while time.time() < deadline:
        line = process.stdout.readline()
        if text in line:
            return
    raise AssertionError(f"never saw {text!r}; last line {line!r}")


def interrupt_once_started(process):
    """Ctrl-C once the process printed "started" (well inside its long call); its output and error."""
    try:
        wait_for_line(process, "started")
        time.sleep(0.5)  # well inside the long call, which runs for minutes
        process.send_signal(signal.SIGINT)
        return process.communicate(timeout=20)
    finally:
        process.kill()


CLOSER = """
local closer <close> = setmetatable({}, { __close = function() io.stdout:write("closed\\n") io.stdout:flush() end })
print("started") io.stdout:flush()
"""


@pytest.mark.parametrize("call", [
    # A million addresses per call, forever: minutes of Swift work across all cores.
    'local hd = require "keyhost.hd"\n'
    f'local node = hd.from_mnemonic("{MNEMONIC}"):derive("m/84\'/0\'/0\'")\n'
    "while true do node:addresses(0, 0, 1000000) end",
    # PBKDF2 with two billion rounds: about an hour in one call.
    'local hash = require "keyhost.hash"\nhash.pbkdf2_sha512("password", "salt", 2000000000, 64)',
])
def test_ctrl_c_stops_a_long_call_in_run(keyhost_bin, tmp_path, call):
    process = start(keyhost_bin, tmp_path, CLOSER + call)
    out, err = interrupt_once_started(process)
    assert process.returncode == 130, err
    assert "interrupted" in err
    assert "closed" in out  # the script's <close> variable ran: the error unwound through Lua


def test_a_script_can_catch_the_interruption(keyhost_bin, tmp_path):
    script = ('local hash = require "keyhost.hash"\nprint("started") io.stdout:flush()\n'
              'local ok, err = pcall(hash.pbkdf2_sha256, "p", "s", 2000000000, 32)\n'
              'print("caught", ok, tostring(err):match("interrupted") ~= nil)\n'
              'print("after", hash.pbkdf2_sha256("p", "s", 200000, 4) ~= nil)\n')
    process = start(keyhost_bin, tmp_path, script)
    out, err = interrupt_once_started(process)
    assert "caught\tfalse\ttrue" in out, err
    # The request was consumed: a later long call runs to its end.
    assert "after\ttrue" in out, err


def test_a_second_ctrl_c_ends_a_call_that_cannot_notice_the_first(keyhost_bin, tmp_path):
    # An Esplora server that accepts and never answers: the scan blocks in a read that no flag can reach.
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held = []
    threading.Thread(target=lambda: held.extend(server.accept() for _ in range(8)), daemon=True).start()
    url = f"http://127.0.0.1:{server.getsockname()[1]}"
    script = (CLOSER + 'local discovery = require "keyhost.discovery"\n'
              f'discovery.scan {{ mnemonic = "{MNEMONIC}", source = "esplora:{url}", gap_limit = 2 }}\n')
    process = start(keyhost_bin, tmp_path, script)
    try:
        wait_for_line(process, "started")
        time.sleep(0.5)
        process.send_signal(signal.SIGINT)
        time.sleep(0.3)
        assert process.poll() is None  # the first one waits for the call to notice it
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=20)
    finally:
        process.kill()
        server.close()
    assert process.returncode == 130


@pytest.mark.parametrize("front", [["eval"], ["-e"]])
def test_ctrl_c_in_eval_and_dash_e_runs_handlers_and_exits_130(keyhost_bin, tmp_path, front):
    # As in `keyhost run`: the error unwinds through Lua (the <close> variable runs), then keyhost exits 130.
    code = CLOSER + 'local hash = require "keyhost.hash"\nhash.pbkdf2_sha512("password", "salt", 2000000000, 64)'
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    process = subprocess.Popen([keyhost_bin, *front, code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    out, err = interrupt_once_started(process)
    assert process.returncode == 130, err
    assert "interrupted" in err
    assert "closed" in out


def test_eval_goes_on_when_the_code_catches_ctrl_c(keyhost_bin, tmp_path):
    code = ('local hash = require "keyhost.hash"\nprint("started") io.stdout:flush()\n'
            'local ok, err = pcall(hash.pbkdf2_sha256, "p", "s", 2000000000, 32)\n'
            'return "caught", ok, tostring(err):match("interrupted") ~= nil')
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    process = subprocess.Popen([keyhost_bin, "eval", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    out, err = interrupt_once_started(process)
    assert process.returncode == 0, err
    assert '"caught"\tfalse\ttrue' in out, out
