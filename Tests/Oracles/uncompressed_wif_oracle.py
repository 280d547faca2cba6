#!/usr/bin/env python3
"""What btclib says about a WIF key and a Bitcoin signed message made with it.

argv: WIF, message (hex), keyhost's signature (Base64), keyhost's address.
Prints JSON: btclib's compression flag and P2PKH address for the key, btclib's own signature of the
message (RFC 6979, so it must equal keyhost's), and whether btclib verifies keyhost's signature for
keyhost's address.
"""
import json
import sys

from btclib import b58
from btclib.ecc import bms


def main():
    wif, message_hex, signature, address = sys.argv[1:5]
    message = bytes.fromhex(message_hex)
    key = b58.prv_key_data_from_wif(wif)
    print(json.dumps({
        "compressed": key.compressed,
        "address": b58.p2pkh(key.pub),
        "signature": bms.sign(message, key).b64encode(),
        "verifies": bms.verify(message, address, signature),
    }))


if __name__ == "__main__":
    main()
