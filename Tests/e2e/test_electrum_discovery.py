"""keyhost discover against an Electrum server (Tests/e2e/electrum_server.py) finds what BDK's own Electrum client
finds on the same server, talks the way the issue asks (batches, few connections, keep-alive), and fails clearly
when the server misbehaves.

The made-up histories are built from BDK's derivation of the BIP39 test wallet (bdkpython, an independent
implementation): the script hashes the server knows are BDK's, never keyhost's. BDK scans with `full_scan` over
the same server; keyhost must report the same used addresses and last indexes.

A 2-of-3 wsh(sortedmulti) wallet is compared too: keyhost scans it as `discover --descriptor` (receive and
change), BDK as the same descriptors; BDK makes its keys (BIP48 accounts) and its addresses.
"""
import hashlib
import json
import os
import pathlib
import subprocess
import sys

import bdkpython as bdk
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from electrum_server import ElectrumTestServer  # noqa: E402

MNEMONIC = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"
EXTERNAL, INTERNAL = bdk.KeychainKind.EXTERNAL, bdk.KeychainKind.INTERNAL
TEMPLATES = {84: bdk.Descriptor.new_bip84, 49: bdk.Descriptor.new_bip49, 86: bdk.Descriptor.new_bip86}
# Used indexes with a gap limit of 20: 45 -> 65 leaves 19 unused between (still found), 65 -> 90 leaves 24 (not found).
RECEIVE = [0, 1, 4, 9, 17, 30, 45, 65, 90]
CHANGE = [0, 2, 5, 26]
GAP = 20


def bdk_wallet(purpose):
    key = bdk.DescriptorSecretKey(bdk.NetworkKind.MAIN, bdk.Mnemonic.from_string(MNEMONIC), None)
    template = TEMPLATES[purpose]
    return bdk.Wallet(template(key, EXTERNAL, bdk.NetworkKind.MAIN), template(key, INTERNAL, bdk.NetworkKind.MAIN),
                      bdk.Network.BITCOIN, bdk.Persister.new_in_memory())


def scripthash(script):
    return hashlib.sha256(script).digest()[::-1].hex()


def paying_tx(script, n):
    """A transaction with one output paying `script` (its input spends a made-up outpoint): raw hex and txid."""
    prevout = hashlib.sha256(b"keyhost electrum test" + script + n.to_bytes(4, "little")).digest()
    raw = ((2).to_bytes(4, "little") + b"\x01" + prevout + bytes(4) + b"\x00" + b"\xff" * 4
           + b"\x01" + (10000).to_bytes(8, "little") + bytes([len(script)]) + script + bytes(4))
    return hashlib.sha256(hashlib.sha256(raw).digest()).digest()[::-1].hex(), raw.hex()


def made_up_history(purpose, receive=RECEIVE, change=CHANGE, wallet=None):
    """Script hash -> history and txid -> raw transaction, for the used indexes of BDK's wallet. Mempool entries
    (height 0): BDK then needs no merkle proofs from the server."""
    wallet = wallet or bdk_wallet(purpose)
    histories, transactions = {}, {}
    for keychain, indexes in ((EXTERNAL, receive), (INTERNAL, change)):
        for i in indexes:
            script = wallet.peek_address(keychain, i).address.script_pubkey().to_bytes()
            txid, raw = paying_tx(script, i)
            transactions[txid] = raw
            histories[scripthash(script)] = [{"tx_hash": txid, "height": 0, "fee": 200}]
    return histories, transactions


def multisig_descriptors():
    """A 2-of-3 wsh(sortedmulti) wallet: three BIP48 (P2WSH) account keys of the test seed, as BDK derives them."""
    key = bdk.DescriptorSecretKey(bdk.NetworkKind.MAIN, bdk.Mnemonic.from_string(MNEMONIC), None)
    keys = [str(key.derive(bdk.DerivationPath(f"m/48'/0'/{i}'/2'")).as_public()) for i in range(3)]
    return [f"wsh(sortedmulti(2,{keys[0]}/{chain}/*,{keys[1]}/{chain}/*,{keys[2]}/{chain}/*))" for chain in (0, 1)]


