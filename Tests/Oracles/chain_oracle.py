"""cbor2 + coincurve as an independent implementation of keyhost's payment protocol, written from
docs/payments.md alone (each part names the docs' section it follows): tokens, transfer chains, receipts,
a program's records as CBOR, the stdlib cash program's effects, requests, cash payments and fraud proofs.

  verify                   -> for each khchain1 line on stdin: "ok <current holder hex>" or "bad <reason>"
  make TOKEN K...          -> a chain for the khtok1 token TOKEN: private key K[0] (the token's holder) hands it
                              to K[1]'s public key, K[1] to K[2]'s, …; prints the khchain1 line. Each link names
                              the receipt of the run that made it (see effects_of).
  pay REQUEST K ITEM...    -> pays the khreq1 request REQUEST with the khtok1 tokens / khchain1 chains ITEM…,
                              all held by private key K (hex): picks those that make the amount exactly, hands
                              each to its own key of the request with the cash program's receipt; prints khpay1.
  proof                    -> for the khproof1 line on stdin: "ok <key that signed twice>" or "bad <reason>"
"""
import base64
import hashlib
import itertools
import os
import pathlib
import sys

import cbor2
import coincurve

TOKEN_TAG = "keyhost/token/v1"
TRANSFER_TAG = "keyhost/transfer/v2"
RECEIPT_TAG = "keyhost/receipt/v1"
REQUEST_TAG = "keyhost/request/v1"
CURVE_ORDER = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141
# "The stdlib's cash program (stdlib/keyhost/cash.lua …) issues it byte for byte": a token carries it when its
# program_sha256 is this file's.
CASH_PROGRAM = pathlib.Path(__file__).resolve().parents[2] / "stdlib" / "keyhost" / "cash.lua"


