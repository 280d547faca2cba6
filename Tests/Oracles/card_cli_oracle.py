#!/usr/bin/env python3
"""Independent answers for `keyhost card …` tests (Tests/KeyhostCLITests/CardCommandTests.swift).

  derive MNEMONIC PASSPHRASE PATH...   one JSON line per path: {path, public_key, chain_code, xpub, zpub} (bip-utils)
  verify PUBKEY DIGEST RSV             "valid <recovered compressed key>" or "invalid" (coincurve)
  mnemonic PHRASE                      "valid <word count>" or "invalid" (python-mnemonic's BIP39 check)
"""
import json
import sys

import coincurve
from bip_utils import Base58Decoder, Base58Encoder, Bip32Secp256k1, Bip39SeedGenerator
from mnemonic import Mnemonic


def derive(phrase, passphrase, paths):
    seed = Bip39SeedGenerator(phrase).Generate(passphrase)
    master = Bip32Secp256k1.FromSeed(seed)
    for path in paths:
        node = master.DerivePath(path)
        pub = node.PublicKey()
        xpub = pub.ToExtended()
        raw = Base58Decoder.CheckDecode(xpub)
        print(json.dumps({
            "path": path,
            "public_key": pub.RawCompressed().ToHex(),
            "chain_code": node.ChainCode().ToHex(),
            "xpub": xpub,
            "zpub": Base58Encoder.CheckEncode(bytes.fromhex("04b24746") + raw[4:]),
        }))


def verify(pubkey_hex, digest_hex, rsv_hex):
    pub = coincurve.PublicKey(bytes.fromhex(pubkey_hex))
    digest = bytes.fromhex(digest_hex)
    rsv = bytes.fromhex(rsv_hex)
    r, s, v = rsv[:32], rsv[32:64], rsv[64]
    der = coincurve.ecdsa.cdata_to_der(coincurve.ecdsa.deserialize_compact(r + s))
    if not pub.verify(der, digest, hasher=None):
        print("invalid")
        return
    recid = v - 27 if v >= 27 else v
    recovered = coincurve.PublicKey.from_signature_and_message(r + s + bytes([recid]), digest, hasher=None)
    print("valid", recovered.format(compressed=True).hex())


def main():
    command, args = sys.argv[1], sys.argv[2:]
    if command == "derive":
        derive(args[0], args[1], args[2:])
    elif command == "verify":
        verify(*args)
    elif command == "mnemonic":
        phrase = args[0]
        print(f"valid {len(phrase.split())}" if Mnemonic("english").check(phrase) else "invalid")
    else:
        sys.exit(f"unknown command {command}")


if __name__ == "__main__":
    main()
