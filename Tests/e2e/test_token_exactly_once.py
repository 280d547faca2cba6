"""Exactly-once for token runs, checked from outside: kill -9 at every named step and at random
moments, processes racing for one token, tampering. The wallet file is read with Python's sqlite3,
receipts are decoded with cbor2 and their holder signatures checked with coincurve (never keyhost's
own code)."""
import hashlib
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time

import cbor2
import coincurve
import pytest

from conftest import REPO

sys.path.insert(0, str(REPO / "Tests" / "Oracles"))
import chain_oracle as oracle  # noqa: E402  (the receipt and chain encodings, written independently of keyhost)

ISSUER = "0b432b2677937381aef05bb02a66ecd012773062cf3fa2549e44f58ed2401710"
FAILPOINTS = ["before_pending", "after_pending", "after_program", "after_sign", "in_commit", "after_commit"]

# Busy for a while, so that random kills land in every phase of a run, then one record.
PROGRAM = """
local t = ...
local n = 0
for i = 1, (t.args.spin or 0) do n = n + i end
t.emit { token = t.hex.encode(t.token.id), value = t.token.value, spin = n }
"""


class Wallet:
    def __init__(self, keyhost_bin, tmp_path):
        self.bin = keyhost_bin
        self.dir = tmp_path
        self.path = str(tmp_path / "wallet.db")
        self.env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "ISSUER": ISSUER}
        out = self.keyhost("token", "wallet", "init", "--json")
        assert out.returncode == 0, out.stderr
        import json
        self.holder = json.loads(out.stdout)["holder"]
        (tmp_path / "p.lua").write_text(PROGRAM)

    def keyhost(self, *args, env=None, wallet=True):
        full = [self.bin, *args] + (["--wallet", self.path] if wallet else [])
        return subprocess.run(full, capture_output=True, text=True, timeout=60, env={**self.env, **(env or {})}, cwd=self.dir)

    def issue(self, count):
        lines = []
        for _ in range(count):
            out = self.keyhost("token", "issue", "--program", "p.lua", "--value", "7", "--unit", "pt", "--to", self.holder,
                               "--issuer-key-env", "ISSUER", wallet=False)
            assert out.returncode == 0, out.stderr
            lines.append(out.stdout.strip())
        (self.dir / "batch.tok").write_text("\n".join(lines) + "\n")
        out = self.keyhost("token", "import", "batch.tok")
        assert out.returncode == 0, out.stderr
        return [cbor2.loads(b64url(l.split(":", 1)[1]))["token"]["id"].hex() for l in lines]

    def run(self, token_id, *extra, env=None):
        return self.keyhost("token", "run", token_id, *extra, env=env)

    def rows(self):
        db = sqlite3.connect(self.path)
        try:
            tokens = {r[0].hex(): (r[1], r[2]) for r in db.execute("SELECT id, state, receipt_id FROM tokens")}
            runs = {}
            for token_id, receipt_id, receipt, effects in db.execute("SELECT token_id, receipt_id, receipt, effects FROM runs"):
                runs.setdefault(token_id.hex(), []).append((receipt_id, receipt, effects))
            return tokens, runs
        finally:
            db.close()


def b64url(text):
    import base64
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


tagged, der = oracle.tagged, oracle.der


def check_receipt(receipt_bytes, effects_bytes, token_id):
    """The stored receipt, decoded and checked independently."""
    envelope = cbor2.loads(receipt_bytes)
    statement = envelope["receipt"]
    assert statement["token_id"].hex() == token_id
    assert hashlib.sha256(effects_bytes).digest() == statement["effects_sha256"]
    assert cbor2.loads(effects_bytes) == envelope["effects"]
    assert hashlib.sha256(envelope["chain"]).digest() == statement["chain_sha256"]
    digest = tagged("keyhost/receipt/v1", cbor2.dumps(statement, canonical=True))
    holder = coincurve.PublicKey(statement["holder"])
    assert holder.verify(der(envelope["sig"]), digest, hasher=None), "holder signature does not verify"
    [record] = envelope["effects"]
    assert record["token"] == token_id and record["value"] == 7
    return digest


