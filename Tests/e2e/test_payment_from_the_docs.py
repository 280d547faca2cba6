"""A cash payment written from docs/payments.md alone (Tests/Oracles/chain_oracle.py: cbor2 + coincurve) and taken
by keyhost: the oracle issues cash tokens to a key of its own and pays a keyhost wallet's request; the payee
receives, pays on and deposits, the ledgers (SQLite, the HTTP service) take chains of the oracle's links, and
verify-receipt takes the oracle's receipts. Each receipt id is computed from the docs' words (the chain's encoding,
the arguments map, the cash program's record, records as CBOR), never by running anything; a link whose receipt id
follows a plausible misreading of those words is refused by every verifier."""
import hashlib
import json
import time

import cbor2
import coincurve

from test_token_payments import CASH, ISSUER, UNIT, check_request, refused, world  # noqa: F401  (world is a fixture)
from test_token_transfer_runs import chains_file, deposit_key, oracle, serve

ISSUER_KEY = coincurve.PrivateKey(bytes.fromhex(ISSUER))


def cash_tokens(values, holder):
    """Cash tokens of the world's issuer, signed here."""
    program = open(CASH, "rb").read()
    return [oracle.issue(ISSUER_KEY, program, v, UNIT, holder) for v in values]


def token_id(token_bytes):
    return cbor2.loads(token_bytes)["token"]["id"].hex()


def verify_receipt(world, encoded):
    out = world.kh("token", "verify-receipt", world.write("receipt", oracle.armor("khrcpt1:", encoded)), "--json")
    return out, json.loads(out.stdout)


def test_keyhost_takes_a_cash_payment_the_docs_describe(world):
    payer = coincurve.PrivateKey()
    tokens = cash_tokens([100, 50, 20, 5], payer.public_key.format())
    b, c = world.wallet("b"), world.wallet("c")

    # B asks for 125; the oracle pays it with 100 + 20 + 5, one key of the request each.
    _, req_text = b.request(125, keys=4)
    now = int(time.time())
    encoded, chains = oracle.pay(req_text, [(t, []) for t in tokens], payer, now)
    assert sorted(cbor2.loads(ch["token"])["token"]["value"] for ch in chains) == [5, 20, 100]
    got = b.receive(world.write("payment", oracle.armor("khpay1:", encoded)))
    assert got.returncode == 0, got.stderr
    received = json.loads(got.stdout)
    assert received["complete"] and received["amount"] == 125
    assert sorted((t["result"]) for t in received["tokens"]) == ["added"] * 3

    # B pays C 20 with the token whose first link the oracle made; C deposits it (link 3, keyhost's). The ledger
    # re-runs all three links, the oracle's included.
    twenty = next(token_id(ch["token"]) for ch in chains if cbor2.loads(ch["token"])["token"]["value"] == 20)
    req_path, _ = c.request(20, keys=1)
    paid = b.pay(req_path)
    assert paid.returncode == 0, paid.stderr
    assert c.receive(world.write("payment", json.loads(paid.stdout)["payment"])).returncode == 0
    deposit_path = world.fresh("deposit")
    c.ok("token", "deposit-chains", twenty, "-o", deposit_path)
    out, results = world.deposit(deposit_path, f"sqlite:{world.dir / 'ledger.db'}")
    assert out.returncode == 0, out.stderr
    assert [(r["token_id"], r["result"]) for r in results] == [(twenty, "accepted")]

    # The 50 the payment left: the oracle hands it to a key of its own, then deposits it (two links of its own, the
    # second's receipt over a chain holding the first), at the SQLite ledger and at the HTTP service.
    fifty = next(t for t in tokens if cbor2.loads(t)["token"]["value"] == 50)
    second = coincurve.PrivateKey()
    links = [oracle.make_link(fifty, [], payer, second.public_key.format(), now)]
    links.append(oracle.make_link(fifty, links, second, deposit_key(world), now))
    path = chains_file(world, [{"token": fifty, "transfers": links}])
    out, results = world.deposit(path, f"sqlite:{world.dir / 'ledger2.db'}")
    assert out.returncode == 0, out.stderr
    assert [r["result"] for r in results] == ["accepted"]
    server, url = serve(world, world.dir / "ledger3.db")
    try:
        out, results = world.deposit(path, url)
        assert out.returncode == 0, out.stderr
        assert [r["result"] for r in results] == ["accepted"]
    finally:
        server.terminate()
        server.wait(timeout=30)

    # The receipt of the run that made the second link, written here: verify-receipt re-runs the program (and the
    # chain's first link) and finds the same effects and the same transfer.
    effects = oracle.cash_effects(fifty, links[:1], deposit_key(world))
    assert effects == [{"kind": "transfer", "to": deposit_key(world).hex(), "value": 50, "unit": UNIT, "hop": 2}]
    receipt = oracle.signed_receipt(second, fifty, links[:1], now, {}, effects, deposit_key(world))
    assert oracle.tagged("keyhost/receipt/v1", oracle.canonical(cbor2.loads(receipt)["receipt"])) == links[1]["transfer"]["receipt"]
    out, report = verify_receipt(world, receipt)
    assert out.returncode == 0 and report["valid"] and report["effects_match"], report


