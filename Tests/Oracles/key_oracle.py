#!/usr/bin/env python3
"""Independent results for `keyhost key` (Tests/KeyhostCLITests/KeyCommandTests.swift).

Reads one JSON request on standard input (secrets never go through argv) and prints one JSON answer.
argv[1] picks the operation:

  wallets          {"cases": [{"mnemonic", "passphrase"}], "count": n} -> per case, per standard wallet
                   (bip-utils' Bip44/49/84/86 classes), the account path, account xpub as bip-utils writes
                   it, and the first n receive addresses
  random-wallets   {"count": n, "seed": s} -> like wallets, for n reproducible random mnemonics and passphrases
  btc-verify       {"message_hex", "signature", "address", "coin"} -> {"valid", "recovered_address"}:
                   Bitcoin signed-message check written here from the format (double SHA-256 of the
                   "Bitcoin Signed Message:\\n" envelope, coincurve recovery, header 27-42 picks the
                   address type, bip-utils encoders), not with keyhost
  btc-sign         {"mnemonic", "path", "kind", "coin", "message_hex"} -> {"address", "signature"}: the key derived by
                   bip-utils, the envelope hashed and signed here with coincurve, header 31/35/39 + recid by kind
  eth-recover      {"message", "signature"} -> {"address"} with eth-account's recover_message(encode_defunct(text))
  eth-sign         {"mnemonic", "path", "message"} -> {"address", "signature"}: the key derived by bip-utils,
                   signed by eth-account's sign_message
  mnemonic-valid   {"mnemonic"} -> {"valid", "words"} with bip-utils' Bip39MnemonicValidator
"""
import base64
import hashlib
import json
import random
import sys

import coincurve
from bip_utils import (Bip32Slip10Secp256k1, Bip39EntropyBitLen, Bip39EntropyGenerator, Bip39Languages, Bip39MnemonicEncoder,
                       Bip39MnemonicValidator, Bip39SeedGenerator, Bip44, Bip44Changes, Bip44Coins, Bip49, Bip49Coins, Bip84,
                       Bip84Coins, Bip86, Bip86Coins, P2PKHAddrEncoder, P2SHAddrEncoder, P2WPKHAddrEncoder)
from eth_account import Account
from eth_account.messages import encode_defunct

WALLETS = [
    ("p2pkh", "btc", Bip44, Bip44Coins.BITCOIN),
    ("p2sh-p2wpkh", "btc", Bip49, Bip49Coins.BITCOIN),
    ("p2wpkh", "btc", Bip84, Bip84Coins.BITCOIN),
    ("p2tr", "btc", Bip86, Bip86Coins.BITCOIN),
    ("ethereum", "eth", Bip44, Bip44Coins.ETHEREUM),
    ("p2wpkh", "test", Bip84, Bip84Coins.BITCOIN_TESTNET),
    ("p2wpkh", "ltc", Bip84, Bip84Coins.LITECOIN),
]

PURPOSE = {Bip44: 44, Bip49: 49, Bip84: 84, Bip86: 86}
COIN_TYPE = {"btc": 0, "test": 1, "ltc": 2, "eth": 60}
NETWORKS = {"btc": (b"\x00", b"\x05", "bc"), "test": (b"\x6f", b"\xc4", "tb"), "ltc": (b"\x30", b"\x32", "ltc")}


def wallets(mnemonic, passphrase, count):
    seed = Bip39SeedGenerator(mnemonic).Generate(passphrase)
    out = []
    for kind, coin, cls, coin_enum in WALLETS:
        account = cls.FromSeed(seed, coin_enum).Purpose().Coin().Account(0)
        chain = account.Change(Bip44Changes.CHAIN_EXT)
        addresses = [chain.AddressIndex(i).PublicKey().ToAddress() for i in range(count)]
        out.append({
            "kind": kind, "coin": coin,
            "account_path": f"m/{PURPOSE[cls]}'/{COIN_TYPE[coin]}'/0'",
            "xpub": account.PublicKey().ToExtended(),
            "addresses": addresses,
        })
    return out