def multisig_wallet():
    receive, change = multisig_descriptors()
    return bdk.Wallet(bdk.Descriptor(receive, bdk.NetworkKind.MAIN), bdk.Descriptor(change, bdk.NetworkKind.MAIN),
                      bdk.Network.BITCOIN, bdk.Persister.new_in_memory())


def bdk_scan(purpose, url, wallet=None):
    """What BDK's full_scan finds: {chain: [used indexes]} and the last used index of each chain."""
    wallet = wallet or bdk_wallet(purpose)
    client = bdk.ElectrumClient(url, validate_domain=False)
    wallet.apply_update(client.full_scan(wallet.start_full_scan().build(), GAP, 10, False))
    used = {"receive": [], "change": []}
    for output in wallet.list_output():
        used["receive" if output.keychain == EXTERNAL else "change"].append(output.derivation_index)
    last = {"receive": wallet.derivation_index(EXTERNAL), "change": wallet.derivation_index(INTERNAL)}
    return {chain: sorted(indexes) for chain, indexes in used.items()}, last


def discover(keyhost_bin, source, *args, purpose=84, check=True):
    env = {"PATH": "/usr/bin:/bin", "W": MNEMONIC}
    result = subprocess.run([keyhost_bin, "discover", "--mnemonic-env", "W", "--purpose", str(purpose), "--source", source,
                             "--gap-limit", str(GAP), "--json", "--retries", "2", *args],
                            capture_output=True, text=True, env=env, timeout=300)
    if check:
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)
    return result


def found(report):
    """keyhost's answer for account 0 in BDK's terms; the next account must be empty."""
    account = report["accounts"][0]
    used = {"receive": [], "change": []}
    for entry in account["used"]:
        used[entry["chain"]].append(entry["index"])
    assert all(not a["is_used"] for a in report["accounts"][1:])
    return {chain: sorted(indexes) for chain, indexes in used.items()}, account["last_used"]


@pytest.fixture
def serve():
    servers = []

    def start(histories, transactions=None, **options):
        server = ElectrumTestServer(histories, transactions, **options)
        server.start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture(scope="module")
def certificate(tmp_path_factory):
    """A self-signed certificate as a home server makes one: its files and its SHA-256 fingerprint (colon form)."""
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-days", "2", "-subj", "/CN=electrum.home", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)
    der = subprocess.run(["openssl", "x509", "-in", str(cert), "-outform", "DER"], check=True, capture_output=True).stdout
    fingerprint = ":".join(f"{b:02X}" for b in hashlib.sha256(der).digest())
    return cert, key, fingerprint


@pytest.mark.parametrize("purpose", [84, 49, 86], ids=["wpkh", "sh-wpkh", "tr"])
def test_finds_what_bdk_finds(keyhost_bin, serve, purpose):
    server = serve(*made_up_history(purpose))
    url = f"tcp://127.0.0.1:{server.port}"
    expected_used, expected_last = bdk_scan(purpose, url)
    # The history has used addresses past the gap; neither client may find them.
    assert 90 not in expected_used["receive"] and 26 not in expected_used["change"]
    assert expected_last == {"receive": 65, "change": 5}

    used, last = found(discover(keyhost_bin, f"electrum:{url}", purpose=purpose))
    assert used == expected_used
    assert last == expected_last
    assert server.stats()["clients"][-1] == ["keyhost 0.1.0", "1.4"]


