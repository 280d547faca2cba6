"""keyhost's commands with a TAPSIGNER or SATSCARD: `key xpub/sign-message --card`, `psbt sign --card`, `discover --card`
and `keyhost card tapsigner|satscard …`, against the in-process twin (`--reader virtual --card-state F`) and against
`keyhost card serve --applet …` through the real pcscd (reader "Virtual PCD 00 01").

Peers: Coinkite's cktap reads the same card (xpubs, addresses), bip-utils derives from the card's own backup
(decrypted here with `cryptography`, the key from the twin's state file), coincurve checks signatures, embit makes
the PSBT and checks its signature and the SATSCARD's address from the unsealed key.
"""
import base64
import hashlib
import json
import os
import pathlib
import subprocess
import sys

import coincurve
import pytest
from bip_utils import Bip32Secp256k1
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from embit import bip32, ec, script
from embit.networks import NETWORKS
from embit.psbt import PSBT, DerivationPath
from embit.transaction import Transaction, TransactionInput, TransactionOutput

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from test_cktap import READER, serve, tap_card, reader_running, OPEN  # noqa: E402,F401  (fixtures and helpers)

CVC = "123456"
ACCOUNT = "m/84'/0'/0'"


def run(keyhost_bin, *args, cvc=CVC, env=None, check=True):
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("KEYHOST_")}
    if cvc is not None:
        full_env["KEYHOST_CVC"] = cvc
    full_env.update(env or {})
    result = subprocess.run([keyhost_bin, *args], capture_output=True, text=True, timeout=120, env=full_env, stdin=subprocess.DEVNULL)
    if check:
        assert result.returncode == 0, result.stderr
    return result


def card_args(where):
    return ["--reader", "virtual", "--card-state", str(where)] if isinstance(where, pathlib.Path) else ["--reader", where]


@pytest.fixture(params=["virtual", "pcsc"])
def tapsigner(request, serve, tmp_path, keyhost_bin):
    """A set-up TAPSIGNER: (card options, state file)."""
    state = tmp_path / "tapsigner.json"
    if request.param == "pcsc":
        serve("tapsigner", "--card-state", str(state), "--seed", "tap cli")
        where = READER
    else:
        where = state
    out = run(keyhost_bin, "card", "tapsigner", "setup", *card_args(where), "--chain-code", hashlib.sha256(b"cli entropy").hexdigest(), "--json")
    assert json.loads(out.stdout)["path"] == "m/84'/0'/0'"
    assert oct(state.stat().st_mode & 0o777) == "0o600"
    return where, state, request.param


def master_from_backup(keyhost_bin, where, state, tmp_path):
    """bip-utils' master key from the card's backup, decrypted here with the backup key from the twin's state file."""
    out = tmp_path / "backup.aes"
    run(keyhost_bin, "card", "tapsigner", "backup", *card_args(where), "--out", str(out))
    assert oct(out.stat().st_mode & 0o777) == "0o600"
    key = bytes(json.loads(state.read_text())["backupKey"])
    decryptor = Cipher(algorithms.AES(key), modes.CTR(bytes(16))).decryptor()
    xprv, path, *_ = (decryptor.update(out.read_bytes()) + decryptor.finalize()).decode().split("\n")
    # keyhost's own --decrypt agrees with it, the key given as a secret.
    opened = run(keyhost_bin, "card", "tapsigner", "backup", "--decrypt", str(out), "--show-key", "--json", env={"KEYHOST_BACKUP_KEY": key.hex()})
    assert json.loads(opened.stdout)["xprv"] == xprv
    return Bip32Secp256k1.FromExtendedKey(xprv)


def message_hash(message):
    def varint(n):
        return bytes([n]) if n < 0xFD else b"\xfd" + n.to_bytes(2, "little")
    data = varint(24) + b"Bitcoin Signed Message:\n" + varint(len(message)) + message
    return hashlib.sha256(hashlib.sha256(data).digest()).digest()


