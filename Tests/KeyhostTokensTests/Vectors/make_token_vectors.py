"""Writes token-vectors.json: tokens and a receipt built and signed by independent code (cbor2 and
coincurve), which keyhost must read, re-encode byte for byte and verify. Run from the repository
with the test venv: .venv/bin/python Tests/KeyhostTokensTests/Vectors/make_token_vectors.py"""
import base64
import hashlib
import json
import pathlib

import cbor2
import coincurve


def tagged(tag, data):
    t = hashlib.sha256(tag.encode()).digest()
    return hashlib.sha256(t + t + data).digest()


def armor(prefix, data):
    return prefix + base64.urlsafe_b64encode(data).decode().rstrip("=")


issuer = coincurve.PrivateKey(bytes.fromhex("0b432b2677937381aef05bb02a66ecd012773062cf3fa2549e44f58ed2401710"))
holder = coincurve.PrivateKey(bytes.fromhex("8bdd21f1ac8c1e2ef3c1e3bd3ac8c6a9d2a6cb79c9d1d44a4b7bb8e2bd4e9a51"))
program = b"local t = ...\nt.emit { redeemed = t.token.value, shop = t.args.shop }\n"

vectors = []
for name, extra in [
    ("minimal", {}),
    ("window, metadata and limits", {
        "not_before": 1_700_000_000, "expires": 1_900_000_000,
        "meta": {"campaign": "spring", "n": [1, -2, b"\x00\xff"], "ok": True, "none": None},
        "limits": {"instructions": 1_000_000, "memory": 8 << 20, "time_ms": 250},
    }),
]:
    token = {
        "v": 1, "id": bytes(range(32)), "issuer": issuer.public_key_xonly.format(), "value": 500, "unit": "EUR-cent",
        "program": program, "program_kind": "lua54-source", "program_sha256": hashlib.sha256(program).digest(),
        "holder": holder.public_key.format(compressed=True), **extra,
    }
    encoded_token = cbor2.dumps(token, canonical=True)
    digest = tagged("keyhost/token/v1", encoded_token)
    signature = issuer.sign_schnorr(digest, bytes(32))
    signed = cbor2.dumps({"token": token, "sig": signature}, canonical=True)
    vectors.append({
        "name": name, "token_cbor": encoded_token.hex(), "digest": digest.hex(), "signed_cbor": signed.hex(),
        "armored": armor("khtok1:", signed), "value": token["value"], "unit": token["unit"],
    })

# A receipt for the first token, run with {"shop": "bakery"} at 1800000000 emitting one record.
signed_token = bytes.fromhex(vectors[0]["signed_cbor"])
chain = cbor2.dumps({"token": signed_token, "transfers": []}, canonical=True)
args = {"shop": "bakery"}
effects = [{"redeemed": 500, "shop": "bakery"}]
statement = {
    "v": 1, "token_id": bytes(range(32)), "chain_sha256": hashlib.sha256(chain).digest(),
    "args_sha256": hashlib.sha256(cbor2.dumps(args, canonical=True)).digest(), "now": 1_800_000_000,
    "effects_sha256": hashlib.sha256(cbor2.dumps(effects, canonical=True)).digest(),
    "holder": holder.public_key.format(compressed=True),
}
receipt_digest = tagged("keyhost/receipt/v1", cbor2.dumps(statement, canonical=True))
der = holder.sign(receipt_digest, hasher=None)
r_len = der[3]
r = int.from_bytes(der[4:4 + r_len], "big")
s = int.from_bytes(der[6 + r_len:], "big")
compact = r.to_bytes(32, "big") + s.to_bytes(32, "big")
receipt = cbor2.dumps({"receipt": statement, "chain": chain, "args": args, "effects": effects, "sig": compact}, canonical=True)

out = {
    "comment": "Made by make_token_vectors.py with cbor2 and coincurve; keyhost must read and verify these.",
    "issuer_xonly": issuer.public_key_xonly.format().hex(),
    "holder": holder.public_key.format(compressed=True).hex(),
    "tokens": vectors,
    "receipt": {"cbor": receipt.hex(), "armored": armor("khrcpt1:", receipt), "digest": receipt_digest.hex()},
}
path = pathlib.Path(__file__).with_name("token-vectors.json")
path.write_text(json.dumps(out, indent=2) + "\n")
print(f"wrote {path}")
