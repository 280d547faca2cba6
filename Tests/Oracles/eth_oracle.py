"""Independent Ethereum oracle for keyhost's tests: eth-account signs, recovers and decodes transactions and EIP-712 data.

Modes:
  rlp-encode             stdin: JSON list of trees ("0x.." strings and lists); prints pyrlp's encoding of each
  tx-cases N SEED        random unsigned transactions of types 0, 1, 2 with keys, and eth-account's signed raw bytes
  tx-check               stdin: JSON list of 0x raw transactions; prints for each the sender and the re-encoded bytes
  typed-cases N SEED     random EIP-712 documents (nested structs, arrays) with keys, digests and signatures
  typed-recover          stdin: JSON list of {document, signature}; prints the recovered address of each
"""
import json
import random
import sys

import rlp
from hexbytes import HexBytes

from eth_account import Account
from eth_account.typed_transactions import TypedTransaction
from eth_account._utils.legacy_transactions import Transaction
from eth_account.messages import encode_typed_data, _hash_eip191_message
from eth_utils import to_checksum_address


def rand_bytes(rng, n):
    return bytes(rng.getrandbits(8) for _ in range(n))


def rand_amount(rng):
    # Small, 64-bit and 256-bit-ish amounts, plus zero.
    return rng.choice([0, 1, rng.getrandbits(16), rng.getrandbits(63), rng.getrandbits(64), rng.getrandbits(100), rng.getrandbits(255)])


def rand_address(rng):
    return to_checksum_address(rand_bytes(rng, 20))


def tx_cases(count, seed):
    rng = random.Random(seed)
    out = []
    for i in range(count):
        kind = i % 3
        key = "0x" + rand_bytes(rng, 32).hex()
        fields = {
            "nonce": rng.choice([0, 1, rng.getrandbits(32), 2**64 - 2]),
            "gas": rng.choice([21000, rng.getrandbits(24), rng.getrandbits(63)]),
            "value": rand_amount(rng),
            "data": "0x" + rand_bytes(rng, rng.choice([0, 1, 4, 36, 60, 200, 1100])).hex(),
            "chainId": rng.choice([1, 5, 137, 11155111, rng.getrandbits(32), rng.getrandbits(60)]),
        }
        create = rng.random() < 0.1
        fields["to"] = "" if create else rand_address(rng)
        if kind == 2:
            cap = rand_amount(rng)
            fields["maxFeePerGas"] = cap
            fields["maxPriorityFeePerGas"] = rng.randint(0, cap)
            fields["type"] = 2
        else:
            fields["gasPrice"] = rand_amount(rng)
            if kind == 1:
                fields["type"] = 1
        if kind != 0:
            fields["accessList"] = [
                {"address": rand_address(rng), "storageKeys": ["0x" + rand_bytes(rng, 32).hex() for _ in range(rng.randint(0, 3))]}
                for _ in range(rng.randint(0, 3))
            ]
        eth_fields = dict(fields)
        if create:
            del eth_fields["to"]
        signed = Account.sign_transaction(eth_fields, key)
        snake = {
            "type": kind, "chain_id": fields["chainId"], "nonce": fields["nonce"], "gas": fields["gas"], "to": fields["to"],
            "value": str(fields["value"]), "data": fields["data"],
        }
        if kind == 2:
            snake["max_fee_per_gas"] = str(fields["maxFeePerGas"])
            snake["max_priority_fee_per_gas"] = hex(fields["maxPriorityFeePerGas"])
        else:
            snake["gas_price"] = str(fields["gasPrice"])
        if kind != 0:
            snake["access_list"] = [{"address": e["address"], "storage_keys": e["storageKeys"]} for e in fields["accessList"]]
        raw = signed.raw_transaction
        out.append({
            "fields": snake, "key": key, "raw": "0x" + raw.hex(), "hash": "0x" + signed.hash.hex(),
            "from": Account.from_key(key).address, "r": signed.r, "s": signed.s, "v": signed.v,
        })
    print(json.dumps(out))


def tx_check():
    result = []
    for raw_hex in json.load(sys.stdin):
        raw = bytes.fromhex(raw_hex[2:])
        sender = Account.recover_transaction(raw)
        if raw[0] >= 0xc0:
            reencoded = rlp.encode(rlp.decode(raw, Transaction))
        else:
            reencoded = TypedTransaction.from_bytes(HexBytes(raw)).encode()
        result.append({"from": sender, "reencoded": "0x" + bytes(reencoded).hex()})
    print(json.dumps(result))


ATOMIC = ["bool", "address", "string", "bytes"] + [f"uint{8 * i}" for i in (1, 2, 4, 8, 16, 20, 32)] \
    + [f"int{8 * i}" for i in (1, 2, 4, 8, 16, 32)] + [f"bytes{n}" for n in (1, 4, 20, 31, 32)]


