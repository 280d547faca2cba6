"""`keyhost card satochip …`, `card list` and `card info` with a Satochip, checked against independent peers.

Two cards: the in-process software Satochip (`--reader virtual --card-state F`), and `keyhost card serve --applet
satochip` behind the real pcscd, where the maker's own client (pysatochip) reads what keyhost set and sets what
keyhost reads. Keys are compared with bip-utils' BIP32 derivation of the BIP39 test mnemonic, message signatures
recovered with coincurve, PSBTs made, checked and finalized by embit (Tests/Oracles/psbt_oracle.py).
"""
import base64
import hashlib
import json
import os
import pathlib
import stat
import subprocess
import sys

import coincurve
import pytest
from bip_utils import Bip32Secp256k1, Bip39SeedGenerator
from smartcard import scard
from smartcard.System import readers as pcsc_readers

from test_keycard_py import READER, SECOND_PORT, SECOND_READER, serve, reader_running, wait_for_card  # noqa: F401  (fixtures)
from test_satochip_py import NoMonitor, satochip  # noqa: F401

REPO = pathlib.Path(__file__).resolve().parents[2]
PIN = "1234"
PUK = "87654321"
MNEMONIC = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"
SEED = Bip39SeedGenerator(MNEMONIC).Generate("")
SECRETS = {"KEYHOST_PIN": PIN, "KEYHOST_PUK": PUK}
# SoftSatochip.testCAKey(), which signs a software Satochip's device certificate.
TEST_CA = coincurve.PrivateKey(hashlib.sha256(b"keyhost soft satochip test CA").digest()).public_key.format().hex()


