"""keyhost discover --jobs: 100 wallets against one Electrum server, one rate limit, one checkpoint (issue 21).

The wallets are accounts 0-99 of the BIP39 test mnemonic as zpubs, with made-up histories; embit (an
independent implementation) derives the keys and the used addresses, so what each wallet should report comes
from outside keyhost. The server counts connections, timestamps every request message and counts the
get_history calls per script hash, so the rate limit and "finished wallets are not asked again" are checked
where the promise matters: at the server.
"""
import bisect
import hashlib
import json
import os
import pathlib
import signal
import subprocess
import sys
import threading
import time

import pytest
from embit import bip32, bip39, script
from embit.networks import NETWORKS

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from electrum_server import ElectrumTestServer  # noqa: E402

MNEMONIC = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"
WALLETS = 100
GAP = 5
MAIN = NETWORKS["main"]


def scripthash(spk):
    return hashlib.sha256(spk).digest()[::-1].hex()


def made_up_job():
    """Wallet i: account i's zpub; used receive 0..i%4 (none when i%5 == 4), change 0 when i%3 == 0."""
    root = bip32.HDKey.from_seed(bip39.mnemonic_to_seed(MNEMONIC))
    lines, histories, expected, hashes = [], {}, {}, {}
    for i in range(WALLETS):
        account = root.derive(f"m/84h/0h/{i}h")
        wallet = f"w{i:03}"
        lines.append(json.dumps({"id": wallet, "xpub": account.to_public().to_string(version=MAIN["zpub"])}))
        used = [] if i % 5 == 4 else [(0, j) for j in range(i % 4 + 1)]
        if i % 3 == 0:
            used.append((1, 0))
        expected[wallet] = sorted(("receive" if chain == 0 else "change", index, script.p2wpkh(account.derive([chain, index])).address(MAIN))
                                  for chain, index in used)
        hashes[wallet] = set()
        for chain in (0, 1):
            for index in range(12):
                spk = script.p2wpkh(account.derive([chain, index])).data
                hashes[wallet].add(scripthash(spk))
                if (chain, index) in used:
                    histories[scripthash(spk)] = [{"tx_hash": hashlib.sha256(spk).hexdigest(), "height": 800000}]
    return lines, histories, expected, hashes


@pytest.fixture(scope="module")
def job():
    return made_up_job()


@pytest.fixture
def server(job):
    electrum = ElectrumTestServer(job[1])
    electrum.start()
    yield electrum
    electrum.stop()