def test_links_whose_receipt_ids_misread_the_docs_are_refused(world):
    """Each receipt id here is what an implementer gets by misreading one of the docs' statements; the payee and
    the ledger refuse each link, and take the one built as the docs say."""
    payer = coincurve.PrivateKey()
    b = world.wallet("b")
    [token] = cash_tokens([40], payer.public_key.format())
    _, req_text = b.request(40, keys=1)
    request, rid = check_request(req_text)
    [key] = request["keys"]
    now = int(time.time())
    chain_bytes = oracle.chain_encoding(token, [])
    record = oracle.cash_effects(token, [], key)[0]

    def statement(**changes):
        s = oracle.receipt_statement(token, [], now, {}, [record], key)
        s.update(changes)
        return oracle.tagged("keyhost/receipt/v1", oracle.canonical(s))

    sha = lambda data: hashlib.sha256(data).digest()  # noqa: E731
    misreadings = {
        "hop counted from 0": statement(effects_sha256=sha(oracle.canonical([{**record, "hop": 0}]))),
        "the key in upper-case hex": statement(effects_sha256=sha(oracle.canonical([{**record, "to": key.hex().upper()}]))),
        "the record alone, not the array": statement(effects_sha256=sha(oracle.canonical(record))),
        "no arguments as an empty array": statement(args_sha256=sha(oracle.canonical([]))),
        "the token as its map, not its signed bytes": statement(chain_sha256=sha(oracle.canonical(
            {"token": cbor2.loads(token), "transfers": []}))),
        "the chain as the armoured text": statement(chain_sha256=sha(oracle.armor("khchain1:", chain_bytes).encode())),
        "no transfer_to": oracle.receipt_id(token, [], None, now, {}, [record]),
    }
    right = oracle.receipt_id(token, [], key, now, {}, [record])
    assert right == statement() and right not in misreadings.values()
    for reading, receipt in misreadings.items():
        chain = {"token": token, "transfers": [oracle.make_link(token, [], payer, key, now, receipt=receipt)]}
        payment = oracle.armor("khpay1:", oracle.canonical({"v": 1, "request": rid, "chains": [oracle.canonical(chain)]}))
        received = b.receive(world.write("payment", payment))
        assert received.returncode == 1, f"{reading}: received ({received.stdout})"
        refused(received, "is not the receipt of the program's run", "nothing was received")
        deposit = {"token": token, "transfers": [oracle.make_link(token, [], payer, deposit_key(world), now, receipt=receipt)]}
        out, _ = world.deposit(chains_file(world, [deposit]), f"sqlite:{world.dir / 'ledger.db'}")
        assert out.returncode == 1, f"{reading}: deposited ({out.stdout})"
        refused(out, "unauthorised", "is not the receipt of the program's run")
    encoded, _ = oracle.pay(req_text, [(token, [])], payer, now)
    got = b.receive(world.write("payment", oracle.armor("khpay1:", encoded)))
    assert got.returncode == 0, got.stderr


