#!/usr/bin/env python3
"""Independent reference results for keyhost's crypto tests.

Generates random (but reproducible: fixed RNG seed) mnemonics, passphrases and derivation paths, and
prints JSON with what bip-utils, python-mnemonic, coincurve and eth-account compute for them.
keyhost's Swift tests compare their own results with these.

Usage: hd_oracle.py [count]
"""
import json
import random
import sys

import coincurve
from bip_utils import (Base58Decoder, Base58Encoder, Bip32Slip10Secp256k1, Bip39SeedGenerator, BchP2PKHAddrEncoder, EthAddrEncoder,
                       P2PKHAddrEncoder, P2SHAddrEncoder, P2TRAddrEncoder, P2WPKHAddrEncoder, WifEncoder)
from bip_utils.bip.bip32 import Bip32KeyNetVersions
from eth_account import Account
from eth_account.messages import encode_defunct
from mnemonic import Mnemonic

XPUB = Bip32KeyNetVersions(bytes.fromhex("0488b21e"), bytes.fromhex("0488ade4"))

PASSPHRASES = ["", "TREZOR", "correct horse battery staple", "caf\u00e9", "cafe\u0301", "\u30d1\u30b9\u30ef\u30fc\u30c9", "  spaced  ",
               # BIP39 Japanese test vectors' passphrase: compatibility characters (U+334D), voiced kana.
               "\u334d\u30ac\u30d0\u30f4\u30a1\u3071\u3070\u3050\u309e\u3061\u3062\u5341\u4eba\u5341\u8272"]


def with_version(extended, version_hex):
    """The same extended key under other SLIP-132 version bytes (e.g. zpub, tprv)."""
    raw = Base58Decoder.CheckDecode(extended)
    return Base58Encoder.CheckEncode(bytes.fromhex(version_hex) + raw[4:])


def random_path(rng):
    depth = rng.randint(1, 5)
    parts = []
    for _ in range(depth):
        index = rng.choice([0, 1, 2, rng.randrange(0, 2**31)])
        parts.append(f"{index}'" if rng.random() < 0.5 else str(index))
    return "m/" + "/".join(parts)


def addresses(pub):
    raw = pub.RawCompressed().ToBytes()
    return {
        "BTC": {
            "p2pkh": P2PKHAddrEncoder.EncodeKey(raw, net_ver=b"\x00"),
            "p2sh-p2wpkh": P2SHAddrEncoder.EncodeKey(raw, net_ver=b"\x05"),
            "p2wpkh": P2WPKHAddrEncoder.EncodeKey(raw, hrp="bc", wit_ver=0),
            "p2tr": P2TRAddrEncoder.EncodeKey(raw, hrp="bc"),
        },
        "TEST": {
            "p2pkh": P2PKHAddrEncoder.EncodeKey(raw, net_ver=b"\x6f"),
            "p2sh-p2wpkh": P2SHAddrEncoder.EncodeKey(raw, net_ver=b"\xc4"),
            "p2wpkh": P2WPKHAddrEncoder.EncodeKey(raw, hrp="tb", wit_ver=0),
            "p2tr": P2TRAddrEncoder.EncodeKey(raw, hrp="tb"),
        },
        "LTC": {
            "p2pkh": P2PKHAddrEncoder.EncodeKey(raw, net_ver=b"\x30"),
            "p2sh-p2wpkh": P2SHAddrEncoder.EncodeKey(raw, net_ver=b"\x32"),
            "p2wpkh": P2WPKHAddrEncoder.EncodeKey(raw, hrp="ltc", wit_ver=0),
        },
        "DOGE": {"p2pkh": P2PKHAddrEncoder.EncodeKey(raw, net_ver=b"\x1e")},
        "DASH": {"p2pkh": P2PKHAddrEncoder.EncodeKey(raw, net_ver=b"\x4c")},
        "BCH": {"p2pkh": BchP2PKHAddrEncoder.EncodeKey(raw, hrp="bitcoincash", net_ver=b"\x00")},
        "ETH": {"ethereum": EthAddrEncoder.EncodeKey(raw)},
    }


def main():
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    rng = random.Random(0x6B657968)  # "keyh"
    mnemo = Mnemonic("english")
    cases = []
    for n in range(count):
        entropy = bytes(rng.getrandbits(8) for _ in range(rng.choice([16, 20, 24, 28, 32])))
        phrase = mnemo.to_mnemonic(entropy)
        passphrase = rng.choice(PASSPHRASES)
        seed = Bip39SeedGenerator(phrase).Generate(passphrase)
        assert seed == Mnemonic.to_seed(phrase, passphrase), "bip-utils and python-mnemonic disagree"
        path = random_path(rng)
        master = Bip32Slip10Secp256k1.FromSeed(seed, XPUB)
        node = master.DerivePath(path)
        priv = node.PrivateKey().Raw().ToBytes()
        pub = node.PublicKey()
        # A non-hardened child chain for public-derivation and batch checks.
        chain_node = Bip32Slip10Secp256k1.FromExtendedKey(node.PublicKey().ToExtended(), XPUB).ChildKey(n % 2)
        chain = [addresses(chain_node.ChildKey(i).PublicKey())["BTC"]["p2wpkh"] for i in range(5)]

        key = coincurve.PrivateKey(priv)
        digest = bytes(rng.getrandbits(8) for _ in range(32))
        message = "keyhost oracle message %d \u2713" % n
        aux = bytes(rng.getrandbits(8) for _ in range(32))
        schnorr_msg = bytes(rng.getrandbits(8) for _ in range(32))
        peer = coincurve.PrivateKey(bytes(rng.getrandbits(8) for _ in range(32)))
        recoverable = key.sign_recoverable(digest, hasher=None)
        cases.append({
            "entropy": entropy.hex(),
            "mnemonic": phrase,
            "passphrase": passphrase,
            "seed": seed.hex(),
            "path": path,
            "xprv": node.PrivateKey().ToExtended(),
            "xpub": node.PublicKey().ToExtended(),
            "zpub": with_version(node.PublicKey().ToExtended(), "04b24746"),
            "tprv": with_version(node.PrivateKey().ToExtended(), "04358394"),
            "fingerprint": node.FingerPrint().ToBytes().hex(),
            "parent_fingerprint": node.ParentFingerPrint().ToBytes().hex(),
            "private_key": priv.hex(),
            "public_key": pub.RawCompressed().ToBytes().hex(),
            "public_key_uncompressed": pub.RawUncompressed().ToBytes().hex(),
            "wif": WifEncoder.Encode(priv, net_ver=b"\x80"),
            "addresses": addresses(pub),
            "chain": n % 2,
            "chain_addresses": chain,
            "digest": digest.hex(),
            "ecdsa_der": key.sign(digest, hasher=None).hex(),
            "recoverable": recoverable.hex(),
            "schnorr_message": schnorr_msg.hex(),
            "schnorr_aux": aux.hex(),
            "schnorr_signature": key.sign_schnorr(schnorr_msg, aux).hex(),
            "xonly": pub.RawCompressed().ToBytes()[1:].hex(),
            "peer_public_key": peer.public_key.format().hex(),
            "ecdh_x": coincurve.PublicKey(peer.public_key.format()).multiply(priv).format()[1:].hex(),
            "eth_message": message,
            "eth_signature": Account.sign_message(encode_defunct(text=message), priv).signature.hex(),
        })
    json.dump({"generator": "bip-utils, python-mnemonic, coincurve, eth-account", "cases": cases}, sys.stdout)


if __name__ == "__main__":
    main()