def run(keyhost_bin, job_file, server, *args, check=True):
    result = subprocess.run([keyhost_bin, "discover", "--jobs", str(job_file), "--source", f"electrum:tcp://127.0.0.1:{server.port}",
                             "--gap-limit", str(GAP), "--retries", "1", *args],
                            capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"}, timeout=600)
    if check:
        assert result.returncode == 0, result.stderr
    return result


def used_of(result_record):
    return sorted((u["chain"], u["index"], u["address"]) for account in result_record["accounts"] for u in account["used"])


def most_in_one_second(times):
    times = sorted(times)
    return max(bisect.bisect_left(times, t + 1.0) - k for k, t in enumerate(times))


def test_a_job_finds_what_embit_says_holds_the_rate_and_shares_connections(keyhost_bin, job, server, tmp_path):
    lines, _, expected, _ = job
    job_file = tmp_path / "wallets.jsonl"
    job_file.write_text("# a hundred accounts\n" + "\n".join(lines) + "\n\n")
    rate = 60
    result = run(keyhost_bin, job_file, server, "--rate", str(rate), "--wallets-at-once", "8", "--parallel", "3", "--json")
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [row["id"] for row in rows] == [f"w{i:03}" for i in range(WALLETS)]  # the job's order, whatever finished first
    for row in rows:
        assert row["ok"] and not row["resumed"], row
        assert used_of(row["result"]) == expected[row["id"]], row["id"]
    stats = server.stats()
    assert stats["connections"] <= 3  # one pool for all 100 wallets
    # Every request message, batches and server.version alike, counted at the server. keyhost sends them at
    # least 1/rate s apart; one sent on time but held up on the way (a busy machine) can arrive next to the one
    # after it, so a window may see one more than the rate, never two, and over the run the rate holds.
    times = sorted(server.message_times)
    assert most_in_one_second(times) <= rate + 1, most_in_one_second(times)
    assert (len(times) - 2) / (times[-1] - times[0]) <= rate
    assert "job: 100 wallets, 100 finished (0 from the checkpoint), 0 failed" in result.stderr


def test_each_wallet_alone_reports_the_same(keyhost_bin, job, server, tmp_path):
    """All 100 wallets, each scanned by itself (`discover --xpub`), report exactly what the job reported for them."""
    from concurrent.futures import ThreadPoolExecutor
    lines, _, _, _ = job
    job_file = tmp_path / "wallets.jsonl"
    job_file.write_text("\n".join(lines) + "\n")
    rows = [json.loads(line) for line in run(keyhost_bin, job_file, server, "--json").stdout.splitlines()]

    def alone(line):
        result = subprocess.run([keyhost_bin, "discover", "--xpub", json.loads(line)["xpub"], "--source", f"electrum:tcp://127.0.0.1:{server.port}",
                                 "--gap-limit", str(GAP), "--json"], capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"}, timeout=300)
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)

    with ThreadPoolExecutor(4) as pool:
        separate = list(pool.map(alone, lines))
    assert len(rows) == len(separate) == WALLETS
    for row, result in zip(rows, separate):
        assert row["result"] == result, row["id"]


def test_a_killed_job_resumes_without_asking_about_finished_wallets(keyhost_bin, job, server, tmp_path):
    lines, _, expected, hashes = job
    job_file, checkpoint = tmp_path / "wallets.jsonl", tmp_path / "job.ckpt"
    job_file.write_text("\n".join(lines) + "\n")
    command = [keyhost_bin, "discover", "--jobs", str(job_file), "--source", f"electrum:tcp://127.0.0.1:{server.port}", "--gap-limit", str(GAP),
               "--rate", "40", "--wallets-at-once", "2", "--checkpoint", str(checkpoint), "--json"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={"PATH": "/usr/bin:/bin"})
    # Wait for a state (ten wallets in the checkpoint), never for a clock.
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and process.poll() is None:
        try:
            if len(json.loads(checkpoint.read_text())["wallets"]) >= 10:
                break
        except (FileNotFoundError, ValueError, KeyError):
            pass
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
    finished = {entry["id"] for entry in json.loads(checkpoint.read_text())["wallets"]}
    assert 10 <= len(finished) < WALLETS
    assert oct(os.stat(checkpoint).st_mode & 0o777) == "0o600"
    before = dict(server.scripthash_calls)

    result = run(keyhost_bin, job_file, server, "--checkpoint", str(checkpoint), "--json")
    rows = {row["id"]: row for row in map(json.loads, result.stdout.splitlines())}
    assert len(rows) == WALLETS
    for wallet in finished:
        assert rows[wallet]["resumed"], wallet
        asked = {h for h in hashes[wallet] if server.scripthash_calls[h] != before.get(h, 0)}
        assert not asked, f"{wallet} was asked about again"
    for wallet, row in rows.items():
        assert used_of(row["result"]) == expected[wallet]
        if wallet not in finished:
            assert not row["resumed"]
    assert f"({len(finished)} from the checkpoint)" in result.stderr


def test_a_failed_wallet_is_reported_and_the_rest_go_on(keyhost_bin, job, server, tmp_path):
    lines, _, expected, _ = job
    job_file = tmp_path / "wallets.jsonl"
    job_file.write_text("\n".join([lines[0], '{"id": "typo", "xpub": "zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYt"}',
                                   '{"id": "unset", "mnemonic_env": "NOT_SET_ANYWHERE"}', lines[1]]) + "\n")
    result = run(keyhost_bin, job_file, server, "--json", check=False)
    assert result.returncode == 1
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(row["id"], row["ok"]) for row in rows] == [("w000", True), ("typo", False), ("unset", False), ("w001", True)]
    assert "checksum" in rows[1]["error"]["message"].lower()
    assert "NOT_SET_ANYWHERE" in rows[2]["error"]["message"] and "not set" in rows[2]["error"]["message"]
    assert used_of(rows[3]["result"]) == expected["w001"]
    assert "2 failed" in result.stderr

    csv = run(keyhost_bin, job_file, server, "--csv", check=False).stdout.splitlines()
    assert csv[0] == "wallet,status,account,chain,index,path,address,account_xpub,error"
    assert [line.split(",")[:2] for line in csv[1:] if line.startswith(("typo", "unset"))] == [["typo", "error"], ["unset", "error"]]
    assert sorted(line.split(",")[6] for line in csv[1:] if line.startswith("w001,")) == sorted(a for _, _, a in expected["w001"])