def random_cases(count, seed):
    rng = random.Random(seed)
    cases = []
    for _ in range(count):
        bits = rng.choice([Bip39EntropyBitLen.BIT_LEN_128, Bip39EntropyBitLen.BIT_LEN_160, Bip39EntropyBitLen.BIT_LEN_192,
                           Bip39EntropyBitLen.BIT_LEN_224, Bip39EntropyBitLen.BIT_LEN_256])
        entropy = bytes(rng.getrandbits(8) for _ in range(bits // 8))
        mnemonic = Bip39MnemonicEncoder(Bip39Languages.ENGLISH).Encode(entropy).ToStr()
        passphrase = rng.choice(["", "", "TREZOR", "correct horse battery staple", "caf\u00e9"])
        cases.append({"mnemonic": mnemonic, "passphrase": passphrase})
    return cases


def varint(n):
    if n < 0xfd:
        return bytes([n])
    if n <= 0xffff:
        return b"\xfd" + n.to_bytes(2, "little")
    return b"\xfe" + n.to_bytes(4, "little")


def btc_verify(request):
    message = bytes.fromhex(request["message_hex"])
    magic = b"Bitcoin Signed Message:\n"
    digest = hashlib.sha256(hashlib.sha256(varint(len(magic)) + magic + varint(len(message)) + message).digest()).digest()
    raw = base64.b64decode(request["signature"])
    if len(raw) != 65 or not 27 <= raw[0] <= 42:
        return {"valid": False, "recovered_address": None}
    header = raw[0]
    recid = (header - 27) % 4
    key = coincurve.PublicKey.from_signature_and_message(raw[1:] + bytes([recid]), digest, hasher=None)
    p2pkh_version, p2sh_version, hrp = NETWORKS[request["coin"]]
    if header < 31:
        address = P2PKHAddrEncoder.EncodeKey(key.format(compressed=False), net_ver=p2pkh_version)
    elif header < 35:
        address = P2PKHAddrEncoder.EncodeKey(key.format(compressed=True), net_ver=p2pkh_version)
    elif header < 39:
        address = P2SHAddrEncoder.EncodeKey(key.format(compressed=True), net_ver=p2sh_version)
    else:
        address = P2WPKHAddrEncoder.EncodeKey(key.format(compressed=True), hrp=hrp, wit_ver=0)
    return {"valid": address == request["address"], "recovered_address": address}


def btc_sign(request):
    seed = Bip39SeedGenerator(request["mnemonic"]).Generate(request.get("passphrase", ""))
    node = Bip32Slip10Secp256k1.FromSeed(seed).DerivePath(request["path"])
    secret = coincurve.PrivateKey(node.PrivateKey().Raw().ToBytes())
    public = secret.public_key.format(compressed=True)
    message = bytes.fromhex(request["message_hex"])
    magic = b"Bitcoin Signed Message:\n"
    digest = hashlib.sha256(hashlib.sha256(varint(len(magic)) + magic + varint(len(message)) + message).digest()).digest()
    compact = secret.sign_recoverable(digest, hasher=None)  # r || s || recid
    p2pkh_version, p2sh_version, hrp = NETWORKS[request["coin"]]
    header, address = {
        "p2pkh": (31, P2PKHAddrEncoder.EncodeKey(public, net_ver=p2pkh_version)),
        "p2sh-p2wpkh": (35, P2SHAddrEncoder.EncodeKey(public, net_ver=p2sh_version)),
        "p2wpkh": (39, P2WPKHAddrEncoder.EncodeKey(public, hrp=hrp, wit_ver=0)),
    }[request["kind"]]
    signature = base64.b64encode(bytes([header + compact[64]]) + compact[:64]).decode()
    return {"address": address, "signature": signature}


def eth_sign(request):
    seed = Bip39SeedGenerator(request["mnemonic"]).Generate(request.get("passphrase", ""))
    node = Bip32Slip10Secp256k1.FromSeed(seed).DerivePath(request["path"])
    account = Account.from_key(node.PrivateKey().Raw().ToBytes())
    signed = account.sign_message(encode_defunct(text=request["message"]))
    return {"address": account.address, "signature": "0x" + bytes(signed.signature).hex()}


def main():
    operation = sys.argv[1]
    request = json.load(sys.stdin)
    if operation == "wallets":
        answer = [wallets(c["mnemonic"], c.get("passphrase", ""), request.get("count", 1)) for c in request["cases"]]
    elif operation == "random-wallets":
        cases = random_cases(request["count"], request.get("seed", 12))
        answer = [dict(case, wallets=wallets(case["mnemonic"], case["passphrase"], 3)) for case in cases]
    elif operation == "btc-verify":
        answer = btc_verify(request)
    elif operation == "btc-sign":
        answer = btc_sign(request)
    elif operation == "eth-recover":
        answer = {"address": Account.recover_message(encode_defunct(text=request["message"]), signature=request["signature"])}
    elif operation == "eth-sign":
        answer = eth_sign(request)
    elif operation == "mnemonic-valid":
        words = request["mnemonic"].split()
        answer = {"valid": Bip39MnemonicValidator().IsValid(request["mnemonic"]), "words": len(words)}
    else:
        raise SystemExit(f"unknown operation {operation}")
    json.dump(answer, sys.stdout)


if __name__ == "__main__":
    main()
