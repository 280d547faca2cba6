#!/usr/bin/env python3
"""Checks signatures that keyhost made, with independent libraries.

Reads the JSON file keyhost's Swift tests wrote (path in argv[1]) and verifies every item:
ECDSA (DER) and recoverable signatures with coincurve, BIP340 Schnorr with coincurve,
Ethereum personal_sign with eth-account, Bitcoin signed messages with btclib.
Prints a JSON report {"checked": n, "failures": [...]} and exits 1 if anything failed.
"""
import json
import sys

import coincurve
from btclib.ecc import bms
from eth_account import Account
from eth_account.messages import encode_defunct


def main():
    with open(sys.argv[1]) as f:
        data = json.load(f)
    failures = []
    checked = 0

    def check(kind, index, ok, detail=""):
        nonlocal checked
        checked += 1
        if not ok:
            failures.append({"kind": kind, "index": index, "detail": detail})

    for i, item in enumerate(data.get("ecdsa", [])):
        pub = coincurve.PublicKey(bytes.fromhex(item["public_key"]))
        check("ecdsa", i, pub.verify(bytes.fromhex(item["der"]), bytes.fromhex(item["digest"]), hasher=None))

    for i, item in enumerate(data.get("recoverable", [])):
        sig = bytes.fromhex(item["rs"]) + bytes([item["recovery_id"]])
        recovered = coincurve.PublicKey.from_signature_and_message(sig, bytes.fromhex(item["digest"]), hasher=None)
        check("recoverable", i, recovered.format().hex() == item["public_key"], recovered.format().hex())

    for i, item in enumerate(data.get("schnorr", [])):
        xonly = coincurve.PublicKeyXOnly(bytes.fromhex(item["xonly"]))
        check("schnorr", i, xonly.verify(bytes.fromhex(item["signature"]), bytes.fromhex(item["message"])))

    for i, item in enumerate(data.get("ethereum", [])):
        signer = Account.recover_message(encode_defunct(text=item["message"]), signature=bytes.fromhex(item["signature"]))
        check("ethereum", i, signer == item["address"], signer)

    for i, item in enumerate(data.get("bitcoin_message", [])):
        try:
            ok = bms.verify(item["message"].encode(), item["address"], item["signature"])
        except Exception as error:  # btclib raises on malformed input; that is a failure too
            ok, item["error"] = False, str(error)
        check("bitcoin_message", i, ok, item.get("error", item["address"]))

    json.dump({"checked": checked, "failures": failures}, sys.stdout)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