@pytest.mark.parametrize("line,problem", [
    ('{"id": "a", "xpub": "zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs", "gap": 5}',
     'unknown key "gap"'),
    ('{"id": "a", "xpub": 7}', '"xpub" must be a string, not a number'),
    ("not json", "not a JSON object on one line"),
    ('{"id": "a"}', "no key source"),
    ('{"id": "a", "xpub": "x", "mnemonic_env": "W"}', '"xpub" and "mnemonic_env" exclude each other'),
    ('{"id": "w000", "mnemonic_env": "W"}', 'the id "w000" is also on line 1'),
    ('{"id": "a", "xpub": "xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiChkVvvNKmPGJxWUtg6LnF5kejMRNNU3TGtRBeJgk33yuGBxrMPHi"}',
     '"xpub" holds an extended PRIVATE key'),
    ('{"id": "a", "mnemonic_env": "W", "gap_limit": 0}', '"gap_limit" must be a positive integer'),
    ('{"id": "a", "descriptor": "wpkh(xpub)", "purpose": 84}', '"purpose" does not go with "descriptor"'),
])
def test_a_bad_job_file_stops_before_anything_runs(keyhost_bin, job, server, tmp_path, line, problem):
    job_file = tmp_path / "wallets.jsonl"
    job_file.write_text(job[0][0] + "\n" + line + "\n")
    result = run(keyhost_bin, job_file, server, check=False)
    assert result.returncode == 64, result.stderr
    assert f"{job_file}:2: {problem}" in result.stderr, result.stderr
    assert server.stats()["round_trips"] == 0


def test_job_options_that_do_not_fit(keyhost_bin, server, tmp_path):
    job_file = tmp_path / "wallets.jsonl"
    job_file.write_text('{"id": "a", "mnemonic_env": "W"}\n')
    for args, problem in [(["--xpub", "zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs"],
                           "--xpub does not go with --jobs"),
                          (["--rate", "0"], "--rate must be a number of requests a second above 0"),
                          (["--wallets-at-once", "0"], "--wallets-at-once must be at least 1")]:
        result = run(keyhost_bin, job_file, server, *args, check=False)
        assert result.returncode == 64 and problem in result.stderr, result.stderr


