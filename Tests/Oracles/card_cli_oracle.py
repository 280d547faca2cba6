#!/usr/bin/env python3
"""Independent answers for `keyhost card …` tests (Tests/KeyhostCLITests/CardCommandTests.swift).

  derive MNEMONIC PASSPHRASE PATH...   one JSON line per path: {path, public_key, x_only, private_key, chain_code, xpub, zpub}
                                       (bip-utils)
  verify PUBKEY DIGEST RSV             "valid <recovered compressed key>" or "invalid" (coincurve)
  schnorr XONLY DIGEST SIGNATURE       "valid" or "invalid": BIP340 verification (coincurve, libsecp256k1's schnorrsig)
  mnemonic PHRASE                      "valid <word count>" or "invalid" (python-mnemonic's BIP39 check)
  recertify STATE CA_SECRET            re-signs a software 4.x card's identity certificate (in its state file) with
                                       another CA, as a card personalised by someone else; prints that CA's public key
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
            "x_only": pub.RawCompressed().ToHex()[2:],
            "private_key": node.PrivateKey().Raw().ToHex(),
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


def schnorr(xonly_hex, digest_hex, signature_hex):
    key = coincurve.PublicKeyXOnly(bytes.fromhex(xonly_hex))
    print("valid" if key.verify(bytes.fromhex(signature_hex), bytes.fromhex(digest_hex)) else "invalid")


def recertify(state_path, ca_secret_hex):
    with open(state_path) as f:
        state = json.load(f)
    ca = coincurve.PrivateKey(bytes.fromhex(ca_secret_hex))
    identity = coincurve.PrivateKey(bytes(state["identityKey"])).public_key.format(compressed=True)
    # The certificate: compressed identity key, then r || s || v over SHA-256(identity key) (coincurve hashes it).
    signature = ca.sign_recoverable(identity)
    state["certificate"] = list(identity + signature)
    with open(state_path, "w") as f:
        json.dump(state, f)
    print(ca.public_key.format(compressed=True).hex())


def main():
    command, args = sys.argv[1], sys.argv[2:]
    if command == "derive":
        derive(args[0], args[1], args[2:])
    elif command == "verify":
        verify(*args)
    elif command == "schnorr":
        schnorr(*args)
    elif command == "recertify":
        recertify(*args)
    elif command == "mnemonic":
        phrase = args[0]
        print(f"valid {len(phrase.split())}" if Mnemonic("english").check(phrase) else "invalid")
    else:
        sys.exit(f"unknown command {command}")


if __name__ == "__main__":
    main()
