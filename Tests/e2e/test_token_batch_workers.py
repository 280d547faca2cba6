"""The workers of `keyhost token run ID…` are forked from keyhost before it opens the wallet or reads
a secret (no exec, no second start-up). Looked at from outside while they wait for work: each holds
descriptors 0-2 only, has no environment left (its copy of the strings wiped, not just the list),
handles no signal of keyhost's and blocks none, exactly as an exec'd worker starts."""
import json
import os
import subprocess

SETUP = """
local token, ec, hex = require "keyhost.token", require "keyhost.ec", require "keyhost.hex"
local issuer = ec.private_key(hex.decode(string.rep("41", 32)))
local w <close> = token.wallet.create(arg[1])
local texts = {}
for i = 1, tonumber(arg[2]) do
  -- fail-first: the first token fails at once and the others take a while (the lanes are still at
  -- work when the test looks at them).
  local slow = arg[3] == "fail-first" and "local n = 0 for i = 1, 300000 do n = n + i end " or ""
  local program = (i == 1 and arg[3] == "fail-first") and "error('refused')" or "local t = ... " .. slow .. "t.emit(t.token.value)"
  texts[i] = token.issue { program = program, value = i, unit = "pt",
                           to = w:holder().public_key, issuer_key = issuer }
end
for _, row in ipairs(w:import(table.concat(texts, "\\n"))) do print(hex.encode(row.id)) end
"""

SECRET = "4921-not-a-real-pin-7f3a"


def children(pid):
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            out.append(int(entry))
    return out


