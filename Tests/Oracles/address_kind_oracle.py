#!/usr/bin/env python3
"""Standard-path wallets per bip-utils' Bip44/Bip49/Bip84/Bip86 classes, for the address-kind inference tests.

argv[1]: how many random (reproducible) seeds. Prints JSON {"cases": [...]}: for each seed, for BIP44 (Bitcoin,
Litecoin, Dogecoin, Ethereum), BIP49, BIP84, BIP86 (Bitcoin mainnet and testnet where bip-utils has them), the
account path, the account's extended public key as bip-utils writes it (xpub/ypub/zpub/tpub/upub/vpub/Ltub/dgub),
and the first receive and change addresses.
"""
import json
import random
import sys

from bip_utils import Bip44, Bip44Changes, Bip44Coins, Bip49, Bip49Coins, Bip84, Bip84Coins, Bip86, Bip86Coins

WALLETS = [
    (Bip44, Bip44Coins.BITCOIN, 44, 0), (Bip44, Bip44Coins.BITCOIN_TESTNET, 44, 1),
    (Bip44, Bip44Coins.LITECOIN, 44, 2), (Bip44, Bip44Coins.DOGECOIN, 44, 3), (Bip44, Bip44Coins.ETHEREUM, 44, 60),
    (Bip49, Bip49Coins.BITCOIN, 49, 0), (Bip49, Bip49Coins.BITCOIN_TESTNET, 49, 1), (Bip49, Bip49Coins.LITECOIN, 49, 2),
    (Bip84, Bip84Coins.BITCOIN, 84, 0), (Bip84, Bip84Coins.BITCOIN_TESTNET, 84, 1), (Bip84, Bip84Coins.LITECOIN, 84, 2),
    (Bip86, Bip86Coins.BITCOIN, 86, 0), (Bip86, Bip86Coins.BITCOIN_TESTNET, 86, 1),
]


def main():
    rng = random.Random(49_84_86)
    cases = []
    for _ in range(int(sys.argv[1])):
        seed = bytes(rng.getrandbits(8) for _ in range(64))
        account = rng.randrange(0, 3)
        wallets = []
        for cls, coin, purpose, coin_type in WALLETS:
            acc = cls.FromSeed(seed, coin).Purpose().Coin().Account(account)
            wallets.append({
                "path": "m/%d'/%d'/%d'" % (purpose, coin_type, account),
                "account_xpub": acc.PublicKey().ToExtended(),
                "receive0": acc.Change(Bip44Changes.CHAIN_EXT).AddressIndex(0).PublicKey().ToAddress(),
                "change1": acc.Change(Bip44Changes.CHAIN_INT).AddressIndex(1).PublicKey().ToAddress(),
            })
        cases.append({"seed": seed.hex(), "wallets": wallets})
    print(json.dumps({"cases": cases}))


if __name__ == "__main__":
    main()