def test_lua_scan_jobs_matches_the_command_line(keyhost_bin, job, server, tmp_path):
    lines, _, expected, _ = job
    job_file = tmp_path / "wallets.jsonl"
    job_file.write_text("\n".join(lines[:6]) + "\n")
    cli = [json.loads(line) for line in run(keyhost_bin, job_file, server, "--json").stdout.splitlines()]
    tables = ", ".join("{id = %s, xpub = %s}" % (json.dumps(json.loads(l)["id"]), json.dumps(json.loads(l)["xpub"])) for l in lines[:6])
    script = f"""
        local discovery = require 'keyhost.discovery'
        local source = 'electrum:tcp://127.0.0.1:{server.port}'
        local function show(rows)
          for _, row in ipairs(rows) do
            local used = {{}}
            if row.ok then
              for _, account in ipairs(row.result.accounts) do
                for _, u in ipairs(account.used) do used[#used + 1] = u.address end
              end
            end
            print(row.id, row.ok, row.resumed, row.ok and table.concat(used, ' ') or row.error.message)
          end
        end
        show(discovery.scan_jobs({{ {tables}, {{id = 'bad', xpub = 'zpub-nonsense'}} }}, {{ source = source, gap_limit = {GAP}, rate = 200, wallets_at_once = 3 }}))
        show(discovery.scan_jobs('{job_file}', {{ source = source, gap_limit = {GAP}, checkpoint = '{tmp_path / "lua.ckpt"}' }}))
        show(discovery.scan_jobs('{job_file}', {{ source = source, gap_limit = {GAP}, checkpoint = '{tmp_path / "lua.ckpt"}' }}))
        print(pcall(discovery.scan_jobs, {{ {{id = 'x', xpub = 'a', gap = 1}} }}, {{ source = source }}))
    """
    result = subprocess.run([keyhost_bin, "eval", script], capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"}, timeout=300)
    assert result.returncode == 0, result.stderr
    out = [line.split("\t") for line in result.stdout.splitlines()]
    want = [[row["id"], "true", "false", " ".join(u["address"] for a in row["result"]["accounts"] for u in a["used"])] for row in cli]
    assert out[:6] == want
    assert out[6][:2] == ["bad", "false"] and out[6][2] == "nil"
    assert out[7:13] == want
    assert [row[2] for row in out[13:19]] == ["true"] * 6  # the second run takes every wallet from the checkpoint
    assert out[19][0] == "false" and 'wallets:1: unknown key "gap"' in out[19][1]
    assert all(sorted(row[3].split()) == sorted(a for _, _, a in expected[row[0]]) for row in out[:6])


def test_an_esplora_job_keeps_to_parallel_connections(keyhost_bin, job, tmp_path):
    """HTTP sources too: the wallets share one client, so its --parallel bounds requests in flight and connections
    for the whole job (kept alive), not per wallet."""
    from esplora_server import EsploraTestServer
    lines, _, expected, _ = job
    server = EsploraTestServer({address for wallet in expected.values() for _, _, address in wallet})
    port = server.start()
    try:
        job_file = tmp_path / "wallets.jsonl"
        job_file.write_text("\n".join(lines[:20]) + "\n")
        result = subprocess.run([keyhost_bin, "discover", "--jobs", str(job_file), "--source", f"esplora:http://127.0.0.1:{port}",
                                 "--gap-limit", str(GAP), "--wallets-at-once", "5", "--parallel", "2", "--json"],
                                capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"}, timeout=600)
        assert result.returncode == 0, result.stderr
        rows = [json.loads(line) for line in result.stdout.splitlines()]
        assert [used_of(row["result"]) for row in rows] == [expected[f"w{i:03}"] for i in range(20)]
        assert server.stats()["connections"] <= 2
    finally:
        server.stop()


class HoldingElectrumServer(ElectrumTestServer):
    """Answers every request, except that the first batch asking about one of `held` script hashes waits until the
    test calls release(): a wallet is then surely in the middle of its scan, whatever the machine's speed."""

    def __init__(self, histories, held):
        super().__init__(histories)
        self.held = held
        self.holding = threading.Event()
        self.released = threading.Event()

    def _respond(self, call):
        if call.get("method") == "blockchain.scripthash.get_history" and (call.get("params") or [""])[0] in self.held:
            if not self.holding.is_set():
                self.holding.set()
                self.released.wait()
        return super()._respond(call)

    def release(self):
        self.released.set()


@pytest.mark.parametrize("form", ["--json", "--text", "--csv"])
def test_ctrl_c_reports_a_running_wallet_as_interrupted_not_failed(keyhost_bin, job, tmp_path, form):
    lines, histories, expected, hashes = job
    job_file, checkpoint = tmp_path / "wallets.jsonl", tmp_path / "job.ckpt"
    job_file.write_text("\n".join(lines[:3]) + "\n")
    server = HoldingElectrumServer(histories, hashes["w001"])
    server.start()
    try:
        command = [keyhost_bin, "discover", "--jobs", str(job_file), "--source", f"electrum:tcp://127.0.0.1:{server.port}",
                   "--gap-limit", str(GAP), "--wallets-at-once", "1", "--checkpoint", str(checkpoint)]
        if form != "--text":
            command.append(form)
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={"PATH": "/usr/bin:/bin"})
        try:
            # w000 has finished and w001 waits for its first answer: a state, not a clock.
            assert server.holding.wait(timeout=300), "w001 never asked"
            process.send_signal(signal.SIGINT)
            # The answer goes out only once the signal was taken, so the wallet surely sees Ctrl-C at its next step.
            wait_for_signal_seen(process.pid)
            server.release()
            out, err = process.communicate(timeout=300)
        finally:
            process.kill()
    finally:
        server.release()
        server.stop()
    assert process.returncode == 130, err
    assert "failed" not in out.lower() and "FAILED" not in out, out
    assert "interrupted" in err and "1 stopped while running" in err, err
    if form == "--json":
        rows = [json.loads(line) for line in out.splitlines()]
        assert [row["id"] for row in rows] == ["w000", "w001"]  # w002 never started
        assert rows[0]["ok"] and used_of(rows[0]["result"]) == expected["w000"]
        assert rows[1]["ok"] is False and rows[1]["error"]["kind"] == "interrupted", rows[1]
        assert "source" not in rows[1]["error"]["message"] and "electrum" not in rows[1]["error"]["message"]
    elif form == "--csv":
        assert [line.split(",")[:2] for line in out.splitlines()[1:] if line.startswith("w001")] == [["w001", "interrupted"]]
        assert not any(line.startswith("w002") for line in out.splitlines())
    else:
        assert [line.split("\t")[:2] for line in out.splitlines()] == [["w000", "ok"], ["w001", "INTERRUPTED"]]
    # The checkpoint keeps w000 only: a rerun scans w001 and w002.
    assert [entry["id"] for entry in json.loads(checkpoint.read_text())["wallets"]] == ["w000"]


def wait_for_signal_seen(pid):
    """Until the kernel no longer shows SIGINT pending for the process: it went to the handler (or ended it)."""
    status = pathlib.Path(f"/proc/{pid}/status")
    deadline = time.monotonic() + 300  # against a hang only: the kernel delivers at once to a thread that can take it
    while time.monotonic() < deadline:
        try:
            fields = dict(line.split(":", 1) for line in status.read_text().splitlines() if ":" in line)
        except FileNotFoundError:
            return
        if not (int(fields["ShdPnd"], 16) | int(fields["SigPnd"], 16)) & (1 << (signal.SIGINT - 1)):
            return
        time.sleep(0.01)
    raise AssertionError("SIGINT stayed pending")