def check_invariants(wallet):
    """Every token is HELD with no run, or SPENT with exactly one run whose receipt holds."""
    # Opening the wallet (any command) reconciles runs whose process is gone.
    out = wallet.keyhost("token", "list")
    assert out.returncode == 0, out.stderr
    tokens, runs = wallet.rows()
    for token_id, (state, receipt_id) in tokens.items():
        if state == "HELD":
            assert token_id not in runs, f"{token_id} is HELD but has effects"
        elif state == "SPENT":
            assert len(runs.get(token_id, [])) == 1, f"{token_id} is SPENT with {len(runs.get(token_id, []))} runs"
            stored_receipt_id, receipt, effects = runs[token_id][0]
            assert stored_receipt_id == receipt_id
            assert check_receipt(receipt, effects, token_id) == receipt_id
        else:
            pytest.fail(f"{token_id} is {state} after reopening")
    return tokens


@pytest.fixture
def wallet(keyhost_bin, tmp_path):
    return Wallet(keyhost_bin, tmp_path)


def test_a_token_runs_once_and_its_receipt_verifies(wallet):
    [token] = wallet.issue(1)
    first = wallet.run(token[:8])
    assert first.returncode == 0, first.stderr
    second = wallet.run(token[:8])
    assert second.returncode == 1
    assert "already spent" in second.stderr and "a token runs once" in second.stderr
    tokens = check_invariants(wallet)
    assert tokens[token][0] == "SPENT"


@pytest.mark.parametrize("failpoint", FAILPOINTS)
def test_kill_at_each_named_step(wallet, failpoint):
    [token] = wallet.issue(1)
    killed = wallet.run(token, env={"KEYHOST_FAILPOINT": failpoint})
    assert killed.returncode == -signal.SIGKILL, (killed.returncode, killed.stderr)
    assert killed.stdout == "", "nothing may be printed before the commit"
    tokens = check_invariants(wallet)
    expected = "SPENT" if failpoint == "after_commit" else "HELD"
    assert tokens[token][0] == expected
    again = wallet.run(token)
    if expected == "HELD":
        assert again.returncode == 0, again.stderr
    else:
        assert again.returncode == 1 and "already spent" in again.stderr
    assert check_invariants(wallet)[token][0] == "SPENT"


def test_a_batch_runs_each_token_once_in_one_commit(wallet):
    tokens = wallet.issue(5)
    (wallet.dir / "p.lua").write_text("while true do end")
    [looping] = wallet.issue(1)
    (wallet.dir / "p.lua").write_text(PROGRAM)
    order = [tokens[0], tokens[1][:10], looping, tokens[2], tokens[3], tokens[4]]
    result = wallet.keyhost("token", "run", *order, "--int", "spin=10", "--json")
    assert result.returncode == 1, result.stderr
    import json
    records = json.loads(result.stdout)
    assert [r["token_id"] for r in records] == [tokens[0], tokens[1], looping, *tokens[2:]]
    assert records[2]["error"]["kind"] == "instruction_limit" and "stays HELD" in records[2]["error"]["message"]
    for record in records[:2] + records[3:]:
        assert "error" not in record and record["effects"] == [{"token": record["token_id"], "value": 7, "spin": 55}]
    states = check_invariants(wallet)
    assert states[looping][0] == "HELD" and all(states[t][0] == "SPENT" for t in tokens)
    # Again: every spent token fails alone, named; the process says how many did not run.
    again = wallet.keyhost("token", "run", tokens[0], tokens[1])
    assert again.returncode == 1 and again.stderr.count("already spent") == 2 and "2 of 2 tokens did not run" in again.stderr, again.stderr
    assert wallet.keyhost("token", "run", tokens[0], tokens[1], "--receipt", "x.rcpt").returncode == 64


