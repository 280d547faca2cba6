"""cbor2 + coincurve as an independent implementation of keyhost's transfer chains and fraud proofs
(docs/payments.md).

  verify          -> for each khchain1 line on stdin: "ok <current holder hex>" or "bad <reason>"
  make TOKEN K... -> a chain for the khtok1 token TOKEN: private key K[0] (the token's holder) hands it
                     to K[1]'s public key, K[1] to K[2]'s, …; prints the khchain1 line. Each link names
                     the receipt of the run that made it, computed here from docs/payments.md: the run's
                     effects are those of stdlib/keyhost/cash.lua when the token carries that program,
                     none otherwise.
  proof           -> for the khproof1 line on stdin: "ok <key that signed twice>" or "bad <reason>"
"""
import base64
import hashlib
import sys

import cbor2
import coincurve


def b64(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def armor(prefix, data):
    return prefix + base64.urlsafe_b64encode(data).decode().rstrip("=")


def tagged(tag, data):
    t = hashlib.sha256(tag.encode()).digest()
    return hashlib.sha256(t + t + data).digest()


def canonical(value):
    return cbor2.dumps(value, canonical=True)


def der(compact):
    def integer(b):
        b = b.lstrip(b"\0")
        if not b or b[0] & 0x80:
            b = b"\0" + b
        return bytes([2, len(b)]) + b
    body = integer(compact[:32]) + integer(compact[32:])
    return bytes([0x30, len(body)]) + body


def compact(der_sig):
    r_len = der_sig[3]
    r = int.from_bytes(der_sig[4:4 + r_len], "big")
    s = int.from_bytes(der_sig[6 + r_len:], "big")
    return r.to_bytes(32, "big") + s.to_bytes(32, "big")


TRANSFER_TAG = "keyhost/transfer/v2"
RECEIPT_TAG = "keyhost/receipt/v1"


def receipt_id(token_bytes, links_before, to, now, args=None, effects=()):
    """The id of the receipt of the run that hands the token to `to` (docs/payments.md): the tagged hash
    of the receipt statement, which binds the chain before the run, its arguments, time and effects."""
    token = cbor2.loads(token_bytes)["token"]
    holder = token["holder"] if not links_before else links_before[-1]["transfer"]["to"]
    chain = canonical({"token": token_bytes, "transfers": list(links_before)})
    statement = {
        "v": 1, "token_id": token["id"], "chain_sha256": hashlib.sha256(chain).digest(),
        "args_sha256": hashlib.sha256(canonical(args if args is not None else {})).digest(), "now": now,
        "effects_sha256": hashlib.sha256(canonical(list(effects))).digest(), "holder": holder, "transfer_to": to,
    }
    return tagged(RECEIPT_TAG, canonical(statement))


def cash_effects(token_bytes, links_before, to):
    """What stdlib/keyhost/cash.lua emits when it hands the token to `to`."""
    token = cbor2.loads(token_bytes)["token"]
    return [{"kind": "transfer", "to": to.hex(), "value": token["value"], "unit": token["unit"], "hop": len(links_before) + 1}]


def effects_of(token_bytes, links_before, to):
    program = cbor2.loads(token_bytes)["token"]["program"]
    return cash_effects(token_bytes, links_before, to) if b"standard transferable token: cash" in program else []


def make_link(token_bytes, links_before, key, to, now, args=None, receipt=None):
    """A transfer signed by `key` (coincurve) continuing `links_before`; with no `receipt`, the one of
    the run the token's program makes (see effects_of)."""
    token = cbor2.loads(token_bytes)["token"]
    previous = hashlib.sha256(token_bytes).digest() if not links_before else hashlib.sha256(canonical(links_before[-1])).digest()
    args = args if args is not None else {}
    if receipt is None:
        receipt = receipt_id(token_bytes, links_before, to, now, args, effects_of(token_bytes, links_before, to))
    body = {"v": 2, "token_id": token["id"], "index": len(links_before), "previous": previous, "to": to,
            "time": now, "args": args, "receipt": receipt}
    sig = compact(key.sign(tagged(TRANSFER_TAG, canonical(body)), hasher=None))
    return {"transfer": body, "sig": sig}


def check_links(token_bytes, links):
    """Returns the current holder after the links, or raises ValueError."""
    token = cbor2.loads(token_bytes)["token"]
    holder = token["holder"]
    previous = hashlib.sha256(token_bytes).digest()
    for i, env in enumerate(links):
        body = env["transfer"]
        if body["token_id"] != token["id"] or body["index"] != i or body["previous"] != previous:
            raise ValueError(f"link {i} does not continue the chain")
        if body["v"] != 2:
            raise ValueError(f"link {i} is format {body['v']}")
        digest = tagged(TRANSFER_TAG, canonical(body))
        if not coincurve.PublicKey(holder).verify(der(env["sig"]), digest, hasher=None):
            raise ValueError(f"link {i} not signed by {holder.hex()}")
        holder = body["to"]
        previous = hashlib.sha256(canonical(env)).digest()
    return holder


def main():
    command = sys.argv[1]
    if command == "verify":
        for line in sys.stdin.read().split():
            chain = cbor2.loads(b64(line.split(":", 1)[1]))
            try:
                print("ok", check_links(chain["token"], chain["transfers"]).hex())
            except ValueError as e:
                print("bad", e)
    elif command == "make":
        token_bytes = b64(sys.argv[2].split(":", 1)[1])
        token = cbor2.loads(token_bytes)["token"]
        keys = [coincurve.PrivateKey(bytes.fromhex(k)) for k in sys.argv[3:]]
        del token
        links = []
        for i in range(len(keys) - 1):
            links.append(make_link(token_bytes, links, keys[i], keys[i + 1].public_key.format(compressed=True), 1_900_000_000 + i))
        print(armor("khchain1:", canonical({"token": token_bytes, "transfers": links})))
    elif command == "proof":
        proof = cbor2.loads(b64(sys.stdin.read().strip().split(":", 1)[1]))
        try:
            holder = check_links(proof["token"], proof["common"])
            a, b = proof["a"], proof["b"]
            if canonical(a) == canonical(b):
                raise ValueError("the same transfer twice")
            n = len(proof["common"])
            prev = hashlib.sha256(proof["token"]).digest() if n == 0 else hashlib.sha256(canonical(proof["common"][-1])).digest()
            for env in (a, b):
                body = env["transfer"]
                if body["index"] != n or body["previous"] != prev:
                    raise ValueError("a transfer does not continue the common links")
                if not coincurve.PublicKey(holder).verify(der(env["sig"]), tagged(TRANSFER_TAG, canonical(body)), hasher=None):
                    raise ValueError("a transfer is not signed by the holder")
            print("ok", holder.hex())
        except ValueError as e:
            print("bad", e)


# Importable too: Tests/e2e/test_token_payments.py reuses check_links and the encodings.
if __name__ == "__main__":
    main()
