"""A link's time is the signer's word; each verifier bounds it by what it knows (docs/payments.md, "What a run's
`now` guarantees"), driven through the built binary with links signed by the chain oracle (cbor2 + coincurve):
the payee's `receive` refuses a paying link dated past its clock by more than 300 s, one dated before it made the
request, and a link dated before the one it follows; the ledger (its SQLite file and its HTTP service) refuses the
last, a deposit link past its clock, and one older than the token's max_deposit_age."""
import json
import subprocess
import time

import cbor2
import coincurve

from test_token_payments import (CASH, UNIT, check_request, free_port, holder_secret, link, payment_text, refused,
                                 world)  # noqa: F401 (world is a fixture)
import chain_oracle as oracle


def test_the_payee_bounds_the_time_of_what_it_receives(world):
    a, b = world.wallet("a"), world.wallet("b")
    a.withdraw([10, 20])
    tokens = {cbor2.loads(t)["token"]["value"]: t for t in a.issued}
    a_key = holder_secret(a)
    before_request = int(time.time())
    _, req_text = b.request(30, keys=2)
    request, rid = check_request(req_text)
    created = request["created"]
    assert before_request <= created <= int(time.time()), "the request carries when it was made, signed"
    k1, k2 = request["keys"]
    before = b.snapshot()

    def offer(chains, *phrases):
        refused(b.receive(world.write("crafted", payment_text(rid, chains))), "nothing was received", *phrases)
        assert b.snapshot() == before

    future = int(time.time()) + 3600
    offer([{"token": tokens[10], "transfers": [link(k1, tokens[10], [], a_key, time_=future)]}],
          "more than 300 s after this wallet's clock")
    offer([{"token": tokens[10], "transfers": [link(k1, tokens[10], [], a_key, time_=created - 5)]}],
          "before this wallet made the request", "backdated")
    middle = coincurve.PrivateKey()
    first = link(middle.public_key.format(), tokens[10], [], a_key, time_=created + 60)
    second = link(k1, tokens[10], [first], middle, time_=created + 30)
    offer([{"token": tokens[10], "transfers": [first, second]}],
          f"transfer 2 of 2 is dated {created + 30}, before the time of the link it follows (transfer 1, dated {created + 60})")

    # Inside the bounds, the same tokens are taken.
    ok = b.receive(world.write("crafted", payment_text(rid, [
        {"token": tokens[10], "transfers": [link(k1, tokens[10], [], a_key, time_=created)]},
        {"token": tokens[20], "transfers": [link(k2, tokens[20], [], a_key, time_=int(time.time()) + 200)]}])))
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["complete"]


def test_the_ledger_bounds_the_time_of_a_deposit(world):
    a = world.wallet("a")
    a_key = holder_secret(a)
    deposit_key = bytes([2]) + bytes.fromhex(world.issuer_x)
    now = int(time.time())

    def issued(*extra):
        text = world.ok("token", "issue", "--program", CASH, "--value", "5", "--unit", UNIT, "--to", a.holder,
                        "--issuer-key-env", "ISSUER", *extra).stdout.strip()
        return oracle.b64(text.split(":", 1)[1])

    def chain_file(token, times):
        middle = coincurve.PrivateKey()
        first = link(middle.public_key.format(), token, [], a_key, time_=times[0])
        second = link(deposit_key, token, [first], middle, time_=times[1])
        return world.write("deposit", oracle.armor("khchain1:", oracle.canonical({"token": token, "transfers": [first, second]})))

    day = issued("--max-deposit-age", "86400")
    assert cbor2.loads(day)["token"]["limits"] == {"max_deposit_age": 86400}
    backwards = chain_file(issued(), [now - 60, now - 120])
    future = chain_file(issued(), [now + 3600, now + 3600])
    stale = chain_file(day, [now - 90_000, now - 90_000])
    young = chain_file(day, [now - 80_000, now - 80_000])

    port = free_port()
    ledger = str(world.dir / "ledger.db")
    server = subprocess.Popen([world.bin, "token", "ledger", "serve", "--listen", f"127.0.0.1:{port}", "--db", f"sqlite:{ledger}",
                               "--issuer", world.issuer_x], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=world.env, cwd=world.dir)
    try:
        line = server.stdout.readline()
        assert f"listening on http://127.0.0.1:{port}" in line, line
        for where in (f"sqlite:{world.dir / 'direct.db'}", f"http://127.0.0.1:{port}"):
            for path, phrases in ((backwards, ["before the time of the link it follows"]),
                                  (future, ["future_time" if where.startswith("http") else "after the ledger's clock"]),
                                  (stale, ["stale_deposit" if where.startswith("http") else "max_deposit_age", "86400"])):
                out, _ = world.deposit(path, where)
                assert out.returncode == 1, (where, path, out.stdout, out.stderr)
                assert all(p in out.stderr for p in phrases), (where, out.stderr)
            out, results = world.deposit(young, where)
            assert out.returncode == 0, out.stderr
            assert [r["result"] for r in results] == ["accepted"]
    finally:
        server.terminate()
        server.wait(timeout=60)