def test_tapsigner_keys_signatures_and_psbt(tapsigner, keyhost_bin, tmp_path):
    where, state, transport = tapsigner
    xpub = json.loads(run(keyhost_bin, "key", "xpub", "--card", *card_args(where), "--path", ACCOUNT, "--family", "xpub", "--json").stdout)["xpub"]
    master = master_from_backup(keyhost_bin, where, state, tmp_path)
    account = master.DerivePath(ACCOUNT)
    mine = Bip32Secp256k1.FromExtendedKey(xpub)
    assert mine.PublicKey().RawCompressed().ToBytes() == account.PublicKey().RawCompressed().ToBytes()
    assert mine.ChainCode().ToBytes() == account.ChainCode().ToBytes()
    if transport == "pcsc":
        # Coinkite's client reads the same xpub from the card (the card is at the account's path).
        # (key and chain code: the card leaves the parent fingerprint zero)
        theirs = Bip32Secp256k1.FromExtendedKey(tap_card().get_xpub(CVC))
        assert theirs.PublicKey().RawCompressed().ToBytes() == mine.PublicKey().RawCompressed().ToBytes()
        assert theirs.ChainCode().ToBytes() == mine.ChainCode().ToBytes()
        OPEN.pop().disconnect()
    # The family command and the master's.
    assert json.loads(run(keyhost_bin, "card", "tapsigner", "xpub", *card_args(where), "--master", "--json").stdout)["xpub"] \
        == master.PublicKey().ToExtended()

    # A signed message at an address key verifies (coincurve), under the key bip-utils derives.
    out = run(keyhost_bin, "key", "sign-message", "--card", *card_args(where), "--path", ACCOUNT + "/0/1", "--kind", "p2wpkh", "--json", "tap message")
    sig = base64.b64decode(json.loads(out.stdout)["signature"])
    recovered = coincurve.PublicKey.from_signature_and_message(sig[1:] + bytes([(sig[0] - 27) & 3]), message_hash(b"tap message"), hasher=None)
    assert recovered.format() == account.DerivePath("0/1").PublicKey().RawCompressed().ToBytes()

    # A PSBT made with embit for the card's key at m/84'/0'/0'/0/0, signed on the card, its signature checked by embit.
    key = account.DerivePath("0/0").PublicKey().RawCompressed().ToBytes()
    pub = ec.PublicKey.parse(key)
    spk = script.p2wpkh(pub)
    prev = Transaction(vin=[TransactionInput(hashlib.sha256(b"funding").digest(), 0)], vout=[TransactionOutput(50_000, spk)])
    tx = Transaction(vin=[TransactionInput(prev.txid(), 0)], vout=[TransactionOutput(49_000, script.p2wpkh(ec.PublicKey.parse(
        account.DerivePath("1/0").PublicKey().RawCompressed().ToBytes())))])
    psbt = PSBT(tx)
    psbt.inputs[0].non_witness_utxo = prev
    psbt.inputs[0].witness_utxo = prev.vout[0]
    fingerprint = master.FingerPrint().ToBytes()
    psbt.inputs[0].bip32_derivations[pub] = DerivationPath(fingerprint, bip32.parse_path(ACCOUNT + "/0/0"))
    (tmp_path / "tx.psbt").write_text(psbt.to_string())
    out = run(keyhost_bin, "psbt", "sign", str(tmp_path / "tx.psbt"), "--card", *card_args(where), "--json")
    signed = PSBT.from_string(json.loads(out.stdout)["psbt"])
    der_sig = signed.inputs[0].partial_sigs[pub]
    digest = signed.tx.sighash_segwit(0, script.p2pkh(pub), 50_000)
    assert pub.verify(ec.Signature.parse(der_sig[:-1]), digest)
    assert der_sig[-1] == 1


def test_tapsigner_discovery_matches_its_xpub(tapsigner, keyhost_bin, tmp_path):
    where, state, _ = tapsigner
    master = master_from_backup(keyhost_bin, where, state, tmp_path)
    account = master.DerivePath(ACCOUNT)
    used = [script.p2wpkh(ec.PublicKey.parse(account.DerivePath(f"0/{i}").PublicKey().RawCompressed().ToBytes())).address(NETWORKS["main"])
            for i in (0, 3)]
    (tmp_path / "used.txt").write_text("\n".join(used) + "\n")
    common = ["--source", f"index:{tmp_path / 'used.txt'}", "--gap-limit", "5", "--json"]
    card = ["virtual", "--card-state", str(where)] if isinstance(where, pathlib.Path) else [where]
    by_card = run(keyhost_bin, "discover", "--card", *card, "--purpose", "84", "--account-gap", "1", *common, env={"XDG_STATE_HOME": str(tmp_path)})
    by_xpub = run(keyhost_bin, "discover", "--xpub", account.PublicKey().ToExtended(), "--kind", "p2wpkh", *common)
    card_report, xpub_report = json.loads(by_card.stdout), json.loads(by_xpub.stdout)
    card_used = sorted(a["address"] for acc in card_report["accounts"] for a in acc["used"])
    xpub_used = sorted(a["address"] for acc in xpub_report["accounts"] for a in acc["used"])
    assert card_used == xpub_used == sorted(used)
    assert card_report["accounts"][0]["last_used"]["receive"] == xpub_report["accounts"][0]["last_used"]["receive"] == 3