def keyhost(keyhost_bin, *args, env=None):
    return subprocess.run([keyhost_bin, *args], capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", **(env or {})})


def ok(result):
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def error(result):
    assert result.returncode == 1, (result.stdout, result.stderr)
    return json.loads(result.stderr)["error"]


def bip32(path):
    return Bip32Secp256k1.FromSeed(SEED).DerivePath(path)


def psbt_oracle(command, request):
    answer = subprocess.run([sys.executable, str(REPO / "Tests/Oracles/psbt_oracle.py"), command], input=json.dumps(request),
                            capture_output=True, text=True, check=True)
    return json.loads(answer.stdout)


def check_signing(keyhost_bin, card, env, tmp_path):
    """The seeded card signs as the mnemonic's wallet: xpub (bip-utils), message (coincurve), PSBT (embit)."""
    xpub = ok(keyhost(keyhost_bin, "key", "xpub", "--card", *card, "--path", "m/84'/0'/0'", "--family", "xpub", "--json", env=env))
    assert xpub["xpub"] == bip32("m/84'/0'/0'").PublicKey().ToExtended()

    path = "m/84'/0'/0'/0/0"
    signed = ok(keyhost(keyhost_bin, "key", "sign-message", "--card", *card, "--path", path, "--json", "hello satochip", env=env))
    compact = base64.b64decode(signed["signature"])
    message = b"\x18Bitcoin Signed Message:\n" + bytes([len(b"hello satochip")]) + b"hello satochip"
    digest = hashlib.sha256(hashlib.sha256(message).digest()).digest()
    recovered = coincurve.PublicKey.from_signature_and_message(compact[1:] + bytes([(compact[0] - 27) & 3]), digest, hasher=None)
    assert recovered.format() == bip32(path).PublicKey().RawCompressed().ToBytes()

    made = psbt_oracle("make", {"mnemonic": MNEMONIC, "network": "test", "seed": 11,
                                "inputs": [{"kind": "p2wpkh", "path": "m/84h/1h/0h/0/0", "amount": 50_000},
                                           {"kind": "p2wpkh", "path": "m/84h/1h/0h/1/3", "amount": 20_000}],
                                "outputs": [{"amount": 60_000}, {"amount": 9_000, "path": "m/84h/1h/0h/1/4"}]})
    (tmp_path / "t.psbt").write_text(made["psbt"] + "\n")
    psbt = ok(keyhost(keyhost_bin, "psbt", "sign", str(tmp_path / "t.psbt"), "--card", *card, "--json", env=env))["psbt"]
    assert psbt_oracle("verify", {"psbt": psbt})["inputs"] == [{"signatures": 1, "valid": True}] * 2
    assert psbt_oracle("finalize", {"psbt": psbt})["tx"]


def test_software_satochip_from_setup_to_signatures(keyhost_bin, tmp_path):
    state = tmp_path / "s.json"
    card = ["--reader", "virtual", "--card-state", str(state)]
    sato = lambda *args, env=SECRETS: keyhost(keyhost_bin, "card", "satochip", *args, *card, "--json", env=env)  # noqa: E731

    # Only setup makes a software Satochip.
    assert error(sato("status"))["kind"] == "not_found"
    made = ok(sato("setup"))
    assert made == {"setup_done": True, "pin_retries": 5, "puk_retries": 5}
    assert stat.S_IMODE(os.stat(state).st_mode) == 0o600
    assert error(sato("setup"))["kind"] == "already_initialized"

    status = ok(sato("status", env={}))
    assert (status["family"], status["version"], status["state"]) == ("satochip", "0.12-0.6", "set up, no seed")
    assert status["needs_secure_channel"] is True and status["seeded"] is False

    # A wrong PIN costs a try, said in the error; exit code 1.
    wrong = sato("verify-pin", env={"KEYHOST_PIN": "0000"})
    failure = error(wrong)
    assert failure["kind"] == "wrong_pin" and failure["retries_left"] == 4
    assert "0000" not in wrong.stderr
    assert ok(sato("status", env={}))["pin_retries"] == 4
    assert ok(sato("verify-pin")) == {"verified": True, "pin_retries": 5}

    # Keys before a seed: refused with the command that gives one.
    nokey = keyhost(keyhost_bin, "key", "xpub", "--card", *card, "--path", "m/84'/0'/0'", "--json", env=SECRETS)
    assert error(nokey)["kind"] == "no_key" and "keyhost card satochip import-seed" in nokey.stderr

    seeded = ok(sato("import-seed", env={**SECRETS, "KEYHOST_MNEMONIC": MNEMONIC}))
    assert seeded["seeded"] is True and len(bytes.fromhex(seeded["authentikey"])) == 33
    assert error(sato("import-seed", env={**SECRETS, "KEYHOST_MNEMONIC": MNEMONIC}))["kind"] == "already_seeded"
    assert ok(sato("status", env={}))["state"] == "ready"

    check_signing(keyhost_bin, card, SECRETS, tmp_path)

    assert ok(sato("label", "keyhost ✓")) == {"label": "keyhost ✓"}
    assert ok(sato("label")) == {"label": "keyhost ✓"}

    # The software card is certified by its test CA, which keyhost trusts for the software card only.
    verdict = ok(sato("certificate"))
    assert verdict["trusted"] is True and verdict["ca_key"] == TEST_CA and verdict["problem"] is None
    assert len(bytes.fromhex(verdict["device_public_key"])) == 33

    info = ok(keyhost(keyhost_bin, "card", "info", *card, "--json", env=SECRETS))
    assert (info["family"], info["state"], info["label"], info["certificate_trusted"]) == ("satochip", "ready", "keyhost ✓", True)
    assert info["device_public_key"] == verdict["device_public_key"]
    # Without a PIN in the environment, info only looks: no label, no verdict, never a prompt.
    looked = ok(keyhost(keyhost_bin, "card", "info", *card, "--json"))
    assert looked["label"] is None and looked["certificate_trusted"] is None and looked["pin_retries"] == 5
    text = keyhost(keyhost_bin, "card", "info", *card)
    assert text.returncode == 0 and "family: Satochip" in text.stdout and "state: ready" in text.stdout

    unconfirmed = keyhost(keyhost_bin, "card", "satochip", "reset-seed", *card, "--json", env=SECRETS)
    assert error(unconfirmed)["kind"] == "not_confirmed"
    assert ok(sato("reset-seed", "--yes")) == {"seeded": False}
    assert ok(sato("status", env={}))["state"] == "set up, no seed"


def test_pin_blocks_and_the_puk_unblocks_it(keyhost_bin, tmp_path):
    card = ["--reader", "virtual", "--card-state", str(tmp_path / "s.json")]
    sato = lambda *args, env=SECRETS: keyhost(keyhost_bin, "card", "satochip", *args, *card, "--json", env=env)  # noqa: E731
    ok(sato("setup", "--pin-tries", "2", "--puk-tries", "2"))
    assert error(sato("verify-pin", env={"KEYHOST_PIN": "0000"}))["retries_left"] == 1
    last = error(sato("verify-pin", env={"KEYHOST_PIN": "0000"}))
    assert last["kind"] in ("wrong_pin", "pin_blocked") and last["retries_left"] == 0
    assert error(sato("verify-pin"))["kind"] == "pin_blocked"
    wrong_puk = error(sato("unblock-pin", env={"KEYHOST_PUK": "11111111"}))
    assert wrong_puk["kind"] == "wrong_puk" and wrong_puk["retries_left"] == 1
    assert ok(sato("unblock-pin")) == {"pin_retries": 2, "puk_retries": 2}
    assert ok(sato("change-pin", env={**SECRETS, "KEYHOST_NEW_PIN": "5678"})) == {"changed": "pin"}
    assert error(sato("verify-pin"))["kind"] == "wrong_pin"
    assert ok(sato("verify-pin", env={"KEYHOST_PIN": "5678"}))["verified"] is True
    # A Keycard command on a Satochip's state file, and a Satochip command on a Keycard's, are refused.
    keycard_state = tmp_path / "k.json"
    ok(keyhost(keyhost_bin, "card", "init", "--reader", "virtual", "--card-state", str(keycard_state), "--json",
               env={"KEYHOST_PIN": "123456", "KEYHOST_PUK": "987654321098", "KEYHOST_PAIRING_PASSWORD": "KeycardTest",
                    "XDG_STATE_HOME": str(tmp_path)}))
    other = keyhost(keyhost_bin, "card", "satochip", "status", "--card-state", str(keycard_state), "--json")
    assert error(other)["kind"] == "invalid_argument" and "holds a Keycard" in other.stderr


def test_through_pcscd_with_pysatochip(serve, keyhost_bin, tmp_path):
    serve("--applet", "satochip", "--seed", "cli-pcsc")
    serve("--applet", "3.2", "--seed", "cli-pcsc-keycard", port=SECOND_PORT)
    card = ["--reader", READER]

    # card list: each card's applets, SELECT only.
    listed = {entry["name"]: entry for entry in ok(keyhost(keyhost_bin, "card", "list", "--json"))}
    assert listed[READER]["applets"] == [{"family": "satochip", "version": "0.12-0.6", "state": "not set up"}]
    assert listed[READER]["problem"] is None
    assert listed[SECOND_READER]["applets"] == [{"family": "keycard", "version": "", "state": "blank"}]
    text = keyhost(keyhost_bin, "card", "list")
    assert f"0: {READER}: card present" in text.stdout and "Satochip 0.12-0.6 (not set up)" in text.stdout
    assert "Keycard" in text.stdout
    # A card another program holds exclusively cannot be probed: said, not an error.
    holder = next(r for r in pcsc_readers() if str(r) == READER).createConnection()
    holder.connect(mode=scard.SCARD_SHARE_EXCLUSIVE, disposition=scard.SCARD_LEAVE_CARD)
    try:
        held = {entry["name"]: entry for entry in ok(keyhost(keyhost_bin, "card", "list", "--json"))}
        assert held[READER]["applets"] is None and "SHARING_VIOLATION" in held[READER]["problem"], held[READER]
        assert held[SECOND_READER]["applets"][0]["family"] == "keycard"
    finally:
        holder.disconnect()

    ok(keyhost(keyhost_bin, "card", "satochip", "setup", *card, "--json", env=SECRETS))
    ok(keyhost(keyhost_bin, "card", "satochip", "label", "set by keyhost", *card, "--json", env=SECRETS))
    ok(keyhost(keyhost_bin, "card", "satochip", "import-seed", *card, "--json", env={**SECRETS, "KEYHOST_MNEMONIC": MNEMONIC}))
    listed = {entry["name"]: entry for entry in ok(keyhost(keyhost_bin, "card", "list", "--json"))}
    assert listed[READER]["applets"][0]["state"] == "ready"

    # pysatochip reads what keyhost set: the label, and the seed's keys (as bip-utils derives them).
    cc = satochip()
    cc.card_verify_PIN_simple(PIN.encode())
    assert cc.card_get_label()[3] == "set by keyhost"
    assert cc.card_bip32_get_xpub("m/84'/0'/0'", "standard", True) == bip32("m/84'/0'/0'").PublicKey().ToExtended()
    # ... and keyhost reads what pysatochip sets.
    response, sw1, sw2 = cc.card_set_label("set by pysatochip")
    assert (sw1, sw2) == (0x90, 0x00)
    cc.card_disconnect()
    assert ok(keyhost(keyhost_bin, "card", "satochip", "label", *card, "--json", env=SECRETS)) == {"label": "set by pysatochip"}

    check_signing(keyhost_bin, card, SECRETS, tmp_path)

    # A card in a reader is not trusted by the software card's test CA unless told: a verdict, then a refusal.
    untrusted = ok(keyhost(keyhost_bin, "card", "satochip", "certificate", *card, "--json", env=SECRETS))
    assert untrusted["trusted"] is False and "not signed by any" in untrusted["problem"]
    warned = keyhost(keyhost_bin, "card", "satochip", "certificate", *card, env=SECRETS)
    assert warned.returncode == 0 and "certificate trusted: NO" in warned.stdout and "warning" in warned.stderr
    info = ok(keyhost(keyhost_bin, "card", "info", *card, "--json", env=SECRETS))
    assert info["family"] == "satochip" and info["certificate_trusted"] is False and info["label"] == "set by pysatochip"
    refused = keyhost(keyhost_bin, "card", "satochip", "reset-seed", "--yes", *card, "--json", env=SECRETS)
    assert error(refused)["kind"] == "untrusted_card" and "--trusted-ca" in refused.stderr
    assert ok(keyhost(keyhost_bin, "card", "satochip", "status", *card, "--json"))["seeded"] is True
    trusted = ok(keyhost(keyhost_bin, "card", "satochip", "certificate", *card, "--trusted-ca", TEST_CA, "--json", env=SECRETS))
    assert trusted["trusted"] is True and trusted["ca_key"] == TEST_CA
    assert ok(keyhost(keyhost_bin, "card", "satochip", "reset-seed", "--yes", "--trusted-ca", TEST_CA, *card, "--json",
                      env=SECRETS)) == {"seeded": False}

    # pysatochip sees the seed gone; a Keycard command on the Satochip says what the card is.
    cc = satochip()
    assert cc.card_get_status()[3]["is_seeded"] is False
    cc.card_disconnect()
    keycard_info = ok(keyhost(keyhost_bin, "card", "info", "--reader", SECOND_READER, "--json"))
    assert keycard_info["initialized"] is False and "family" not in keycard_info