def rand_value(rng, type_name, structs, depth=0):
    if type_name.endswith("]"):
        base, _, size = type_name[:-1].rpartition("[")
        n = int(size) if size else rng.randint(0, 3)
        return [rand_value(rng, base, structs, depth + 1) for _ in range(n)]
    if type_name in structs:
        return {name: rand_value(rng, t, structs, depth + 1) for name, t in structs[type_name]}
    if type_name == "bool":
        return rng.random() < 0.5
    if type_name == "address":
        a = rand_address(rng)
        return a if rng.random() < 0.5 else a.lower()
    if type_name == "string":
        return "".join(rng.choice("abc xyz ÄÖ€😀\"\\\n") for _ in range(rng.randint(0, 12)))
    if type_name == "bytes":
        return "0x" + rand_bytes(rng, rng.randint(0, 70)).hex()
    if type_name.startswith("bytes"):
        return "0x" + rand_bytes(rng, int(type_name[5:])).hex()
    if type_name.startswith("uint"):
        bits = int(type_name[4:])
        return rng.choice([0, 2**bits - 1, rng.getrandbits(bits)])
    if type_name.startswith("int"):
        bits = int(type_name[3:])
        return rng.choice([0, -1, -(2 ** (bits - 1)), 2 ** (bits - 1) - 1, rng.randint(-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)])
    raise ValueError(type_name)


def rand_document(rng):
    names = [f"S{i}x" + rng.choice(["", "Mail", "Person"]) for i in range(rng.randint(1, 4))]
    structs = {}
    # Struct i refers only to structs after it, so every value is finite; arrays of structs included.
    for i in reversed(range(len(names))):
        fields = []
        for j in range(rng.randint(1, 5)):
            later = names[i + 1:]
            if later and rng.random() < 0.4:
                t = rng.choice(later)
            else:
                t = rng.choice(ATOMIC)
            r = rng.random()
            if r < 0.2:
                t += "[]"
            elif r < 0.3:
                t += f"[{rng.randint(1, 3)}]"
            if rng.random() < 0.05:
                t += "[]"
            fields.append((f"f{j}_{rng.choice(['a', 'b', 'to', 'from'])}", t))
        if i + 1 < len(names) and not any(t.split("[")[0] == names[i + 1] for _, t in fields):
            # eth-account finds the primary type as the one no other refers to: refer to every other.
            fields.insert(rng.randint(0, len(fields)), ("next", names[i + 1] + rng.choice(["", "[]", "[2]"])))
        structs[names[i]] = fields
    domain_fields = [f for f in [("name", "string"), ("version", "string"), ("chainId", "uint256"),
                                 ("verifyingContract", "address"), ("salt", "bytes32")] if rng.random() < 0.7]
    domain = {name: rand_value(rng, t, {}) for name, t in domain_fields}
    types = {"EIP712Domain": [{"name": n, "type": t} for n, t in domain_fields]}
    for name, fields in structs.items():
        types[name] = [{"name": n, "type": t} for n, t in fields]
    message = rand_value(rng, names[0], structs)
    return {"types": types, "primaryType": names[0], "domain": domain, "message": message}


def typed_cases(count, seed):
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        doc = rand_document(rng)
        key = "0x" + rand_bytes(rng, 32).hex()
        signable = encode_typed_data(full_message=doc)
        digest = _hash_eip191_message(signable)
        signed = Account.sign_message(signable, key)
        out.append({
            "document": doc, "key": key, "digest": "0x" + digest.hex(), "signature": "0x" + signed.signature.hex(),
            "address": Account.from_key(key).address,
        })
    print(json.dumps(out, ensure_ascii=False))


def typed_recover():
    result = []
    for case in json.load(sys.stdin):
        signable = encode_typed_data(full_message=case["document"])
        result.append(Account.recover_message(signable, signature=bytes.fromhex(case["signature"][2:])))
    print(json.dumps(result))


def rlp_encode():
    def shape(x):
        return bytes.fromhex(x[2:]) if isinstance(x, str) else [shape(i) for i in x]
    print(json.dumps(["0x" + rlp.encode(shape(t)).hex() for t in json.load(sys.stdin)]))


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "rlp-encode":
        rlp_encode()
    elif mode == "tx-cases":
        tx_cases(int(sys.argv[2]), int(sys.argv[3]))
    elif mode == "tx-check":
        tx_check()
    elif mode == "typed-cases":
        typed_cases(int(sys.argv[2]), int(sys.argv[3]))
    elif mode == "typed-recover":
        typed_recover()
    else:
        raise SystemExit(f"unknown mode {mode}")
