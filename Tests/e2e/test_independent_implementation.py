"""An independent implementer writes a token, a transfer chain and a receipt from docs/payments.md alone, with
cbor2 and coincurve, and keyhost takes each: it imports and runs the token, its ledger accepts the chain, and
verify-receipt accepts the receipt. Anything the docs leave out makes this test fail."""
import hashlib
import json
import os
import time

import cbor2
import coincurve

from test_token_payments import CASH, UNIT, holder_secret, oracle, world  # noqa: F401  (world is a fixture)

ISSUER = coincurve.PrivateKey(hashlib.sha256(b"an independent issuer").digest())
ISSUER_X = coincurve.PublicKeyXOnly.from_secret(ISSUER.secret).format()


def tagged(tag, data):
    t = hashlib.sha256(tag.encode()).digest()
    return hashlib.sha256(t + t + data).digest()


def issue(program, value, holder, **extra):
    """A signed token, as docs/payments.md "Tokens" describes it; returns its armoured line and encoding."""
    token = {"v": 1, "id": os.urandom(32), "issuer": ISSUER_X, "value": value, "unit": UNIT, "program": program,
             "program_kind": "lua54-source", "program_sha256": hashlib.sha256(program).digest(), "holder": holder, **extra}
    sig = ISSUER.sign_schnorr(tagged("keyhost/token/v1", cbor2.dumps(token, canonical=True)), os.urandom(32))
    encoded = cbor2.dumps({"token": token, "sig": sig}, canonical=True)
    return "khtok1:" + oracle.base64.urlsafe_b64encode(encoded).decode().rstrip("="), encoded


def test_a_token_chain_and_receipt_written_from_the_docs(world):
    a = world.wallet("a")
    with open(CASH, "rb") as f:
        cash = f.read()

    # The token: keyhost imports it, sees the issuer's signature hold, and runs it in a payment and a deposit.
    line, token_bytes = issue(cash, 250, bytes.fromhex(a.holder), meta={"series": "docs"})
    a.ok("token", "import", world.write("token", line))
    [inspected] = json.loads(a.ok("token", "inspect", world.write("token", line), "--json").stdout)["tokens"]
    assert inspected["signature_valid"] is True and inspected["value"] == 250 and inspected["state"] == "held"
    tid = cbor2.loads(token_bytes)["token"]["id"].hex()
    deposit_path = world.fresh("deposit")
    a.ok("token", "deposit-chains", tid, "-o", deposit_path)
    ledger = f"sqlite:{world.dir / 'ledger.db'}"
    out = world.kh("token", "deposit", deposit_path, "--ledger", ledger, "--issuer", ISSUER_X.hex(), "--json")
    assert out.returncode == 0, out.stderr
    assert [r["result"] for r in json.loads(out.stdout)["results"]] == ["accepted"]

    # The chain: a link made here, with the receipt of the run cash.lua makes (computed, not run).
    line2, token2 = issue(cash, 100, bytes.fromhex(a.holder))
    link = oracle.make_link(token2, [], holder_secret(a), bytes([2]) + ISSUER_X, int(time.time()) - 5)
    chain = oracle.armor("khchain1:", oracle.canonical({"token": token2, "transfers": [link]}))
    out = world.kh("token", "deposit", world.write("chain", chain), "--ledger", ledger, "--issuer", ISSUER_X.hex(), "--json")
    assert out.returncode == 0, out.stderr
    assert [r["result"] for r in json.loads(out.stdout)["results"]] == ["accepted"]

    # The receipt: a voucher run by its holder here, with the effects the program makes.
    holder = coincurve.PrivateKey()
    voucher = b"local t = ...\nt.emit { redeemed_at = t.args.shop, hop = t.hops }\n"
    _, vbytes = issue(voucher, 5, holder.public_key.format())
    args, now, effects = {"shop": "corner"}, 1_900_000_000, [{"redeemed_at": "corner", "hop": 0}]
    chain_before = oracle.canonical({"token": vbytes, "transfers": []})
    statement = {"v": 1, "token_id": cbor2.loads(vbytes)["token"]["id"], "chain_sha256": hashlib.sha256(chain_before).digest(),
                 "args_sha256": hashlib.sha256(oracle.canonical(args)).digest(), "now": now,
                 "effects_sha256": hashlib.sha256(oracle.canonical(effects)).digest(), "holder": holder.public_key.format()}
    sig = oracle.compact(holder.sign(tagged("keyhost/receipt/v1", oracle.canonical(statement)), hasher=None))
    receipt = {"receipt": statement, "chain": chain_before, "args": args, "effects": effects, "sig": sig}
    good = world.write("receipt", oracle.armor("khrcpt1:", oracle.canonical(receipt)))
    verified = json.loads(world.ok("token", "verify-receipt", good, "--json").stdout)
    assert verified["valid"] is True and verified["effects_match"] is True, verified

    # Effects the program does not make (re-signed, so only the re-run can tell) are refused.
    effects = [{"redeemed_at": "elsewhere", "hop": 0}]
    statement["effects_sha256"] = hashlib.sha256(oracle.canonical(effects)).digest()
    sig = oracle.compact(holder.sign(tagged("keyhost/receipt/v1", oracle.canonical(statement)), hasher=None))
    bad = {**receipt, "receipt": statement, "effects": effects, "sig": sig}
    out = world.kh("token", "verify-receipt", world.write("receipt", oracle.armor("khrcpt1:", oracle.canonical(bad))), "--json")
    assert out.returncode == 1 and json.loads(out.stdout)["effects_match"] is False, out.stdout
