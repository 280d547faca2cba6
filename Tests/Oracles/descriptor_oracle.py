#!/usr/bin/env python3
"""Output descriptor oracle for keyhost's tests: embit and BDK (bdkpython), two independent implementations.

Commands (JSON request on stdin, JSON answer on stdout):
  derive  {cases: [{descriptor, network, from, count}]}
          -> {results: [{embit: {checksum, addresses: [[…] per multipath branch]},
                         bdk: {descriptor, checksum, branches: [text], addresses: [[…]], wallet: [[…]]}}]}
          embit's checksum is of the text as given (without any "#…"); BDK's is of its own normalised text.
          `addresses` come from each library's descriptor object, BDK's `wallet` from a bdk Wallet per branch.
  random  {seed, count} -> {cases: [{descriptor, network, embit_text, bdk_text, addresses: [[…]]}]}
          descriptors built here from random keys (embit's BIP32), with embit's and BDK's printed forms and
          the addresses both agree on (the oracle fails if they differ).
"""
import json
import random
import sys

import bdkpython as bdk
from embit import bip32
from embit.descriptor import Descriptor
from embit.descriptor.checksum import add_checksum
from embit.networks import NETWORKS

EMBIT_NET = {"mainnet": NETWORKS["main"], "testnet": NETWORKS["test"], "signet": NETWORKS["signet"], "regtest": NETWORKS["regtest"]}
BDK_NET = {"mainnet": bdk.Network.BITCOIN, "testnet": bdk.Network.TESTNET, "signet": bdk.Network.SIGNET, "regtest": bdk.Network.REGTEST}


def body(text):
    return text.split("#")[0]


def embit_side(text, network, start, count):
    d = Descriptor.from_string(body(text))
    branches = d.num_branches if d.is_basic_multisig or d.num_branches else 1
    addresses = []
    for b in range(max(1, d.num_branches)):
        addresses.append([d.derive(i, branch_index=b).address(EMBIT_NET[network]) for i in range(start, start + count)])
    return {"checksum": add_checksum(body(text))[-8:], "addresses": addresses}


def bdk_side(text, network, start, count):
    kind = bdk.NetworkKind.MAIN if network == "mainnet" else bdk.NetworkKind.TEST
    d = bdk.Descriptor(text, kind)
    singles = d.to_single_descriptors() if d.is_multipath() else [d]
    net = BDK_NET[network]
    addresses, wallet = [], []
    for single in singles:
        addresses.append([str(single.derive_address(i, net)) for i in range(start, start + count)])
        w = bdk.Wallet.create_single(single, net, bdk.Persister.new_in_memory())
        wallet.append([str(w.peek_address(bdk.KeychainKind.EXTERNAL, i).address) for i in range(start, start + count)])
    return {"descriptor": str(d), "checksum": str(d).split("#")[1], "branches": [str(s) for s in singles],
            "addresses": addresses, "wallet": wallet}


def derive(request):
    results = []
    for case in request["cases"]:
        network, start, count = case.get("network", "mainnet"), case.get("from", 0), case.get("count", 3)
        results.append({"embit": embit_side(case["descriptor"], network, start, count),
                        "bdk": bdk_side(case["descriptor"], network, start, count)})
    return {"results": results}


def random_key(rng, network, hex_key=False, x_only=False):
    """A key expression: an xpub/tpub with an origin and steps, or a hex key."""
    root = bip32.HDKey.from_seed(bytes(rng.getrandbits(8) for _ in range(32)), version=EMBIT_NET[network]["xprv"])
    if hex_key:
        key = root.derive([rng.randrange(2**31)]).key.get_public_key()
        return key.xonly().hex() if x_only else key.sec().hex()
    marker = rng.choice(["h", "'"])
    account_path = [0x80000000 + rng.randrange(100) for _ in range(rng.randrange(1, 4))]
    account = root.derive(account_path).to_public()
    origin = "[" + root.my_fingerprint.hex() + "".join("/%d%s" % (i - 0x80000000, marker) for i in account_path) + "]"
    xpub = account.to_base58(version=EMBIT_NET[network]["xpub"])
    steps = "".join("/%d" % rng.randrange(2**31) for _ in range(rng.randrange(0, 2)))
    return origin + xpub + steps


def random_descriptor(rng, network):
    form = rng.choice(["pkh", "wpkh", "sh-wpkh", "tr", "sh-multi", "wsh-multi", "sh-wsh-multi"])
    multipath = rng.random() < 0.3
    wildcard = "/<0;1>/*" if multipath else "/*"

    def key(**kw):
        if rng.random() < 0.15:
            return random_key(rng, network, hex_key=True, **kw), False
        return random_key(rng, network) + wildcard, True

    if form in ("pkh", "wpkh", "sh-wpkh", "tr"):
        k, ranged = key(x_only=form == "tr" and rng.random() < 0.5)
        text = {"pkh": "pkh(%s)", "wpkh": "wpkh(%s)", "sh-wpkh": "sh(wpkh(%s))", "tr": "tr(%s)"}[form] % k
        return text
    n = rng.randrange(1, 5)
    keys = [key()[0] for _ in range(n)]
    if not any(k.endswith("*") for k in keys):
        keys[0] = random_key(rng, network) + wildcard
    inner = "%s(%d,%s)" % (rng.choice(["multi", "sortedmulti"]), rng.randrange(1, n + 1), ",".join(keys))
    return {"sh-multi": "sh(%s)", "wsh-multi": "wsh(%s)", "sh-wsh-multi": "sh(wsh(%s))"}[form] % inner


def random_cases(request):
    rng = random.Random(request["seed"])
    cases = []
    for _ in range(request["count"]):
        network = rng.choice(["mainnet", "mainnet", "testnet", "regtest"])
        text = random_descriptor(rng, network)
        e = embit_side(text, network, 0, 3)
        b = bdk_side(text, network, 0, 3)
        if e["addresses"] != b["addresses"] or b["addresses"] != b["wallet"]:
            raise SystemExit("embit and BDK disagree on %s: %r vs %r" % (text, e["addresses"], b["addresses"]))
        cases.append({"descriptor": text, "network": network, "embit_text": add_checksum(text), "bdk_text": b["descriptor"],
                      "bdk_branches": b["branches"], "addresses": b["addresses"]})
    return {"cases": cases}


def main():
    command = sys.argv[1]
    request = json.load(sys.stdin)
    answer = {"derive": derive, "random": random_cases}[command](request)
    json.dump(answer, sys.stdout)


if __name__ == "__main__":
    main()