@pytest.mark.parametrize("failpoint", FAILPOINTS)
def test_kill_a_batch_at_each_named_step(wallet, failpoint):
    tokens = wallet.issue(4)
    killed = wallet.keyhost("token", "run", *tokens, env={"KEYHOST_FAILPOINT": failpoint})
    assert killed.returncode == -signal.SIGKILL, (killed.returncode, killed.stderr)
    assert killed.stdout == "", "nothing may be printed before the commit"
    states = check_invariants(wallet)
    # in_commit fires inside the batch's one transaction: the kill there loses the whole batch, as it must.
    expected = "SPENT" if failpoint == "after_commit" else "HELD"
    assert all(states[t][0] == expected for t in tokens), states
    again = wallet.keyhost("token", "run", *tokens)
    assert again.returncode == (0 if expected == "HELD" else 1), again.stderr
    assert all(state == "SPENT" for state, _ in check_invariants(wallet).values())


def test_kill_batches_at_random_moments(wallet):
    trials = int(os.environ.get("KEYHOST_KILL_TRIALS", "200")) // 10
    rng = random.Random(int(os.environ.get("KEYHOST_KILL_SEED", "20261126")))
    batches = [wallet.issue(5) for _ in range(trials)]
    calibration = wallet.issue(5)
    start = time.monotonic()
    assert wallet.keyhost("token", "run", *calibration, "--int", "spin=100000").returncode == 0
    window = 1.5 * (time.monotonic() - start)
    seen = set()
    for batch in batches:
        proc = subprocess.Popen([wallet.bin, "token", "run", *batch, "--int", f"spin={rng.choice([0, 1000, 100000])}", "--wallet", wallet.path],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=wallet.env, cwd=wallet.dir)
        time.sleep(rng.uniform(0, window))
        proc.send_signal(signal.SIGKILL)
        out, _ = proc.communicate()
        states = {check_invariants(wallet)[t][0] for t in batch}
        # One commit for the batch: all of it is SPENT, or none of it.
        assert len(states) == 1, states
        seen |= states
        if proc.returncode == 0:
            assert states == {"SPENT"}
        if states == {"HELD"}:
            assert b"ran token" not in out
    print(f"random batch kills: {seen}")
    assert seen == {"HELD", "SPENT"}, f"the kills did not land on both sides of the commit: {seen}"
    for batch in batches:
        assert wallet.keyhost("token", "run", *batch).returncode in (0, 1)
    assert all(state == "SPENT" for state, _ in check_invariants(wallet).values())
    _, runs = wallet.rows()
    assert all(len(r) == 1 for r in runs.values()) and len(runs) == 5 * (trials + 1)


def test_kill_at_random_moments(wallet):
    trials = int(os.environ.get("KEYHOST_KILL_TRIALS", "200"))
    rng = random.Random(int(os.environ.get("KEYHOST_KILL_SEED", "20261124")))
    tokens = wallet.issue(trials)
    # The kill window is this machine's own time for a whole run, measured now (a loaded machine runs slower),
    # so kills land before, during and after the commit whatever its speed.
    calibration = wallet.issue(3)
    took = []
    for token in calibration:
        start = time.monotonic()
        assert wallet.run(token, "--int", "spin=100000").returncode == 0
        took.append(time.monotonic() - start)
    window = 1.5 * sorted(took)[1]
    outcomes = {"HELD": 0, "SPENT": 0}
    for token in tokens:
        spin = str(rng.choice([0, 1000, 100000, 400000]))
        proc = subprocess.Popen([wallet.bin, "token", "run", token, "--int", f"spin={spin}", "--wallet", wallet.path],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=wallet.env, cwd=wallet.dir)
        time.sleep(rng.uniform(0, window))
        proc.send_signal(signal.SIGKILL)
        out, _ = proc.communicate()
        state = check_invariants(wallet)[token][0]
        outcomes[state] += 1
        if proc.returncode == 0:
            assert state == "SPENT"
        if state == "HELD":
            assert b"effect" not in out
    print(f"random kills: {outcomes}")
    assert outcomes["HELD"] > 0 and outcomes["SPENT"] > 0, f"the kills did not land on both sides of the commit: {outcomes}"
    # Every token that survived HELD runs now, exactly once.
    for token in tokens:
        result = wallet.run(token)
        assert result.returncode in (0, 1)
    tokens_now = check_invariants(wallet)
    assert all(state == "SPENT" for state, _ in tokens_now.values())
    _, runs = wallet.rows()
    assert all(len(r) == 1 for r in runs.values()) and len(runs) == trials + len(calibration)


