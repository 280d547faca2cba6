"""keyhost's software TAPSIGNER and SATSCARD through the real PC/SC stack, driven by Coinkite's own client.

    scripts/virtual-reader start  ->  pcscd + vpcd  <-TCP-  keyhost card serve --vpcd --applet tapsigner|satscard
                                         ^
                              cktap (pyscard) finds the card by its ATR

Keys are checked with bip-utils (BIP32 from the decrypted backup), addresses with embit, signatures with coincurve.
"""
import hashlib
import json
import os
import pathlib
import signal
import subprocess
import time

import coincurve
import pytest
from bip_utils import Bip32Secp256k1
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from embit import ec, script
from embit.networks import NETWORKS

from smartcard.System import readers as pcsc_readers
from smartcard.Exceptions import CardConnectionException, NoCardException
from smartcard import scard

from cktap.constants import CARD_ATR, FACTORY_ROOT_KEYS
from cktap.exceptions import CardRuntimeError
from cktap.proto import CKTapCard
from cktap.transport import CKTapNFCTransport
from cktap.utils import card_pubkey_to_ident, pick_nonce, verify_certs_ll
from cktap.compat import CT_sig_to_pubkey, sha256s

REPO = pathlib.Path(__file__).resolve().parents[2]
READER = "Virtual PCD 00 01"
PORT = 35964
CVC = "123456"
# SoftCKTap.testFactoryRootKey(): the root of a software tap card's certificate chain.
TEST_ROOT = coincurve.PrivateKey(hashlib.sha256(b"keyhost soft cktap test factory root").digest()).public_key.format()


@pytest.fixture(scope="module", autouse=True)
def reader_running():
    subprocess.run([str(REPO / "scripts" / "virtual-reader"), "start"], check=True, timeout=60)
    yield


def card_present():
    rv, context = scard.SCardEstablishContext(scard.SCARD_SCOPE_USER)
    if rv != scard.SCARD_S_SUCCESS:
        return False
    try:
        rv, states = scard.SCardGetStatusChange(context, 0, [(READER, scard.SCARD_STATE_UNAWARE)])
        return rv == scard.SCARD_S_SUCCESS and bool(states[0][1] & scard.SCARD_STATE_PRESENT)
    finally:
        scard.SCardReleaseContext(context)


def wait_for(predicate, what, timeout=15):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"{what} after {timeout} s")


OPEN = []


@pytest.fixture
def serve(keyhost_bin, tmp_path):
    procs = []

    def start(applet, *args, env=None):
        log = open(tmp_path / f"serve-{applet}.log", "ab")
        proc = subprocess.Popen([keyhost_bin, "card", "serve", "--vpcd", f"127.0.0.1:{PORT}", "--applet", applet, *args],
                                stdout=subprocess.DEVNULL, stderr=log, env=None if env is None else {**os.environ, **env})
        procs.append(proc)
        wait_for(lambda: b"connected" in (tmp_path / f"serve-{applet}.log").read_bytes() or proc.poll() is not None, "no connection")
        assert proc.poll() is None, (tmp_path / f"serve-{applet}.log").read_text()
        wait_for(card_present, f"no card in {READER}")
        return proc

    yield start
    while OPEN:
        try:
            OPEN.pop().disconnect()
        except Exception:
            pass
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=10)
    wait_for(lambda: not card_present(), "the card is still present", timeout=5)


def tap_card():
    """cktap on the named reader, found the way cktap.transport.find_cards finds cards: by ATR."""
    reader = next(r for r in pcsc_readers() if str(r) == READER)
    conn = reader.createConnection()
    last = None
    for _ in range(100):
        try:
            conn.connect(disposition=scard.SCARD_LEAVE_CARD)
            break
        except (NoCardException, CardConnectionException) as e:
            last = e
            time.sleep(0.05)
    else:
        raise AssertionError(f"cannot connect: {last}")
    OPEN.append(conn)
    assert conn.getATR() == CARD_ATR
    return CKTapCard(CKTapNFCTransport(conn))


def expect_code(code, fn, *args, **kwargs):
    with pytest.raises(CardRuntimeError) as info:
        fn(*args, **kwargs)
    assert info.value.code == code, str(info.value)


