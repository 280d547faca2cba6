#!/usr/bin/env python3
"""PSBT oracle for keyhost's tests, built on embit and btclib (independent implementations).

embit makes, signs and finalizes PSBTs. Signature hashes come from btclib: embit 0.8.0 gets three
cases wrong (taproot ANYONECANPAY hashes the whole input instead of the outpoint, taproot SINGLE
appends the output instead of its SHA256, legacy SINGLE blanks earlier outputs with value
0xffffffff instead of -1), so `sighash` and `verify` use btclib's, which follow Bitcoin Core.

Commands (JSON request on stdin, JSON answer on stdout):
  sighash   {tx, cases:[{kind: legacy|segwit|taproot, index, script_code, amount, sighash, spent:[{value, script}]}]}
            -> {hashes: [hex]}
  make      {tprv | mnemonic, network, seed, inputs:[{kind: p2pkh|p2sh-p2wpkh|p2wpkh|p2tr, path, amount}],
             outputs:[{amount, path? | multisig: {path, kind: wsh|sh-wsh|sh, cosigners, threshold, sorted, tamper}}],
             witness_utxo_only?}  -> {psbt: base64}   (a fresh PSBT as a wallet's creator/updater would make it)
  sign      {psbt, tprv} -> {psbt: base64}             (embit signs every input it can)
  verify    {psbt} -> {inputs: [{signatures: n, valid: bool}]}   (each signature checked against embit's sighash)
  finalize  {psbt} -> {tx: hex}                        (embit's finalizer and extractor)
  partial_sigs {psbt} -> {inputs: [[hex]]}             (each input's ECDSA signatures, by public key order)
"""
import json
import random
import sys

from embit import bip32, ec, script
from embit.networks import NETWORKS
from embit.psbt import PSBT, DerivationPath
from embit.script import Script, Witness
from embit.transaction import Transaction, TransactionInput, TransactionOutput, SIGHASH


def btclib_hash(tx_bytes, kind, index, hash_type, script_code=b"", amount=0, spent=()):
    from btclib.script import sig_hash
    from btclib.tx.tx import Tx
    from btclib.tx.tx_out import TxOut
    tx = Tx.parse(tx_bytes, check_validity=False)
    if kind == "legacy":
        return sig_hash.legacy(script_code, tx, index, hash_type)
    if kind == "segwit":
        return sig_hash.segwit_v0(script_code, tx, index, hash_type, amount)
    prevouts = [TxOut(value, spk, check_validity=False) for value, spk in spent]
    return sig_hash.taproot(tx, index, prevouts, hash_type, 0, b"", b"")


def sighash(req):
    tx = bytes.fromhex(req["tx"])
    out = []
    for case in req["cases"]:
        h = btclib_hash(tx, case["kind"], case["index"], case["sighash"], bytes.fromhex(case.get("script_code", "")),
                        case.get("amount", 0), [(s["value"], bytes.fromhex(s["script"])) for s in case.get("spent", [])])
        out.append(h.hex())
    return {"hashes": out}


def psbt_sighash(psbt, i, hash_type):
    """The hash input i's signature commits to, with embit reading the PSBT and btclib hashing."""
    inp = psbt.inputs[i]
    tx = psbt.tx.serialize()
    if inp.is_taproot:
        spent = [(x.utxo.value, x.utxo.script_pubkey.data) for x in psbt.inputs]
        return btclib_hash(tx, "taproot", i, hash_type, spent=spent)
    sc = inp.witness_script or inp.redeem_script or inp.utxo.script_pubkey
    segwit = (inp.witness_script or inp.witness_utxo or inp.utxo.script_pubkey.script_type() in {"p2wpkh", "p2wsh"}
              or (inp.redeem_script and inp.redeem_script.script_type() in {"p2wpkh", "p2wsh"}))
    if sc.script_type() == "p2wpkh":
        sc = script.p2pkh_from_p2wpkh(sc)
    if segwit:
        return btclib_hash(tx, "segwit", i, hash_type, sc.data, inp.utxo.value)
    return btclib_hash(tx, "legacy", i, hash_type, sc.data)