def test_eight_processes_race_for_one_token(wallet):
    for token in wallet.issue(4):
        procs = [subprocess.Popen([wallet.bin, "token", "run", token, "--int", "spin=50000", "--wallet", wallet.path],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=wallet.env, cwd=wallet.dir)
                 for _ in range(8)]
        results = [(p.wait(timeout=60), p.stdout.read(), p.stderr.read()) for p in procs]
        winners = [r for r in results if r[0] == 0]
        assert len(winners) == 1, results
        for status, _, err in results:
            if status != 0:
                assert status == 1 and ("already spent" in err or "is being run by process" in err), err
        assert check_invariants(wallet)[token][0] == "SPENT"


def test_failures_leave_the_token_held(wallet):
    [token] = wallet.issue(1)
    (wallet.dir / "loop.lua").write_text("while true do end")
    for extra, kind in [(["--int", "spin=99999999999"], "instruction_limit")]:
        result = wallet.run(token, *extra)
        assert result.returncode == 1 and kind in result.stderr and "stays HELD" in result.stderr, result.stderr
    assert check_invariants(wallet)[token][0] == "HELD"
    assert wallet.run(token).returncode == 0


def test_a_token_altered_in_the_wallet_file_is_refused_before_it_runs(wallet):
    [token] = wallet.issue(1)
    db = sqlite3.connect(wallet.path)
    (encoded,) = db.execute("SELECT encoded FROM tokens WHERE id = ?", (bytes.fromhex(token),)).fetchone()
    envelope = cbor2.loads(encoded)
    envelope["token"]["value"] = 7000
    db.execute("UPDATE tokens SET encoded = ? WHERE id = ?", (cbor2.dumps(envelope, canonical=True), bytes.fromhex(token)))
    db.commit()
    db.close()
    result = wallet.run(token)
    assert result.returncode == 1 and "signature does not hold" in result.stderr, result.stderr
    tokens, runs = wallet.rows()
    assert tokens[token][0] == "HELD" and token not in runs