def settled(pid):
    """The worker's descriptors once it has finished becoming a worker (0-2 are set up last)."""
    try:
        return sorted(int(fd) for fd in os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None


def status_mask(pid, name):
    with open(f"/proc/{pid}/status") as f:
        line = next(l for l in f if l.startswith(name + ":"))
    return int(line.split()[1], 16)


def blocked_batch(keyhost_bin, tmp_path, *setup):
    """A wallet of 120 tokens and `keyhost token run` of all of them, its output unread, so that it
    (and its workers) wait for the test; with a descriptor and a secret-looking variable to inherit."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    (tmp_path / "setup.lua").write_text(SETUP)
    wallet = str(tmp_path / "w.db")
    made = subprocess.run([keyhost_bin, "run", "setup.lua", wallet, "120", *setup], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert made.returncode == 0, made.stderr
    ids = made.stdout.split()
    assert len(ids) == 120
    leaked = os.open(str(tmp_path / "setup.lua"), os.O_RDONLY)  # inherited by keyhost, not close-on-exec
    os.set_inheritable(leaked, True)
    try:
        # 120 JSON results are far more than a pipe holds, so keyhost blocks in its output.
        proc = subprocess.Popen([keyhost_bin, "token", "run", "--wallet", wallet, *ids, "--json"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env={**env, "KEYHOST_PIN": SECRET}, cwd=tmp_path, pass_fds=(leaked,))
    finally:
        os.close(leaked)
    return proc, ids


def bare_workers(proc, count):
    """`count` settled workers of `proc` (waits for them), each checked to be as bare as an exec'd worker."""
    workers = []
    while len(workers) < count and proc.poll() is None:
        workers = [c for c in children(proc.pid) if settled(c) == [0, 1, 2]]
    assert len(workers) == count, f"keyhost's children: {children(proc.pid)}"
    for worker in workers:
        with open(f"/proc/{worker}/environ", "rb") as f:
            environment = f.read()
        assert SECRET.encode() not in environment and b"KEYHOST_PIN" not in environment and environment.strip(b"\0") == b""
        assert status_mask(worker, "SigCgt") == 0 and status_mask(worker, "SigBlk") == 0
        assert os.readlink(f"/proc/{worker}/fd/2") == "/dev/null"
    return workers


def command_line(pid):
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        return f.read()


def finish(proc):
    try:
        return proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_batch_workers_are_forked_bare(keyhost_bin, tmp_path):
    proc, ids = blocked_batch(keyhost_bin, tmp_path)
    try:
        workers = bare_workers(proc, 2)
        for worker in workers:
            assert command_line(worker) == command_line(proc.pid)  # a fork of keyhost, not a new program
    finally:
        out, err = finish(proc)
    assert proc.returncode == 0, err
    results = json.loads(out)
    assert [r["token_id"] for r in results] == ids
    assert sorted(r["effects"][0] for r in results) == list(range(1, 121))


def test_a_replaced_worker_is_execd_not_forked(keyhost_bin, tmp_path):
    # The first token fails at once: its worker is retired, and the lane's next worker must not be a
    # fork of a keyhost that has by then read the holder's key.
    proc, ids = blocked_batch(keyhost_bin, tmp_path, "fail-first")
    try:
        # Until the lanes' threads have come and gone (then keyhost waits on its output, and a worker a
        # lane thread started is gone with it).
        replacement, lanes_seen = None, False
        while replacement is None and proc.poll() is None:
            threads = len(os.listdir(f"/proc/{proc.pid}/task"))
            if lanes_seen and threads == 1:
                break
            lanes_seen = lanes_seen or threads > 1
            for child in children(proc.pid):
                try:
                    line = command_line(child).split(b"\0")
                except OSError:
                    continue  # a worker that exited between the listing and the read
                if line[1:4] == [b"token", b"_worker", b"--serve"] and settled(child) == [0, 1, 2]:
                    replacement = child
        assert replacement is not None, "no exec'd replacement worker was seen while the lanes ran"
        with open(f"/proc/{replacement}/environ", "rb") as f:
            assert f.read() == b""
    finally:
        out, err = finish(proc)
    assert proc.returncode == 1, err
    results = json.loads(out)
    assert "refused" in results[0]["error"]["message"]
    assert all("error" not in r for r in results[1:])


LOUD = """
local token, ec, hex = require "keyhost.token", require "keyhost.ec", require "keyhost.hex"
local issuer = ec.private_key(hex.decode(string.rep("41", 32)))
local w <close> = token.wallet.create(arg[1])
local texts = {}
-- Tokens whose runs fail with errors of 70 KB, 200 KB and 16 MB, between tokens that complete.
for i, n in ipairs { 0, 70000, 0, 200000, 16 * 1024 * 1024, 0 } do
  local program = n == 0 and "local t = ... t.emit(t.token.value)" or ("error(string.rep('e', " .. n .. "), 0)")
  texts[i] = token.issue { program = program, value = i, unit = "pt", to = w:holder().public_key, issuer_key = issuer }
end
for _, row in ipairs(w:import(table.concat(texts, "\\n"))) do print(hex.encode(row.id)) end
"""


def test_long_errors_in_a_batch_are_cut_and_the_others_commit(keyhost_bin, tmp_path):
    """A run failing with an error of any length never stalls its worker: `keyhost token run ID…` ends,
    the failures come back cut, and the tokens that completed are spent."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    wallet = str(tmp_path / "w.db")
    script = tmp_path / "setup.lua"
    script.write_text(LOUD)
    ids = subprocess.run([keyhost_bin, "run", str(script), wallet], capture_output=True, text=True, env=env,
                         check=True, timeout=120).stdout.split()
    for batch in (ids, [ids[3]]):
        out = subprocess.run([keyhost_bin, "token", "run", *batch, "--wallet", wallet, "--json"], capture_output=True,
                             text=True, env=env, timeout=300)
        assert out.returncode == 1, out.stderr
        results = json.loads(out.stdout) if len(batch) > 1 else None
        if results is None:
            error = json.loads(out.stderr)["error"]
            assert error["kind"] == "program" and " bytes, cut to the first" in error["message"], error
            continue
        assert ["error" not in r for r in results] == [True, False, True, False, False, True], results
        for r, n in zip(results, [0, 70000, 0, 200000, 16 * 1024 * 1024, 0]):
            if n:
                assert len(r["error"]["message"].encode()) < 10000
                if r["error"]["kind"] == "memory_limit" and n > 1000000:
                    continue  # 16 MB and its traceback may reach the wallet's 64 MiB cap first
                assert r["error"]["kind"] == "program" and " bytes, cut to the first" in r["error"]["message"], r