def path_list(text):
    parts = []
    for p in text.split("/")[1:]:
        hardened = p.endswith("'") or p.endswith("h")
        n = int(p.rstrip("'h"))
        parts.append(n + 0x80000000 if hardened else n)
    return parts


def master(req):
    """The master key: a tprv, or a BIP39 mnemonic (testnet versions)."""
    if "mnemonic" in req:
        from embit import bip39
        seed = bip39.mnemonic_to_seed(req["mnemonic"], req.get("passphrase", ""))
        return bip32.HDKey.from_seed(seed, version=NETWORKS["test"]["xprv"])
    return bip32.HDKey.from_string(req["tprv"])


def make(req):
    rng = random.Random(req.get("seed", 1))
    root = master(req)
    fp = root.my_fingerprint
    net = NETWORKS[req.get("network", "test")]
    vin, prevs = [], []
    for spec in req["inputs"]:
        key = root.derive(spec["path"])
        pub = key.get_public_key()
        kind = spec["kind"]
        if kind == "p2pkh":
            spk = script.p2pkh(pub)
        elif kind == "p2wpkh":
            spk = script.p2wpkh(pub)
        elif kind == "p2sh-p2wpkh":
            spk = script.p2sh(script.p2wpkh(pub))
        elif kind == "p2tr":
            spk = script.p2tr(pub)
        else:
            raise SystemExit("unknown kind " + kind)
        # A previous transaction paying to the key, at a random output index among decoys.
        n_out = rng.randint(1, 3)
        vout_index = rng.randrange(n_out)
        outs = [TransactionOutput(rng.randint(1000, 10**8), Script(bytes([0x00, 0x14]) + rng.randbytes(20))) for _ in range(n_out)]
        outs[vout_index] = TransactionOutput(spec["amount"], spk)
        prev = Transaction(version=2, vin=[TransactionInput(rng.randbytes(32), rng.randint(0, 5))], vout=outs, locktime=0)
        prevs.append((prev, vout_index, spk, key, pub, kind, spec["path"]))
        vin.append(TransactionInput(prev.txid(), vout_index, sequence=spec.get("sequence", 0xFFFFFFFD)))
    vout, multisigs = [], []
    for spec in req["outputs"]:
        multisigs.append(None)
        if "multisig" in spec:
            multisigs[-1] = multisig_output(spec["multisig"], root, rng)
            spk = multisigs[-1]["spk"]
        elif "path" in spec:
            spk = script.p2wpkh(root.derive(spec["path"]).get_public_key())
        else:
            spk = Script(bytes([0x00, 0x14]) + rng.randbytes(20))
        vout.append(TransactionOutput(spec["amount"], spk))
    tx = Transaction(version=2, vin=vin, vout=vout, locktime=req.get("locktime", 0))
    psbt = PSBT(tx)
    for n, (inp, (prev, idx, spk, key, pub, kind, path)) in enumerate(zip(psbt.inputs, prevs)):
        # "origin_path" claims another path than the key's: a PSBT for another wallet (or a wrong account).
        origin = DerivationPath(fp, path_list(req["inputs"][n].get("origin_path", path)))
        if kind != "p2tr" and not req.get("witness_utxo_only"):
            inp.non_witness_utxo = prev
        if kind != "p2pkh":
            inp.witness_utxo = prev.vout[idx]
        if kind == "p2sh-p2wpkh":
            inp.redeem_script = script.p2wpkh(pub)
        if kind == "p2tr":
            inp.taproot_internal_key = ec.PublicKey.from_xonly(pub.xonly())
            inp.taproot_bip32_derivations[ec.PublicKey.from_xonly(pub.xonly())] = ([], origin)
        else:
            inp.bip32_derivations[pub] = origin
        if "sighash" in req:
            inp.sighash_type = req["sighash"]
    for out, spec, ms in zip(psbt.outputs, req["outputs"], multisigs):
        if ms is not None:
            out.witness_script = ms.get("witness_script")
            out.redeem_script = ms.get("redeem_script")
            for pub, origin in ms["origins"]:
                out.bip32_derivations[pub] = origin
        elif "path" in spec:
            out.bip32_derivations[root.derive(spec["path"]).get_public_key()] = DerivationPath(fp, path_list(spec["path"]))
    return {"psbt": psbt.to_base64()}


