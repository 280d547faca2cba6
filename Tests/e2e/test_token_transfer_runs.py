"""Only a token's program moves it (docs/payments.md, "Who may move a token"). The holder key of a software
wallet is in its file, so a holder can sign transfer links by hand; every verifier (the payee's receive, the
ledger's deposit over SQLite, PostgreSQL's child and the HTTP service, verify-proof) re-runs the program
for each link and refuses any link that no run of it made.

The adversary here is Python: it reads the holder key from the wallet file with sqlite3 and signs links with
coincurve, computing receipts from the docs (Tests/Oracles/chain_oracle.py)."""
import json
import os
import signal
import subprocess
import time

import cbor2
import coincurve

from test_token_payments import (UNIT, check_request, free_port, holder_secret, oracle, payment_text, refused,
                                 world)  # noqa: F401  (world is a fixture)

VOUCHER = "local t = ...\nt.emit { redeemed_at = t.args.shop }\n"


def issue_voucher(world, wallet, value=1000):
    program = world.write("voucher.lua", VOUCHER)
    line = world.ok("token", "issue", "--program", program, "--value", str(value), "--unit", UNIT, "--to", wallet.holder,
                    "--issuer-key-env", "ISSUER").stdout.strip()
    wallet.ok("token", "import", world.write("voucher", line))
    return oracle.b64(line.split(":", 1)[1])


def deposit_key(world):
    return bytes([2]) + bytes.fromhex(world.issuer_x)


def chains_file(world, chains):
    return world.write("chains", "\n".join(oracle.armor("khchain1:", oracle.canonical(c)) for c in chains))


def serve(world, ledger):
    port = free_port()
    server = subprocess.Popen([world.bin, "token", "ledger", "serve", "--listen", f"127.0.0.1:{port}", "--db", f"sqlite:{ledger}",
                               "--issuer", world.issuer_x], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=world.env, cwd=world.dir)
    line = server.stdout.readline()
    assert f"listening on http://127.0.0.1:{port}" in line, (line, server.stderr.read() if server.poll() is not None else "")
    return server, f"http://127.0.0.1:{port}"


def refused_by_ledgers(world, chains, *phrases):
    """Each chain is refused by the SQLite ledger in keyhost and by the HTTP service; nothing is recorded."""
    path = chains_file(world, chains)
    ledger = world.dir / f"ledger{world.files}.db"
    out, _ = world.deposit(path, f"sqlite:{ledger}")
    refused(out, *phrases)
    server, url = serve(world, ledger)
    try:
        out, _ = world.deposit(path, url)
        refused(out, *phrases)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
    assert oracle_rows(ledger) == 0


def oracle_rows(ledger):
    import sqlite3
    db = sqlite3.connect(ledger)
    try:
        return db.execute("SELECT count(*) FROM deposits").fetchone()[0]
    finally:
        db.close()