# A later link's receipt binds the whole envelopes before it: links re-encoded as byte strings give another id.
def test_a_later_links_receipt_hashes_the_envelopes_before_it(world):
    payer, second = coincurve.PrivateKey(), coincurve.PrivateKey()
    [token] = cash_tokens([7], payer.public_key.format())
    now = int(time.time())
    first = oracle.make_link(token, [], payer, second.public_key.format(), now)
    effects = oracle.cash_effects(token, [first], deposit_key(world))
    as_bytes = oracle.canonical({"token": token, "transfers": [oracle.canonical(first)]})
    s = oracle.receipt_statement(token, [first], now, {}, effects, deposit_key(world))
    wrong = oracle.tagged("keyhost/receipt/v1", oracle.canonical({**s, "chain_sha256": hashlib.sha256(as_bytes).digest()}))
    ledger = f"sqlite:{world.dir / 'ledger.db'}"
    bad = {"token": token, "transfers": [first, oracle.make_link(token, [first], second, deposit_key(world), now, receipt=wrong)]}
    refused(world.deposit(chains_file(world, [bad]), ledger)[0], "transfer 2 of 2", "is not the receipt of the program's run")
    good = {"token": token, "transfers": [first, oracle.make_link(token, [first], second, deposit_key(world), now)]}
    out, results = world.deposit(chains_file(world, [good]), ledger)
    assert out.returncode == 0 and [r["result"] for r in results] == ["accepted"], out.stderr


RECORDS = b"""local t = ...
t.emit { "first", "second", [1000] = t.args[1], [-1] = true, name = t.args.shop, raw = "\\255\\0", empty = {},
         list = { 1, 2, {} }, holes = { 10, nil, 30 }, nested = { a = {}, [2] = false } }
t.emit {}
t.emit "text"
t.emit(-7)
"""


def test_records_and_arguments_become_cbor_as_the_docs_say(world):
    """verify-receipt re-runs a program emitting mixed records; the oracle's effects, from the docs' rules, match."""
    holder = coincurve.PrivateKey()
    token = oracle.issue(ISSUER_KEY, RECORDS, 1, UNIT, holder.public_key.format())
    args = oracle.arguments({1: "one", "shop": "corner"})
    lua = [{1: "first", 2: "second", 1000: "one", -1: True, "name": "corner", "raw": b"\xff\x00", "empty": {},
            "list": [1, 2, {}], "holes": {1: 10, 3: 30}, "nested": {"a": {}, 2: False}}, {}, "text", -7]
    effects = [oracle.record(r) for r in lua]
    assert effects[1] == [] and effects[0]["empty"] == [] and effects[0]["list"] == [1, 2, []]
    # The first record mixes integer and text keys: deterministic CBOR's order is not cbor2's canonical one.
    assert oracle.canonical(effects[0]) != cbor2.dumps(effects[0], canonical=True)
    out, report = verify_receipt(world, oracle.signed_receipt(holder, token, [], 1_900_000_000, args, effects))
    assert out.returncode == 0 and report["valid"] and report["effects_match"], report

    # Arguments: a list is a map with integer keys; {} and no arguments are the same empty map.
    assert oracle.arguments(["one"]) == {1: "one"} and oracle.arguments({}) == oracle.arguments() == {}


def test_verify_receipt_names_a_false_transfer_claim(world):
    """A receipt that says its run handed the token on, for a program that never calls t.transfer, with the effects
    the program does make: the report says the transfer claim is false, not that the effects differ."""
    holder = coincurve.PrivateKey()
    voucher = b"local t = ...\nt.emit { redeemed = t.token.value }\n"
    token = oracle.issue(ISSUER_KEY, voucher, 9, UNIT, holder.public_key.format())
    effects = [{"redeemed": 9}]
    honest = oracle.signed_receipt(holder, token, [], 1_900_000_000, {}, effects)
    out, report = verify_receipt(world, honest)
    assert out.returncode == 0 and report["valid"], report

    claimed = deposit_key(world)
    out, report = verify_receipt(world, oracle.signed_receipt(holder, token, [], 1_900_000_000, {}, effects, claimed))
    assert out.returncode == 1 and report["valid"] is False
    assert report["effects_match"] is True, report
    assert len(report["problems"]) == 1, report
    [problem] = report["problems"]
    assert "transfer claim is false" in problem and claimed.hex() in problem and "other effects" not in problem, problem
