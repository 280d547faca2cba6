"""bip-utils on the same work as keyhost-bench's derive_p2wpkh / derive_eip55 (context only, not a goal).

Prints lines like the C baseline: "<name> <median ns per operation> <checksum>", with the same checksum
(FNV-1a of every address, then the last address), so scripts/bench can check it derived the same addresses.
"""
import statistics
import sys
import time

from bip_utils import Bip32Secp256k1, EthAddrEncoder, P2WPKHAddrEncoder

reps = int(sys.argv[1]) if len(sys.argv) > 1 else 5
n = int(sys.argv[2]) if len(sys.argv) > 2 else 1000  # keyhost and C use 4000; the checksum covers the first n
seed = bytes(range(64))
root = Bip32Secp256k1.FromSeed(seed)
btc_chain = root.DerivePath("m/84'/0'/0'/0")
btc_chain.ConvertToPublic()
eth_chain = root.DerivePath("m/44'/60'/0'/0")
eth_chain.ConvertToPublic()


def fnv(data, h):
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def figure(name, chain, encode):
    times, addresses = [], []
    for _ in range(reps):
        addresses = []
        t0 = time.thread_time_ns()
        for i in range(n):
            addresses.append(encode(chain.ChildKey(i).PublicKey().KeyObject()))
        times.append((time.thread_time_ns() - t0) / n)
    h = 0xCBF29CE484222325
    for a in addresses:
        h = fnv(a.encode(), h)
    print(f"{name} {statistics.median(times):.1f} {h:016x}:{addresses[-1]}", flush=True)


figure("derive_p2wpkh", btc_chain, lambda k: P2WPKHAddrEncoder.EncodeKey(k, hrp="bc"))
figure("derive_eip55", eth_chain, EthAddrEncoder.EncodeKey)
