"""keyhost discover and BDK's Esplora client (bdkpython) side by side against one local Esplora-like server that
adds a delay per request and per new connection, as a distant server would (issue 21).

The wallet is BIP84 on the BIP39 test mnemonic, used at every receive index below DEPTH (and change 0), gap 20,
one account. BDK's derivation makes the history (addresses and script hashes), so both clients look for what
an independent implementation says is there; both must find the same last used indexes.

    .venv/bin/python esplora_vs_bdk.py KEYHOST DEPTH DELAY_MS PARALLEL
    -> keyhost_ms=… keyhost_connections=… keyhost_requests=… bdk_ms=… bdk_connections=… bdk_requests=… last=…
"""
import hashlib
import json
import os
import pathlib
import subprocess
import sys
import time

import bdkpython as bdk

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "Tests" / "e2e"))
from esplora_server import EsploraTestServer  # noqa: E402

MNEMONIC = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"
GAP = 20


def wallet():
    key = bdk.DescriptorSecretKey(bdk.NetworkKind.MAIN, bdk.Mnemonic.from_string(MNEMONIC), None)
    return bdk.Wallet(bdk.Descriptor.new_bip84(key, bdk.KeychainKind.EXTERNAL, bdk.NetworkKind.MAIN),
                      bdk.Descriptor.new_bip84(key, bdk.KeychainKind.INTERNAL, bdk.NetworkKind.MAIN),
                      bdk.Network.BITCOIN, bdk.Persister.new_in_memory())


def mempool_tx(script, n):
    """An Esplora transaction object paying `script` from a made-up outpoint, its txid computed from its bytes."""
    prevout = hashlib.sha256(b"keyhost esplora bench" + script + n.to_bytes(4, "little")).digest()
    raw = ((2).to_bytes(4, "little") + b"\x01" + prevout + bytes(4) + b"\x00" + b"\xff" * 4
           + b"\x01" + (10000).to_bytes(8, "little") + bytes([len(script)]) + script + bytes(4))
    txid = hashlib.sha256(hashlib.sha256(raw).digest()).digest()[::-1].hex()
    return {"txid": txid, "version": 2, "locktime": 0, "size": len(raw), "weight": 4 * len(raw), "fee": 0,
            "vin": [{"txid": prevout[::-1].hex(), "vout": 0, "prevout": None, "scriptsig": "", "scriptsig_asm": "",
                     "witness": [], "is_coinbase": False, "sequence": 4294967295}],
            "vout": [{"scriptpubkey": script.hex(), "value": 10000}],
            "status": {"confirmed": False}}


def history(depth):
    w = wallet()
    used, txs = [], {}
    for keychain, indexes in ((bdk.KeychainKind.EXTERNAL, range(depth)), (bdk.KeychainKind.INTERNAL, [0])):
        for i in indexes:
            info = w.peek_address(keychain, i)
            script = info.address.script_pubkey().to_bytes()
            used.append(str(info.address))
            txs[hashlib.sha256(script).hexdigest()] = [mempool_tx(script, i)]  # Esplora: SHA-256, not reversed
    return used, txs


def timed(server, body):
    before = dict(server.stats())
    start = time.perf_counter()
    result = body()
    elapsed = (time.perf_counter() - start) * 1000
    after = server.stats()
    return result, elapsed, after["connections"] - before["connections"], after["requests"] - before["requests"]


def main():
    keyhost, depth, delay, parallel = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
    used, txs = history(depth)
    server = EsploraTestServer(used, txs=txs, delay_ms=delay, connect_delay_ms=delay)
    port = server.start()
    url = f"http://127.0.0.1:{port}"

    def run_keyhost():
        out = subprocess.run([keyhost, "discover", "--mnemonic-env", "W", "--purpose", "84", "--accounts", "0-0", "--gap-limit", str(GAP),
                              "--source", f"esplora:{url}", "--parallel", str(parallel), "--json"],
                             capture_output=True, text=True, env={"PATH": "/usr/bin:/bin", "W": MNEMONIC}, check=True)
        account = json.loads(out.stdout)["accounts"][0]
        return account["last_used"]

    def run_bdk():
        w = wallet()
        client = bdk.EsploraClient(url)
        w.apply_update(client.full_scan(w.start_full_scan().build(), GAP, parallel))
        return {"receive": w.derivation_index(bdk.KeychainKind.EXTERNAL), "change": w.derivation_index(bdk.KeychainKind.INTERNAL)}

    k_last, k_ms, k_conns, k_requests = timed(server, run_keyhost)
    b_last, b_ms, b_conns, b_requests = timed(server, run_bdk)
    server.stop()
    if k_last != b_last or k_last.get("receive") != depth - 1:
        sys.exit(f"the clients disagree: keyhost {k_last}, BDK {b_last} (expected receive {depth - 1})")
    print(f"keyhost_ms={k_ms:.0f} keyhost_connections={k_conns} keyhost_requests={k_requests} "
          f"bdk_ms={b_ms:.0f} bdk_connections={b_conns} bdk_requests={b_requests} last={k_last['receive']}")


if __name__ == "__main__":
    main()