def b64(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def armor(prefix, data):
    return prefix + base64.urlsafe_b64encode(data).decode().rstrip("=")


def unarmor(line):
    """The bytes of one armoured line (`khtok1:…`, `khchain1:…`, …)."""
    return b64(line.strip().split(":", 1)[1])


# ---------------------------------------------------------------------------------------------------------
# "Encoding": deterministic CBOR, RFC 8949 §4.2.1. Map keys sort by the bytewise order of their encodings, not
# length-first as cbor2's canonical=True does (the same for text keys; not when key types mix).


def _head(major, n):
    if n < 24:
        return bytes([major << 5 | n])
    for extra, size in ((24, 1), (25, 2), (26, 4), (27, 8)):
        if n < 1 << (8 * size):
            return bytes([major << 5 | extra]) + n.to_bytes(size, "big")
    raise ValueError(f"{n} does not fit a CBOR head")


def canonical(value):
    if isinstance(value, dict):
        pairs = sorted((canonical(k), canonical(v)) for k, v in value.items())
        if len({k for k, _ in pairs}) != len(pairs):
            raise ValueError("a map key repeats")
        return _head(5, len(pairs)) + b"".join(k + v for k, v in pairs)
    if isinstance(value, (list, tuple)):
        return _head(4, len(value)) + b"".join(canonical(v) for v in value)
    if isinstance(value, float):
        raise ValueError("floats are not used")
    return cbor2.dumps(value)  # integers, text, bytes, booleans, null: cbor2 writes each with its shortest head


# ---------------------------------------------------------------------------------------------------------
# "Signatures": a tagged hash of the signed map's encoding, taken as the message. The token's is BIP340 Schnorr by
# the issuer; links, receipts and requests are ECDSA, 64 bytes r ‖ s with low S.


def tagged(tag, data):
    t = hashlib.sha256(tag.encode()).digest()
    return hashlib.sha256(t + t + data).digest()


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


def ecdsa_sign(key, digest):
    """64 bytes r ‖ s with low S over the 32-byte digest itself (no hashing again)."""
    sig = compact(key.sign(digest, hasher=None))
    s = int.from_bytes(sig[32:], "big")
    return sig if s <= CURVE_ORDER // 2 else sig[:32] + (CURVE_ORDER - s).to_bytes(32, "big")


def ecdsa_valid(public, sig, digest):
    if len(sig) != 64 or int.from_bytes(sig[32:], "big") > CURVE_ORDER // 2:
        return False
    try:
        return coincurve.PublicKey(public).verify(der(sig), digest, hasher=None)
    except ValueError:
        return False


# ---------------------------------------------------------------------------------------------------------
# "Tokens"


def issue(issuer_key, program, value, unit, holder, token_id=None, **optional):
    """The signed token's bytes: `{token, sig}` with the issuer's BIP340 signature over the token map.
    `optional`: not_before, expires, meta, limits."""
    token = {"v": 1, "id": token_id or os.urandom(32), "issuer": coincurve.PublicKeyXOnly.from_secret(issuer_key.secret).format(),
             "value": value, "unit": unit, "program": program, "program_kind": "lua54-source",
             "program_sha256": hashlib.sha256(program).digest(), "holder": holder, **optional}
    sig = issuer_key.sign_schnorr(tagged(TOKEN_TAG, canonical(token)), os.urandom(32))
    return canonical({"token": token, "sig": sig})


def check_token(token_bytes):
    """The token map, after its issuer's signature was checked."""
    signed = cbor2.loads(token_bytes)
    token = signed["token"]
    if not coincurve.PublicKeyXOnly(token["issuer"]).verify(signed["sig"], tagged(TOKEN_TAG, canonical(token))):
        raise ValueError("the issuer's signature does not hold")
    return token


# ---------------------------------------------------------------------------------------------------------
# "Transfer chain": the token as its signed bytes (a byte string), the links as whole envelopes (maps).


def chain_encoding(token_bytes, links):
    return canonical({"token": token_bytes, "transfers": list(links)})


def previous_hash(token_bytes, links):
    return hashlib.sha256(token_bytes if not links else canonical(links[-1])).digest()


def holder_after(token_bytes, links):
    """Who holds the token after `links`: the last link's `to`, or the token's holder."""
    return links[-1]["transfer"]["to"] if links else cbor2.loads(token_bytes)["token"]["holder"]


# ---------------------------------------------------------------------------------------------------------
# "Records and arguments as CBOR". A Lua value is modelled in Python: None is nil, a str is a Lua string of its
# UTF-8, bytes a Lua string of those bytes, a list a sequence, a dict a table (keys int, str or bytes).


def record(value, depth=0):
    """What a record the program emits is, as CBOR."""
    if depth > 16:
        raise ValueError("nested deeper than 16 levels")
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        if not -2**63 <= value < 2**63:
            raise ValueError("a Lua integer is 64 bits")
        return value
    if isinstance(value, float):
        raise ValueError("records hold no floats")
    if isinstance(value, str):
        value = value.encode()
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return value
    if isinstance(value, (list, tuple)):
        value = {i + 1: v for i, v in enumerate(value)}
    if not isinstance(value, dict):
        raise ValueError(f"records hold no {type(value).__name__}")
    table = {k: v for k, v in value.items() if v is not None}
    sequence = []
    while len(sequence) + 1 in table:
        sequence.append(table[len(sequence) + 1])
    fields = {k: v for k, v in table.items() if not (isinstance(k, int) and not isinstance(k, bool) and 1 <= k <= len(sequence))}
    if not fields:
        return [record(v, depth + 1) for v in sequence]
    out = {i + 1: record(v, depth + 1) for i, v in enumerate(sequence)}
    for key, element in fields.items():
        if isinstance(key, bool) or not isinstance(key, (int, str, bytes)):
            raise ValueError(f"a key of type {type(key).__name__}: keys are strings or integers")
        if isinstance(key, bytes):
            key = key.decode("utf-8")  # a key that is not UTF-8 is refused
        out[key] = record(element, depth + 1)
    return out


def arguments(value=None):
    """A run's arguments as CBOR: always a map (nil → {}, a list → integer keys 1…n)."""
    if value is None:
        return {}
    if not isinstance(value, (dict, list, tuple)):
        raise ValueError("arguments are a table")
    converted = record(value)
    return {i + 1: v for i, v in enumerate(converted)} if isinstance(converted, list) else converted


# ---------------------------------------------------------------------------------------------------------
# Receipts ("Who may move a token": the receipt statement and its id)


def receipt_statement(token_bytes, links_before, now, args=None, effects=(), to=None):
    token = cbor2.loads(token_bytes)["token"]
    statement = {
        "v": 1, "token_id": token["id"], "chain_sha256": hashlib.sha256(chain_encoding(token_bytes, links_before)).digest(),
        "args_sha256": hashlib.sha256(canonical(args if args is not None else {})).digest(), "now": now,
        "effects_sha256": hashlib.sha256(canonical(list(effects))).digest(), "holder": holder_after(token_bytes, links_before),
    }
    if to is not None:
        statement["transfer_to"] = to
    return statement


def receipt_id(token_bytes, links_before, to, now, args=None, effects=()):
    """The id of the receipt of the run that hands the token to `to` (None: a run that hands nothing on)."""
    return tagged(RECEIPT_TAG, canonical(receipt_statement(token_bytes, links_before, now, args, effects, to)))


def signed_receipt(key, token_bytes, links_before, now, args=None, effects=(), to=None):
    """A whole receipt (its encoding), signed by `key`, the holder when the run happened."""
    args = args if args is not None else {}
    statement = receipt_statement(token_bytes, links_before, now, args, effects, to)
    return canonical({"receipt": statement, "chain": chain_encoding(token_bytes, links_before), "args": args,
                      "effects": list(effects), "sig": ecdsa_sign(key, tagged(RECEIPT_TAG, canonical(statement)))})


# ---------------------------------------------------------------------------------------------------------
# "Running with a transfer": the stdlib cash program's one record per run.


def is_cash(token_bytes):
    return cbor2.loads(token_bytes)["token"]["program_sha256"] == hashlib.sha256(CASH_PROGRAM.read_bytes()).digest()


def cash_effects(token_bytes, links_before, to):
    """t.emit { kind = "transfer", to = t.hex.encode(t.transfer_to), value = t.token.value, unit = t.token.unit,
    hop = t.hops + 1 }, as CBOR."""
    token = cbor2.loads(token_bytes)["token"]
    value = token["value"] if token["value"] < 2**63 else str(token["value"])
    return [record({"kind": "transfer", "to": to.hex(), "value": value, "unit": token["unit"], "hop": len(links_before) + 1})]


def effects_of(token_bytes, links_before, to):
    """The effects of the run that hands the token to `to`: the cash program's record, none for another program."""
    return cash_effects(token_bytes, links_before, to) if is_cash(token_bytes) else []


# ---------------------------------------------------------------------------------------------------------
# Links


def make_link(token_bytes, links_before, key, to, now, args=None, receipt=None):
    """A transfer signed by `key` (coincurve) continuing `links_before`; with no `receipt`, the one of
    the run the token's program makes (see effects_of)."""
    token = cbor2.loads(token_bytes)["token"]
    args = args if args is not None else {}
    if receipt is None:
        receipt = receipt_id(token_bytes, links_before, to, now, args, effects_of(token_bytes, links_before, to))
    body = {"v": 2, "token_id": token["id"], "index": len(links_before), "previous": previous_hash(token_bytes, links_before),
            "to": to, "time": now, "args": args, "receipt": receipt}
    return {"transfer": body, "sig": ecdsa_sign(key, tagged(TRANSFER_TAG, canonical(body)))}


def check_links(token_bytes, links):
    """Returns the current holder after the links, or raises ValueError."""
    token = cbor2.loads(token_bytes)["token"]
    for i, env in enumerate(links):
        body = env["transfer"]
        if body["token_id"] != token["id"] or body["index"] != i or body["previous"] != previous_hash(token_bytes, links[:i]):
            raise ValueError(f"link {i} does not continue the chain")
        if body["v"] != 2:
            raise ValueError(f"link {i} is format {body['v']}")
        holder = holder_after(token_bytes, links[:i])
        if not ecdsa_valid(holder, env["sig"], tagged(TRANSFER_TAG, canonical(body))):
            raise ValueError(f"link {i} not signed by {holder.hex()}")
    return holder_after(token_bytes, links)


# ---------------------------------------------------------------------------------------------------------
# "Request and payment"


def request_id(request_map):
    return tagged(REQUEST_TAG, canonical(request_map))


def check_request(text):
    """A khreq1 request: (its map, its id) once the payee's signature holds."""
    envelope = cbor2.loads(unarmor(text))
    body = envelope["request"]
    if not ecdsa_valid(body["payee"], envelope["sig"], request_id(body)):
        raise ValueError("the request is not signed by its payee")
    return body, request_id(body)


def pay(request_text, holdings, key, now):
    """A cash payment of the request: `holdings` are (token bytes, links) held by `key`. Picks holdings whose
    values make the amount exactly (no change), hands each to its own key of the request. Returns the payment's
    encoding and its chains (maps)."""
    request, rid = check_request(request_text)
    if request["expires"] <= now:
        raise ValueError("the request has expired")
    usable = [(t, list(links)) for t, links in holdings
              if cbor2.loads(t)["token"]["unit"] == request["unit"] and cbor2.loads(t)["token"]["issuer"] in request["issuers"]]
    held = coincurve.PublicKey.from_secret(key.secret).format()
    if any(holder_after(t, links) != held for t, links in usable):
        raise ValueError("the key does not hold every token given")
    chosen = next((subset for n in range(1, len(request["keys"]) + 1) for subset in itertools.combinations(usable, n)
                   if sum(cbor2.loads(t)["token"]["value"] for t, _ in subset) == request["amount"]), None)
    if chosen is None:
        raise ValueError(f"no tokens make exactly {request['amount']} with at most {len(request['keys'])} keys")
    chains = [{"token": t, "transfers": links + [make_link(t, links, key, k, now)]} for (t, links), k in zip(chosen, request["keys"])]
    return canonical({"v": 1, "request": rid, "chains": [canonical(c) for c in chains]}), chains


# ---------------------------------------------------------------------------------------------------------


def main():
    command = sys.argv[1]
    if command == "verify":
        for line in sys.stdin.read().split():
            chain = cbor2.loads(unarmor(line))
            try:
                print("ok", check_links(chain["token"], chain["transfers"]).hex())
            except ValueError as e:
                print("bad", e)
    elif command == "make":
        token_bytes = unarmor(sys.argv[2])
        keys = [coincurve.PrivateKey(bytes.fromhex(k)) for k in sys.argv[3:]]
        links = []
        for i in range(len(keys) - 1):
            links.append(make_link(token_bytes, links, keys[i], keys[i + 1].public_key.format(compressed=True), 1_900_000_000 + i))
        print(armor("khchain1:", chain_encoding(token_bytes, links)))
    elif command == "pay":
        import time
        key = coincurve.PrivateKey(bytes.fromhex(sys.argv[3]))
        holdings = []
        for item in sys.argv[4:]:
            if item.startswith("khtok1:"):
                holdings.append((unarmor(item), []))
            else:
                chain = cbor2.loads(unarmor(item))
                holdings.append((chain["token"], chain["transfers"]))
        encoded, _ = pay(sys.argv[2], holdings, key, int(time.time()))
        print(armor("khpay1:", encoded))
    elif command == "proof":
        proof = cbor2.loads(unarmor(sys.stdin.read()))
        try:
            holder = check_links(proof["token"], proof["common"])
            a, b = proof["a"], proof["b"]
            if canonical(a) == canonical(b):
                raise ValueError("the same transfer twice")
            n = len(proof["common"])
            prev = previous_hash(proof["token"], proof["common"])
            for env in (a, b):
                body = env["transfer"]
                if body["index"] != n or body["previous"] != prev:
                    raise ValueError("a transfer does not continue the common links")
                if not ecdsa_valid(holder, env["sig"], tagged(TRANSFER_TAG, canonical(body))):
                    raise ValueError("a transfer is not signed by the holder")
            print("ok", holder.hex())
        except ValueError as e:
            print("bad", e)


# Importable too: Tests/e2e/test_token_payments.py and test_payment_from_the_docs.py reuse it.
if __name__ == "__main__":
    main()