def test_a_2_of_3_multisig_descriptor_wallet_finds_what_bdk_finds(keyhost_bin, serve):
    server = serve(*made_up_history(None, wallet=multisig_wallet()))
    url = f"tcp://127.0.0.1:{server.port}"
    expected_used, expected_last = bdk_scan(None, url, wallet=multisig_wallet())
    assert expected_last == {"receive": 65, "change": 5}
    receive, change = multisig_descriptors()
    env = {"PATH": "/usr/bin:/bin"}
    result = subprocess.run([keyhost_bin, "discover", "--descriptor", receive, "--descriptor", change, "--source", f"electrum:{url}",
                             "--gap-limit", str(GAP), "--json"], capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    used, last = found(json.loads(result.stdout))
    assert used == expected_used
    assert last == expected_last


def test_a_600_deep_history_takes_few_connections_and_batched_round_trips(keyhost_bin, serve):
    receive = list(range(600))
    server = serve(*made_up_history(84, receive=receive, change=list(range(0, 150, 3))))
    report = discover(keyhost_bin, f"electrum:tcp://127.0.0.1:{server.port}", "--parallel", "2")
    used, last = found(report)
    assert last == {"receive": 599, "change": 147}
    assert used["receive"] == receive
    stats = server.stats()
    queried = report["totals"]["addresses_queried"]
    assert stats["max_open"] <= 2 and stats["connections"] <= 2, stats
    # One batch per engine batch (at most 20 addresses with a gap of 20), plus server.version.
    assert stats["round_trips"] * 10 <= queried, (stats, queried)
    assert stats["singles"] == stats["connections"]  # only server.version went alone

    # A larger gap makes larger batches, spread across at most --parallel connections.
    big = serve(*made_up_history(84, receive=receive, change=[]))
    wide = discover(keyhost_bin, f"electrum:tcp://127.0.0.1:{big.port}", "--parallel", "3", "--gap-limit", "100")
    stats = big.stats()
    assert 1 < stats["max_open"] <= 3 and stats["connections"] <= 3, stats
    assert stats["round_trips"] * 10 <= wide["totals"]["addresses_queried"], stats
    assert found(wide)[1]["receive"] == 599


def test_a_server_error_object_stops_the_scan_naming_server_address_code_and_message(keyhost_bin, serve):
    histories, transactions = made_up_history(84)
    wallet = bdk_wallet(84)
    address = str(wallet.peek_address(EXTERNAL, 3).address)
    bad = scripthash(wallet.peek_address(EXTERNAL, 3).address.script_pubkey().to_bytes())
    server = serve(histories, transactions, errors={bad: {"code": 1, "message": "history too large"}})
    result = discover(keyhost_bin, f"electrum:tcp://127.0.0.1:{server.port}", check=False)
    assert result.returncode == 1
    message = json.loads(result.stderr)["error"]["message"]
    assert f"electrum tcp://127.0.0.1:{server.port}" in message
    assert f"blockchain.scripthash.get_history for {address}: error 1: history too large" in message


def test_a_failed_scan_resumes_from_its_checkpoint_on_the_same_server(keyhost_bin, serve, tmp_path):
    histories, transactions = made_up_history(84)
    wallet = bdk_wallet(84)
    bad = scripthash(wallet.peek_address(EXTERNAL, 50).address.script_pubkey().to_bytes())
    server = serve(histories, transactions, errors={bad: {"code": 2, "message": "daemon error"}})
    source, checkpoint = f"electrum:tcp://127.0.0.1:{server.port}", str(tmp_path / "scan.json")
    failed = discover(keyhost_bin, source, "--checkpoint", checkpoint, check=False)
    assert failed.returncode == 1 and "error 2: daemon error" in failed.stderr
    asked_before = server.stats()["calls"]["blockchain.scripthash.get_history"]

    server.errors.clear()  # the server recovers; the rerun asks only what the checkpoint does not hold
    report = discover(keyhost_bin, source, "--checkpoint", checkpoint)
    assert found(report)[1] == {"receive": 65, "change": 5}
    assert report["totals"]["addresses_from_checkpoint"] >= 30  # receive 0-37 came back before the failing batch
    asked_after = server.stats()["calls"]["blockchain.scripthash.get_history"] - asked_before
    assert asked_after == report["totals"]["addresses_queried"] < report["totals"]["addresses_checked"]


@pytest.mark.parametrize("behaviour, expect", [
    # Closes in the middle of its first batch answer: keyhost reconnects and asks again.
    ({"close_first_batches": 1}, {"connections": 2, "batches_only": True}),
    # Answers a batch with one error object (Fulcrum with max_batch = 0): pipelined singles on the same connection.
    ({"batches": "refuse"}, {"connections": 1, "batches": 1}),
    # Closes on any batch (Blockstream's electrs): after two such closes, pipelined singles.
    ({"batches": "close"}, {"connections": 3, "batches": 2}),
], ids=["closes-mid-batch", "refuses-batches", "closes-on-batches"])
def test_misbehaving_servers_still_give_the_same_answer(keyhost_bin, serve, behaviour, expect):
    server = serve(*made_up_history(84), **behaviour)
    used, last = found(discover(keyhost_bin, f"electrum:tcp://127.0.0.1:{server.port}"))
    assert last == {"receive": 65, "change": 5}
    assert used["receive"] == [0, 1, 4, 9, 17, 30, 45, 65]
    stats = server.stats()
    assert stats["connections"] == expect["connections"], stats
    if expect.get("batches_only"):
        assert stats["singles"] == stats["connections"], stats  # server.version only
    else:
        assert stats["batches"] == expect["batches"] and stats["singles"] > 100, stats


def test_self_signed_certificate_refused_without_pin_accepted_with_cert_or_fingerprint(keyhost_bin, serve, certificate):
    cert, key, fingerprint = certificate
    server = serve(*made_up_history(84), certfile=str(cert), keyfile=str(key))
    source = f"electrum:ssl://127.0.0.1:{server.port}"

    refused = discover(keyhost_bin, source, check=False)
    assert refused.returncode == 1
    message = json.loads(refused.stderr)["error"]["message"]
    assert "certificate verify failed (self-signed certificate)" in message
    assert fingerprint in message and "--electrum-fingerprint" in message
    assert server.stats()["round_trips"] == 0  # nothing was sent over the refused connection

    for pin in (["--electrum-cert", str(cert)], ["--electrum-fingerprint", fingerprint],
                ["--electrum-fingerprint", fingerprint.replace(":", "").lower()]):
        assert found(discover(keyhost_bin, source, *pin))[1] == {"receive": 65, "change": 5}

    wrong = discover(keyhost_bin, source, "--electrum-fingerprint", "00" * 32, check=False)
    assert wrong.returncode == 1 and "matches no pin" in json.loads(wrong.stderr)["error"]["message"]


@pytest.mark.parametrize("behaviour, text", [
    ({"huge_line": (16 << 20) + 4096}, "a line longer than 16 MiB (keyhost's cap on one message)"),
    ({"garbage": True}, "answered nonsense for bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu and 19 more: not JSON"),
    ({"protocol": "1.2"}, "it speaks the Electrum protocol 1.2 (keyhost-test-electrum 1.0); keyhost needs 1.4 or later"),
], ids=["line-too-long", "not-json", "protocol-1.2"])
def test_hostile_or_old_servers_are_refused_clearly(keyhost_bin, serve, behaviour, text):
    server = serve(*made_up_history(84), **behaviour)
    result = discover(keyhost_bin, f"electrum:tcp://127.0.0.1:{server.port}", check=False)
    assert result.returncode == 1, result.stdout
    message = json.loads(result.stderr)["error"]["message"]
    assert text in message and f"electrum tcp://127.0.0.1:{server.port}" in message
    assert server.stats()["connections"] == 1  # not retried: another attempt would get the same


def test_an_unreachable_server_is_retried_then_named(keyhost_bin):
    import socket
    with socket.socket() as probe:  # a port with nobody listening
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = discover(keyhost_bin, f"electrum:tcp://127.0.0.1:{port}", "--retries", "0", check=False)
    assert result.returncode == 1
    assert f"cannot reach electrum tcp://127.0.0.1:{port}" in result.stderr and "connection refused" in result.stderr


@pytest.mark.parametrize("args, text", [
    (["--source", "electrum:http://127.0.0.1:1"], "is neither tcp:// nor ssl://"),
    (["--source", "electrum:tcp://127.0.0.1:99999"], "has a port that is not 1-65535"),
    (["--source", "esplora:http://127.0.0.1:1", "--electrum-fingerprint", "00" * 32], "goes with an Electrum source"),
    (["--source", "electrum:tcp://127.0.0.1:1", "--electrum-fingerprint", "00" * 32], "they need electrum:ssl://"),
    (["--source", "electrum:ssl://127.0.0.1:1", "--electrum-fingerprint", "abc"], "is not a SHA-256 fingerprint"),
])
def test_bad_electrum_options_are_usage_errors(keyhost_bin, args, text):
    env = {"PATH": "/usr/bin:/bin", "W": MNEMONIC}
    result = subprocess.run([keyhost_bin, "discover", "--mnemonic-env", "W", *args], capture_output=True, text=True, env=env)
    assert result.returncode == 64, result.stderr
    assert text in result.stderr


def test_lua_scan_is_the_same_source_and_keeps_an_idle_connection_alive(keyhost_bin, serve, tmp_path):
    flag = tmp_path / "pinged"
    server = serve(*made_up_history(84), ping_flag=str(flag))
    # The progress callback after the first batch waits (without a clock) until the server has seen a ping:
    # the keep-alive kept the idle connection open, and the scan goes on over the same connection.
    script = tmp_path / "scan.lua"
    script.write_text(f"""
local discovery = require "keyhost.discovery"
local waited = false
local r = discovery.scan {{
  mnemonic = "{MNEMONIC}", purpose = 84, gap_limit = {GAP}, source = "electrum:tcp://127.0.0.1:{server.port}",
  electrum_keep_alive = 0.2,
  on_progress = function(p)
    if waited then return end
    waited = true
    for _ = 1, 3000 do
      local f = io.open("{flag}")
      if f then f:close() return end
      os.execute("sleep 0.1")
    end
    error("no server.ping arrived")
  end,
}}
local used = {{}}
for _, u in ipairs(r.accounts[1].used) do used[#used + 1] = u.chain .. ":" .. u.index end
print(table.concat(used, " "))
print(r.accounts[1].last_used.receive, r.accounts[1].last_used.change, r.usage_source)
""")
    result = subprocess.run([keyhost_bin, "run", str(script)], capture_output=True, text=True, timeout=600,
                            env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == " ".join([f"receive:{i}" for i in RECEIVE[:-1]] + [f"change:{i}" for i in CHANGE[:-1]])
    assert lines[1] == f"65\t5\telectrum tcp://127.0.0.1:{server.port}"
    stats = server.stats()
    assert stats["calls"].get("server.ping", 0) >= 1 and stats["connections"] == 1, stats


def test_lua_large_batches_are_split_into_requests_of_at_most_100_on_the_connections_allowed(keyhost_bin, serve, tmp_path):
    server = serve(*made_up_history(84, receive=list(range(600)), change=[]))
    code = ('local discovery = require "keyhost.discovery"\n'
            f'local r = discovery.scan {{ mnemonic = "{MNEMONIC}", purpose = 84, gap_limit = 500, batch_size = 500, parallel = 2,'
            f' source = "electrum:tcp://127.0.0.1:{server.port}" }}\n'
            'print(r.accounts[1].last_used.receive, r.totals.addresses_queried)')
    result = subprocess.run([keyhost_bin, "eval", code], capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"}, timeout=600)
    assert result.returncode == 0, result.stderr
    last, queried = result.stdout.split()
    assert last == "599"
    stats = server.stats()
    assert stats["largest_batch"] == 100 and stats["max_open"] <= 2 and stats["connections"] <= 2, stats
    assert stats["calls"]["blockchain.scripthash.get_history"] == int(queried)


def test_lua_refuses_electrum_options_without_an_electrum_source(keyhost_bin, tmp_path):
    code = ('local discovery = require "keyhost.discovery"\n'
            f'print(pcall(discovery.scan, {{ mnemonic = "{MNEMONIC}", source = {{}}, electrum_fingerprint = "{"00" * 32}" }}))')
    result = subprocess.run([keyhost_bin, "eval", code], capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"})
    assert "option 'electrum_fingerprint' goes with an Electrum source" in result.stdout + result.stderr