def test_tapsigner_refusals_wrong_cvc_and_backoff(tapsigner, keyhost_bin, tmp_path):
    where, _, _ = tapsigner
    # A path the card cannot sign at: refused before anything is sent.
    out = run(keyhost_bin, "key", "sign-message", "--card", *card_args(where), "--path", ACCOUNT + "/0/1/2", "--kind", "p2wpkh", "--json", "m",
              check=False)
    assert out.returncode == 1
    assert json.loads(out.stderr)["error"]["kind"] == "invalid_path"
    assert "a TAPSIGNER signs at most 2 unhardened levels below the path it derived to" in out.stderr
    # Wrong CVCs: wrong_cvc three times, then the back-off shown (429), waited out only when asked.
    for _ in range(3):
        out = run(keyhost_bin, "key", "xpub", "--card", *card_args(where), "--path", ACCOUNT, "--json", cvc="000000", check=False)
        assert out.returncode == 1 and json.loads(out.stderr)["error"]["kind"] == "wrong_cvc", out.stderr
        assert "000000" not in out.stderr
    out = run(keyhost_bin, "key", "xpub", "--card", *card_args(where), "--path", ACCOUNT, "--json", check=False)
    err = json.loads(out.stderr)["error"]
    assert out.returncode == 1 and err["kind"] == "rate_limited" and "429" in err["message"] and "--wait-backoff" in err["message"]
    out = run(keyhost_bin, "key", "xpub", "--card", *card_args(where), "--path", ACCOUNT, "--wait-backoff", "--json")
    assert json.loads(out.stdout)["path"] == ACCOUNT
    # The CVC never on the command line: --cvc-env names a variable, and a value there is refused.
    out = run(keyhost_bin, "card", "tapsigner", "status", *card_args(where), "--cvc-env", "MY_CVC", "--json", cvc=None, env={"MY_CVC": CVC})
    assert json.loads(out.stdout)["state"] == "ready"


@pytest.mark.parametrize("transport", ["virtual", "pcsc"])
def test_satscard_read_unseal_and_sign(transport, serve, keyhost_bin, tmp_path):
    state = tmp_path / "satscard.json"
    if transport == "pcsc":
        serve("satscard", "--card-state", str(state), "--seed", "sats cli")
        where = READER
    else:
        where = state
    read = json.loads(run(keyhost_bin, "card", "satscard", "read", *card_args(where), "--json", cvc=None).stdout)
    if transport == "pcsc":
        assert tap_card().get_address(faster=True) == read["address"]
        OPEN.pop().disconnect()
    slots = json.loads(run(keyhost_bin, "card", "satscard", "slots", *card_args(where), "--json", cvc=None).stdout)
    assert [s["state"] for s in slots["slots"]][:2] == ["sealed", "unused"]
    # Signing with a sealed slot is refused, saying to unseal.
    out = run(keyhost_bin, "key", "sign-message", "--card", *card_args(where), "--path", "m/0", "--kind", "p2wpkh", "--json", "x", check=False)
    assert out.returncode == 1 and json.loads(out.stderr)["error"]["kind"] == "sealed" and "unseal" in out.stderr
    # Without --yes and without a terminal: not confirmed, nothing unsealed.
    out = run(keyhost_bin, "card", "satscard", "unseal", *card_args(where), "--slot", "0", "--json", check=False)
    assert out.returncode == 1 and json.loads(out.stderr)["error"]["kind"] == "not_confirmed"
    unsealed = json.loads(run(keyhost_bin, "card", "satscard", "unseal", *card_args(where), "--slot", "0", "--yes", "--show-key", "--json").stdout)
    key = ec.PrivateKey.from_wif(unsealed["wif"])
    assert script.p2wpkh(key.get_public_key()).address(NETWORKS["main"]) == read["address"] == unsealed["address"]
    # Now the slot's key signs a message (coincurve recovers the unsealed key's public key).
    out = run(keyhost_bin, "key", "sign-message", "--card", *card_args(where), "--path", "m/0", "--kind", "p2wpkh", "--json", "sats")
    sig = base64.b64decode(json.loads(out.stdout)["signature"])
    recovered = coincurve.PublicKey.from_signature_and_message(sig[1:] + bytes([(sig[0] - 27) & 3]), message_hash(b"sats"), hasher=None)
    assert recovered.format() == key.get_public_key().sec()
    # The next slot.
    new = json.loads(run(keyhost_bin, "card", "satscard", "new", *card_args(where), "--json").stdout)
    assert new["slot"] == 1 and new["address"] != read["address"]
