"""cbor2 as an independent CBOR implementation for keyhost's token encoding.

  generate N SEED  -> N lines: hex of cbor2's canonical encoding of random values (text-keyed maps,
                      as keyhost tokens use; cbor2 sorts keys length-first, RFC 8949 bytewise, and
                      for text keys the two orders agree)
  reencode         -> for each hex line on stdin: cbor2 decodes it and re-encodes canonically
  token FILE       -> decodes a keyhost token file (armoured lines) with cbor2 and prints its fields as JSON
"""
import base64
import json
import random
import sys

import cbor2


def random_value(rng, depth=0):
    kind = rng.randrange(9 if depth < 4 else 6)
    if kind == 0:
        return rng.choice([0, 1, 23, 24, 255, 256, 65535, 65536, 2**32 - 1, 2**32, 2**64 - 1, rng.randrange(2**64)])
    if kind == 1:
        return -rng.choice([1, 24, 25, 256, 257, 65536, 65537, 2**32, 2**32 + 1, 2**64, rng.randrange(1, 2**64)])
    if kind == 2:
        return bytes(rng.randrange(256) for _ in range(rng.choice([0, 1, 23, 24, 255, 256, 300])))
    if kind == 3:
        alphabet = "abcXYZ019 _-é€😀\u0000"
        return "".join(rng.choice(alphabet) for _ in range(rng.choice([0, 1, 5, 23, 24, 40])))
    if kind == 4:
        return rng.choice([True, False])
    if kind == 5:
        return None
    if kind in (6, 7):
        return [random_value(rng, depth + 1) for _ in range(rng.choice([0, 1, 3, 24]))]
    keys = {"".join(rng.choice("abcdefghij") for _ in range(rng.randrange(0, 30))) for _ in range(rng.randrange(0, 8))}
    return {k: random_value(rng, depth + 1) for k in keys}


def main():
    mode = sys.argv[1]
    if mode == "generate":
        rng = random.Random(int(sys.argv[3]))
        for _ in range(int(sys.argv[2])):
            print(cbor2.dumps(random_value(rng), canonical=True).hex())
    elif mode == "reencode":
        for line in sys.stdin:
            line = line.strip()
            if line:
                print(cbor2.dumps(cbor2.loads(bytes.fromhex(line)), canonical=True).hex())
    elif mode == "token":
        out = []
        for line in open(sys.argv[2]):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            assert line.startswith("khtok1:"), line[:20]
            payload = line[len("khtok1:"):]
            raw = base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))
            envelope = cbor2.loads(raw)
            assert cbor2.dumps(envelope, canonical=True) == raw, "not canonical"
            token = envelope["token"]
            out.append({k: (v.hex() if isinstance(v, bytes) else v) for k, v in token.items()} | {"sig": envelope["sig"].hex()})
        print(json.dumps(out))
    else:
        raise SystemExit(f"unknown mode {mode}")


main()