def check_chain_reaches_test_root(card, slot_pubkey=None):
    """cktap's certificate_check calls the card counterfeit (the root is not Coinkite's) only after the card's
    signature verified; the chain itself, walked by cktap's code, reaches keyhost's test root."""
    with pytest.raises(RuntimeError, match="Root cert is not from Coinkite"):
        card.certificate_check(slot_pubkey)
    st = card.send("status")
    chain = card.send("certs")["cert_chain"]
    nonce = pick_nonce()
    check = card.send("check", nonce=nonce)
    with pytest.raises(RuntimeError, match="Root cert is not from Coinkite"):
        verify_certs_ll(st["card_nonce"], st["pubkey"], nonce, chain, check["auth_sig"], slot_pubkey)
    key = st["pubkey"]
    for sig in chain:
        key = CT_sig_to_pubkey(sha256s(key), sig)
    assert key == TEST_ROOT and key not in FACTORY_ROOT_KEYS


def p2wpkh(pubkey):
    return script.p2wpkh(ec.PublicKey.parse(pubkey)).address(NETWORKS["main"])


def test_tapsigner(serve, tmp_path):
    state_file = tmp_path / "tapsigner.json"
    serve("tapsigner", "--card-state", str(state_file), "--seed", "e2e tapsigner")
    card = tap_card()
    assert card.is_tapsigner and card.product_name == "TAPSIGNER" and card.applet_version == "1.0.3"
    assert card.card_ident == card_pubkey_to_ident(card.card_pubkey)
    assert "path" not in card.get_status()
    assert oct(state_file.stat().st_mode & 0o777) == "0o600"

    # Setup as cktap's `setup` command does it.
    card.send_auth("new", CVC, slot=0, chain_code=hashlib.sha256(b"my entropy").digest())
    assert card.get_derivation() == "m/84h/0h/0h"
    check_chain_reaches_test_root(card)

    # Wrong CVC: 401 three times, then 429 until 15 waits.
    for _ in range(3):
        expect_code(401, card.get_xpub, "000000")
    expect_code(429, card.get_xpub, CVC)
    assert card.get_status()["auth_delay"] == 15
    for left in range(14, -1, -1):
        assert card.send("wait")["auth_delay"] == left
    assert "auth_delay" not in card.get_status()

    card.set_derivation("m/84h/0h/1h", CVC)
    assert card.get_derivation() == "m/84h/0h/1h"
    xpub = card.get_xpub(CVC)
    master_xpub = card.get_xpub(CVC, master=True)

    # The backup, opened with the key printed on the card (here: in the state file), holds the master xprv.
    backup_key = bytes(json.loads(state_file.read_text())["backupKey"])
    data = card.make_backup(CVC)
    decryptor = Cipher(algorithms.AES(backup_key), modes.CTR(bytes(16))).decryptor()
    xprv, path, *_ = (decryptor.update(data) + decryptor.finalize()).decode().split("\n")
    assert path == "m/84h/0h/1h" and xprv.startswith("xprv")
    master = Bip32Secp256k1.FromExtendedKey(xprv)
    assert master.PublicKey().ToExtended() == master_xpub
    account = master.DerivePath("m/84'/0'/1'")
    card_account = Bip32Secp256k1.FromExtendedKey(xpub)
    assert card_account.PublicKey().RawCompressed().ToBytes() == account.PublicKey().RawCompressed().ToBytes()
    assert card_account.ChainCode().ToBytes() == account.ChainCode().ToBytes()
    assert card.get_status()["num_backups"] == 1

    # Signing at a sub-path: the recoverable signature recovers the key bip-utils derives.
    digest = hashlib.sha256(b"a transaction").digest()
    sig = card.sign_digest(CVC, digest, subpath="0/5")
    expected = account.DerivePath("0/5").PublicKey().RawCompressed().ToBytes()
    recovered = coincurve.PublicKey.from_signature_and_message(sig[1:] + bytes([sig[0] - 39]), digest, hasher=None)
    assert recovered.format() == expected
    assert card.get_pubkey(CVC) == account.PublicKey().RawCompressed().ToBytes()
    # Below the card's account key (whose parent fingerprint the card leaves zero) cktap's xpub is bip-utils' exactly.
    assert card.derive_xpub_at_path(CVC, "m/84h/0h/1h/1/2") == account.DerivePath("1/2").PublicKey().ToExtended()

    # Change the CVC: the old one is refused, the new one works.
    card.change_cvc(CVC, "24682468")
    expect_code(401, card.get_xpub, CVC)
    assert card.get_xpub("24682468") == xpub