def test_a_voucher_signed_over_by_hand_is_refused_by_every_verifier(world):
    a, b = world.wallet("a"), world.wallet("b")
    voucher = issue_voucher(world, a)
    key = holder_secret(a)
    now = int(time.time()) - 5

    # To the issuer's deposit key: a random receipt, and the receipt a run would have had if it had transferred.
    for receipt in (os.urandom(32), None):
        forged = {"token": voucher, "transfers": [oracle.make_link(voucher, [], key, deposit_key(world), now, receipt=receipt)]}
        refused_by_ledgers(world, [forged], "unauthorised", "does not hand the token on", "voucher")

    # Wrapped in a payment to a key of B's request: B refuses it and records nothing.
    _, req_text = b.request(1000, keys=1)
    request, rid = check_request(req_text)
    before = b.snapshot()
    # Dated when B asked: a link dated before the request is refused as backdated before any run.
    forged = {"token": voucher, "transfers": [oracle.make_link(voucher, [], key, request["keys"][0], request["created"])]}
    out = b.receive(world.write("payment", payment_text(rid, [forged])))
    refused(out, "does not hand the token on", "nothing was received")
    assert b.snapshot() == before

    # A proof made of two hand-signed links of the voucher blames nobody.
    other = coincurve.PrivateKey().public_key.format()
    proof = {"v": 1, "token": voucher, "common": [], "a": forged["transfers"][0],
             "b": oracle.make_link(voucher, [], key, other, now)}
    out = world.kh("token", "verify-proof", world.write("proof", oracle.armor("khproof1:", oracle.canonical(proof))))
    refused(out, "not a valid double-spend proof", "does not hand the token on")

    # The voucher itself still runs as a voucher, and paying with it is refused by the payer's own wallet.
    [(vid,)] = [(cbor2.loads(voucher)["token"]["id"].hex(),)]
    req_path, _ = b.request(1000, keys=1)
    refused(a.pay(req_path), "did not hand the token")
    ran = a.ok("token", "run", vid, "--arg", "shop=corner", "--json")
    assert json.loads(ran.stdout)["effects"] == [{"redeemed_at": "corner"}]


def test_forged_links_of_a_cash_token_are_refused(world):
    a, b = world.wallet("a"), world.wallet("b")
    [tid] = a.withdraw([100])
    cash = a.issued[0]
    key = holder_secret(a)
    now = int(time.time()) - 5
    dk = deposit_key(world)
    stranger = coincurve.PrivateKey().public_key.format()

    genuine_elsewhere = oracle.make_link(cash, [], key, stranger, now)["transfer"]["receipt"]
    wrong_effects = oracle.receipt_id(cash, [], dk, now, {}, oracle.cash_effects(cash, [], stranger))
    wrong_args = oracle.receipt_id(cash, [], dk, now, {"memo": "x"}, oracle.cash_effects(cash, [], dk))
    for receipt in (os.urandom(32), genuine_elsewhere, wrong_effects, wrong_args):
        forged = {"token": cash, "transfers": [oracle.make_link(cash, [], key, dk, now, receipt=receipt)]}
        refused_by_ledgers(world, [forged], "unauthorised", "is not the receipt of the program's run")

    # The same link with the receipt the program's run has (computed from the docs alone) is accepted: the
    # rule refuses forgeries, not independent implementations.
    honest = {"token": cash, "transfers": [oracle.make_link(cash, [], key, dk, now)]}
    out, results = world.deposit(chains_file(world, [honest]), f"sqlite:{world.dir / 'honest.db'}")
    assert out.returncode == 0, out.stderr
    assert [(r["token_id"], r["result"]) for r in results] == [(tid, "accepted")]

    # A payee refuses a forged receipt too.
    _, req_text = b.request(100, keys=1)
    request, rid = check_request(req_text)
    forged = {"token": cash, "transfers": [oracle.make_link(cash, [], key, request["keys"][0], request["created"], receipt=os.urandom(32))]}
    refused(b.receive(world.write("payment", payment_text(rid, [forged]))), "is not the receipt of the program's run", "nothing was received")


def test_a_chain_in_the_old_format_is_refused_clearly(world):
    a = world.wallet("a")
    a.withdraw([100])
    cash = a.issued[0]
    token = cbor2.loads(cash)["token"]
    import hashlib
    body = {"v": 1, "token_id": token["id"], "index": 0, "previous": hashlib.sha256(cash).digest(), "to": deposit_key(world),
            "time": int(time.time()) - 5, "receipt": os.urandom(32)}
    sig = oracle.compact(holder_secret(a).sign(oracle.tagged("keyhost/transfer/v1", oracle.canonical(body)), hasher=None))
    old = {"token": cash, "transfers": [{"transfer": body, "sig": sig}]}
    out, _ = world.deposit(chains_file(world, [old]), f"sqlite:{world.dir / 'old.db'}")
    refused(out, "format 1 transfer", "does not show the run", "pay again")