def multisig_output(spec, root, rng):
    """A multisig change output as BDK's wsh(multi)/wsh(sortedmulti) descriptors make it (or sh-wsh, sh): our key
    at spec["path"] among cosigners' keys, the script in the output's map with every key's origin. "tamper" puts
    a script there that does not hash to the output."""
    ours = root.derive(spec["path"]).get_public_key()
    others = [ec.PrivateKey(rng.randbytes(32)).get_public_key() for _ in range(spec.get("cosigners", 2))]
    keys = [ours] + others
    if spec.get("sorted", True):
        keys.sort(key=lambda k: k.sec())
    inner = script.multisig(spec.get("threshold", 2), keys)
    kind = spec.get("kind", "wsh")
    out = {"origins": [(ours, DerivationPath(root.my_fingerprint, path_list(spec["path"])))]
           + [(k, DerivationPath(rng.randbytes(4), path_list("m/48h/1h/0h/2h/1/0"))) for k in others]}
    if kind == "wsh":
        out["spk"], out["witness_script"] = script.p2wsh(inner), inner
    elif kind == "sh-wsh":
        out["spk"], out["witness_script"], out["redeem_script"] = script.p2sh(script.p2wsh(inner)), inner, script.p2wsh(inner)
    elif kind == "sh":
        out["spk"], out["redeem_script"] = script.p2sh(inner), inner
    else:
        raise SystemExit("unknown multisig kind " + kind)
    if spec.get("tamper"):
        other = script.multisig(spec.get("threshold", 2), [ours] + [ec.PrivateKey(rng.randbytes(32)).get_public_key() for _ in others])
        if "witness_script" in out:
            out["witness_script"] = other
        else:
            out["redeem_script"] = other
    return out


def sign(req):
    psbt = PSBT.from_base64(req["psbt"])
    root = master(req)
    count = psbt.sign_with(root, sighash=req.get("sighash", SIGHASH.DEFAULT))
    return {"psbt": psbt.to_base64(), "signatures": count}


def verify(req):
    psbt = PSBT.from_base64(req["psbt"])
    results = []
    for i, inp in enumerate(psbt.inputs):
        n, ok = 0, True
        for pub, sig in inp.partial_sigs.items():
            n += 1
            h = psbt_sighash(psbt, i, sig[-1])
            ok = ok and pub.verify(ec.Signature.parse(sig[:-1]), h)
        tapsig = None
        # embit keeps PSBT_IN_TAP_KEY_SIG (0x13) among unknowns
        for k, v in inp.unknown.items():
            if k == b"\x13":
                tapsig = v
        if tapsig is not None:
            n += 1
            hashtype = tapsig[64] if len(tapsig) == 65 else SIGHASH.DEFAULT
            h = psbt_sighash(psbt, i, hashtype)
            output_key = ec.PublicKey.from_xonly(inp.utxo.script_pubkey.data[2:34])
            ok = ok and output_key.schnorr_verify(ec.SchnorrSig.parse(tapsig[:64]), h)
        results.append({"signatures": n, "valid": ok})
    return {"inputs": results}


def finalize(req):
    from embit.finalizer import finalize_psbt
    psbt = PSBT.from_base64(req["psbt"])
    tx = finalize_psbt(psbt)
    if tx is None:
        raise SystemExit("embit could not finalize the PSBT")
    return {"tx": tx.serialize().hex()}


def partial_sigs(req):
    psbt = PSBT.from_base64(req["psbt"])
    return {"inputs": [[sig.hex() for _, sig in sorted(inp.partial_sigs.items(), key=lambda kv: kv[0].sec())]
                       for inp in psbt.inputs]}


COMMANDS = {"sighash": sighash, "make": make, "sign": sign, "verify": verify, "finalize": finalize,
            "partial_sigs": partial_sigs}

if __name__ == "__main__":
    request = json.load(sys.stdin)
    json.dump(COMMANDS[sys.argv[1]](request), sys.stdout)