HOSTILE = {
    "infinite loop": "while true do end",
    "memory bomb": "local t = {} for i = 1, 1e9 do t[i] = ('x'):rep(4096) .. i end",
    "deep recursion": "local function f(n) return f(n + 1) + 1 end f(1)",
    "string bomb": "local s = 'x' for i = 1, 64 do s = s .. s end",
    "pattern backtracking": "local t = ... t.emit((string.rep('a', 60)):find(string.rep('a?', 60) .. string.rep('a', 60)))",
    "emit then fail": "local t = ... t.emit('partial') error('after emitting')",
    "rewrite the capability": "local t = ... t.emit = nil",
    "reach the host": "local t = ... t.emit(rawget(_G, 'io') or rawget(_G, 'os') or require('io'))",
    "gc finalizer": "setmetatable({}, { __gc = function() while true do end end })",
    "close handler loop": "do local x <close> = setmetatable({}, { __close = function() while true do end end }) end",
    "yield across the host": "local t = ... coroutine.wrap(function() t.emit(coroutine.yield()) end)() error('still here')",
    "yield from the main chunk": "coroutine.yield(1)",
    "load bytecode": "local t = ... local f = load(string.char(27) .. 'Lua', 'x', 'b') t.emit(f == nil) error('refused?')",
    "huge record": "local t = ... t.emit(string.rep('x', 1 << 20))",
    "float amount": "local t = ... t.emit { amount = 0.1 + 0.2 }",
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_programs_are_stopped_and_the_token_stays_held(wallet, name):
    (wallet.dir / "p.lua").write_text(HOSTILE[name])
    out = wallet.keyhost("token", "issue", "--program", "p.lua", "--value", "1", "--unit", "pt", "--to", wallet.holder,
                         "--issuer-key-env", "ISSUER", "--time-limit", "2", "--memory-limit", "16", "-o", "h.tok", wallet=False)
    assert out.returncode == 0, out.stderr
    assert wallet.keyhost("token", "import", "h.tok").returncode == 0
    token = cbor2.loads(b64url((wallet.dir / "h.tok").read_text().strip().split(":", 1)[1]))["token"]["id"].hex()
    started = time.time()
    result = wallet.run(token)
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert "stays HELD" in result.stderr, result.stderr
    assert time.time() - started < 20
    assert check_invariants(wallet)[token][0] == "HELD"
    # The wallet is still usable: an ordinary token runs.
    (wallet.dir / "p.lua").write_text(PROGRAM)
    [fine] = wallet.issue(1)
    assert wallet.run(fine).returncode == 0


def test_forged_and_altered_receipts_fail_verification(wallet):
    [token] = wallet.issue(1)
    assert wallet.run(token, "--int", "spin=10", "--receipt", "r.rcpt").returncode == 0
    good = wallet.keyhost("token", "verify-receipt", "r.rcpt", wallet=False)
    assert good.returncode == 0 and "valid" in good.stdout, good.stdout + good.stderr
    envelope = cbor2.loads(b64url((wallet.dir / "r.rcpt").read_text().strip().split(":", 1)[1]))

    def write(name, env):
        import base64
        data = cbor2.dumps(env, canonical=True)
        (wallet.dir / name).write_text("khrcpt1:" + base64.urlsafe_b64encode(data).decode().rstrip("=") + "\n")
        return wallet.keyhost("token", "verify-receipt", name, wallet=False)

    def resign(statement, key):
        digest = tagged("keyhost/receipt/v1", cbor2.dumps(statement, canonical=True))
        sig = key.sign(digest, hasher=None)
        r_len = sig[3]
        r = int.from_bytes(sig[4:4 + r_len], "big")
        s = int.from_bytes(sig[6 + r_len:], "big")
        return r.to_bytes(32, "big") + s.to_bytes(32, "big")

    # Altered effects: the statement no longer matches what the receipt carries.
    altered = dict(envelope, effects=[{"token": token, "value": 7000, "spin": 55}])
    result = write("altered.rcpt", altered)
    assert result.returncode == 1 and "altered" in result.stderr, result.stderr
    # Signed by someone else: the holder signature fails.
    stranger = coincurve.PrivateKey()
    forged = dict(envelope, sig=resign(envelope["receipt"], stranger))
    result = write("forged.rcpt", forged)
    assert result.returncode == 1 and "holder signature  INVALID" in result.stdout, result.stdout
    # A dishonest wallet: the holder's own key signs effects the program never produced.
    db = sqlite3.connect(wallet.path)
    (secret,) = db.execute("SELECT value FROM settings WHERE name = 'holder.secret'").fetchone()
    db.close()
    holder_key = coincurve.PrivateKey(bytes(secret))
    fake_effects = [{"token": token, "value": 7000, "spin": 55}]
    statement = dict(envelope["receipt"], effects_sha256=hashlib.sha256(cbor2.dumps(fake_effects, canonical=True)).digest())
    lying = dict(envelope, receipt=statement, effects=fake_effects, sig=resign(statement, holder_key))
    result = write("lying.rcpt", lying)
    assert result.returncode == 1, result.stdout
    assert "holder signature  valid" in result.stdout and "re-run effects    DIFFER" in result.stdout, result.stdout
