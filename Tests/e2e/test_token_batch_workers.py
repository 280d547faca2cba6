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
  texts[i] = token.issue { program = "local t = ... t.emit(t.token.value)", value = i, unit = "pt",
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


def test_batch_workers_are_forked_bare(keyhost_bin, tmp_path):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    (tmp_path / "setup.lua").write_text(SETUP)
    wallet = str(tmp_path / "w.db")
    made = subprocess.run([keyhost_bin, "run", "setup.lua", wallet, "120"], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert made.returncode == 0, made.stderr
    ids = made.stdout.split()
    assert len(ids) == 120

    leaked = os.open(str(tmp_path / "setup.lua"), os.O_RDONLY)  # inherited by keyhost, not close-on-exec
    os.set_inheritable(leaked, True)
    try:
        # Nobody reads keyhost's output until the workers have been looked at: 120 JSON results are far
        # more than a pipe holds, so keyhost (and with it its workers) waits for this test.
        proc = subprocess.Popen([keyhost_bin, "token", "run", "--wallet", wallet, *ids, "--json"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env={**env, "KEYHOST_PIN": SECRET}, cwd=tmp_path, pass_fds=(leaked,))
    finally:
        os.close(leaked)
    try:
        workers = []
        while len(workers) < 2 and proc.poll() is None:
            workers = [c for c in children(proc.pid) if settled(c) == [0, 1, 2]]
        assert len(workers) == 2, f"keyhost's children: {children(proc.pid)}"
        with open(f"/proc/{proc.pid}/cmdline", "rb") as f:
            command_line = f.read()
        for worker in workers:
            with open(f"/proc/{worker}/cmdline", "rb") as f:
                assert f.read() == command_line  # a fork of keyhost, not a new program
            with open(f"/proc/{worker}/environ", "rb") as f:
                environment = f.read()
            assert SECRET.encode() not in environment and b"KEYHOST_PIN" not in environment and environment.strip(b"\0") == b""
            assert status_mask(worker, "SigCgt") == 0 and status_mask(worker, "SigBlk") == 0
            assert os.readlink(f"/proc/{worker}/fd/2") == "/dev/null"
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    results = json.loads(out)
    assert [r["token_id"] for r in results] == ids
    assert sorted(r["effects"][0] for r in results) == list(range(1, 121))