def test_satscard(serve, tmp_path):
    serve("satscard", "--card-state", str(tmp_path / "satscard.json"), "--seed", "e2e satscard")
    card = tap_card()
    assert not card.is_tapsigner and card.product_name == "SATSCARD" and card.num_slots == 10 and card.active_slot == 0

    pubkey, addr = card.get_address(faster=True, incl_pubkey=True)
    assert addr == p2wpkh(pubkey) and addr.startswith("bc1q")
    check_chain_reaches_test_root(card, pubkey)
    # With the root check done above, cktap's full path also checks the slot's BIP32 derivation from the chain code.
    card._certs_checked = True
    assert card.get_address() == addr
    assert card.get_slot_usage(0)[1] == "sealed"
    assert card.get_slot_usage(1)[1] == "unused"

    expect_code(401, card.unseal_slot, "000000")
    privkey, slot = card.unseal_slot(CVC)
    assert slot == 0
    assert coincurve.PrivateKey(privkey).public_key.format() == pubkey
    assert card.get_privkey(CVC, 0) == privkey
    usage = card.get_slot_usage(0, CVC)
    assert usage[0] == addr and usage[1] == "UNSEALED"
    card.first_look()
    assert card.active_slot == 1

    # A signature by the unsealed slot's key.
    digest = hashlib.sha256(b"sweep").digest()
    sig = card.sign_digest(CVC, digest, slot=0)
    assert coincurve.PublicKey.from_signature_and_message(sig[1:] + bytes([sig[0] - 39]), digest, hasher=None).format() == pubkey

    # The next slot, with the previous chain code (none given), as cktap's `setup` does it.
    assert card.get_address(faster=True) is None
    resp = card.send_auth("new", CVC, slot=1)[1]
    assert resp["slot"] == 1
    card.first_look()
    card._certs_checked = True
    pubkey1, addr1 = card.get_address(incl_pubkey=True)
    assert addr1 == p2wpkh(pubkey1) and addr1 != addr
    assert card.get_slot_usage(1)[1] == "sealed"


def test_cvc_from_environment_and_state_kind(serve, keyhost_bin, tmp_path):
    """--cvc-env names where a new card's CVC comes from; a state file of the other product is refused."""
    state_file = tmp_path / "ts.json"
    serve("tapsigner", "--card-state", str(state_file), "--cvc-env", "TAP_CVC", env={"TAP_CVC": "97531864"})
    card = tap_card()
    expect_code(401, card.send_auth, "new", CVC, slot=0, chain_code=hashlib.sha256(b"x").digest())
    card.send_auth("new", "97531864", slot=0, chain_code=hashlib.sha256(b"x").digest())
    assert card.get_derivation() == "m/84h/0h/0h"
    assert "97531864" not in (tmp_path / "serve-tapsigner.log").read_text()

    wrong = subprocess.run([keyhost_bin, "card", "serve", "--vpcd", f"127.0.0.1:{PORT}", "--applet", "satscard",
                            "--card-state", str(state_file)], capture_output=True, text=True, timeout=30)
    assert wrong.returncode != 0 and "holds a tapsigner" in wrong.stderr
    bad = subprocess.run([keyhost_bin, "card", "serve", "--vpcd", "--applet", "satscard", "--cvc-env", "NO_SUCH_VAR_X"],
                         capture_output=True, text=True, timeout=30, env={k: v for k, v in os.environ.items() if k != "NO_SUCH_VAR_X"})
    assert bad.returncode != 0 and "NO_SUCH_VAR_X" in bad.stderr
