"""keyhost's software SeedKeeper through the real PC/SC stack, driven by the maker's own client.

    scripts/virtual-reader start  ->  pcscd + vpcd  <-TCP-  keyhost card serve --vpcd --applet seedkeeper
                                         ^
                 pysatochip's CardConnector (pyscard) -+

pysatochip opens the secure channel, imports and exports secrets with its own header layout, and checks every
fingerprint itself (SHA-256 of the bytes) and every plain export's signature against the card's authentikey.
A generated master seed's xpub, derived by the card itself, is checked with bip-utils, and again by importing
the exported seed into a soft Satochip.
"""
import hashlib
import json
import os
import stat
import subprocess
from unittest import mock

import coincurve
import pytest
from bip_utils import Bip32Secp256k1
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from smartcard import scard
from smartcard.CardRequest import CardRequest

import pysatochip.CardConnector as satochip_module
from pysatochip.CardConnector import CardConnector, CardResetToFactoryError, SeedKeeperError, WrongPinError, PinBlockedError

from test_keycard_py import READER, serve, reader_running, wait_for_card  # noqa: F401  (fixtures)
from test_satochip_py import NoMonitor, satochip

PIN = b"1234"
PUK = b"87654321"
MNEMONIC = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"
# SoftSeedKeeper.testCAKey(): the CA that signs a soft SeedKeeper's device certificate.
TEST_CA = coincurve.PrivateKey(hashlib.sha256(b"keyhost soft seedkeeper test CA").digest()).public_key


def seedkeeper():
    """A CardConnector on READER, set up as pysatochip's insertion observer does it: CPLC/IIN/CIN, SELECT, status."""
    wait_for_card()

    def request(timeout, cardType):
        return CardRequest(timeout=5, readers=[READER], cardType=cardType)

    with mock.patch.object(satochip_module, "CardMonitor", NoMonitor), mock.patch.object(satochip_module, "CardRequest", request):
        cc = CardConnector(card_filter=["seedkeeper"])
    assert cc.card_present
    cc.cardservice.connection.connect(disposition=scard.SCARD_LEAVE_CARD)
    cplc, iin, cin = cc.card_get_CPLC()[0], cc.card_get_IIN()[0], cc.card_get_CIN()[0]
    cc.UID_SHA1 = hashlib.sha1(bytes(cplc + iin + cin)).hexdigest()
    response, sw1, sw2 = cc.card_select()
    assert (sw1, sw2) == (0x90, 0x00) and cc.card_type == "SeedKeeper"
    _, sw1, sw2, _ = cc.card_get_status()
    assert (sw1, sw2) == (0x90, 0x00)
    return cc


def setup(cc, pin_tries=5, puk_tries=3):
    response, sw1, sw2 = cc.card_setup(pin_tries, puk_tries, PIN, PUK, pin_tries, puk_tries, b"unused01", b"unused02",
                                       32, 0, 0x01, 0x01, 0x01)
    assert (sw1, sw2) == (0x90, 0x00)


def plain_secret(cc, secret_type, label, secret_list, export_rights="Plaintext export allowed"):
    """A secret dictionary as pysatochip's tools build it for seedkeeper_import_secret."""
    return {"header": cc.make_header(secret_type, export_rights, label), "secret_list": secret_list}


def test_status_setup_and_pin(serve):
    serve("--applet", "seedkeeper", "--seed", "sk-status")
    cc = seedkeeper()
    _, sw1, sw2, status = cc.card_get_status()
    assert (status["protocol_major_version"], status["protocol_minor_version"]) == (0, 2)
    assert (status["applet_major_version"], status["applet_minor_version"]) == (0, 1)
    assert status["setup_done"] is False and status["needs_secure_channel"] is True and status["nfc_policy"] == 0
    # Before SETUP the SeedKeeper status is refused with 9C04, which pysatochip names.
    with pytest.raises(Exception, match="setup not done"):
        cc.seedkeeper_get_status()
    setup(cc, pin_tries=4)
    assert cc.sc is not None and cc.sc.initialized_secure_channel
    _, _, _, status = cc.card_get_status()
    assert status["setup_done"] is True and (status["PIN0_remaining_tries"], status["PUK0_remaining_tries"]) == (4, 3)
    with pytest.raises(WrongPinError) as wrong:
        cc.card_verify_PIN_simple(b"0000")
    assert wrong.value.pin_left == 3
    cc.card_verify_PIN_simple(PIN)
    _, sw1, sw2, sk = cc.seedkeeper_get_status()
    assert (sw1, sw2) == (0x90, 0x00)
    assert (sk["nb_secrets"], sk["total_memory"], sk["free_memory"]) == (0, 0xFFF, 0xFFF - 2)
    # The failed VERIFY PIN is the latest log record: instruction 42, no ids, 63C0 + tries left.
    assert sk["nb_logs_total"] == 1 and sk["nb_logs_avail"] == 100
    assert bytes(sk["last_log"]) == bytes([0x42, 0xFF, 0xFF, 0xFF, 0xFF, 0x63, 0xC3])
    # A plain command is refused: the card insists on the channel.
    response, sw1, sw2 = cc.cardservice.connection.transmit([0xB0, 0xA7, 0x00, 0x00])
    assert (sw1, sw2) == (0x9C, 0x20)


def test_pin_blocks_puk_unblocks_and_an_exhausted_puk_resets(serve):
    serve("--applet", "seedkeeper", "--seed", "sk-block")
    cc = seedkeeper()
    setup(cc, pin_tries=2, puk_tries=2)
    cc.card_verify_PIN_simple(PIN)
    cc.seedkeeper_import_secret(plain_secret(cc, "Password", "doomed", [4] + list(b"pass")))
    for _ in range(2):
        with pytest.raises(WrongPinError):
            cc.card_verify_PIN_simple(b"0000")
    with pytest.raises(PinBlockedError):
        cc.card_verify_PIN_simple(PIN)
    response, sw1, sw2 = cc.card_unblock_PIN(0, list(PUK))
    assert (sw1, sw2) == (0x90, 0x00)
    cc.card_verify_PIN_simple(PIN)
    assert len(cc.seedkeeper_list_secret_headers()) == 1
    for _ in range(2):
        with pytest.raises(WrongPinError):
            cc.card_verify_PIN_simple(b"0000")
    with pytest.raises(WrongPinError):
        cc.card_unblock_PIN(0, list(b"11111111"))
    # The last PUK try resets the card to factory (FF00): secrets and setup are gone.
    with pytest.raises(CardResetToFactoryError):
        cc.card_unblock_PIN(0, list(b"11111111"))
    _, _, _, status = cc.card_get_status()
    assert status["setup_done"] is False
    setup(cc)
    cc.card_verify_PIN_simple(PIN)
    assert cc.seedkeeper_list_secret_headers() == []


def test_import_list_and_export_a_mnemonic_and_a_password(serve):
    serve("--applet", "seedkeeper", "--seed", "sk-secrets")
    cc = seedkeeper()
    setup(cc)
    cc.card_verify_PIN_simple(PIN)
    # pysatochip's layouts: a BIP39 mnemonic is [size | mnemonic | size | passphrase], a password [size | password].
    mnemonic = [len(MNEMONIC)] + list(MNEMONIC.encode()) + [len(b"TREZOR")] + list(b"TREZOR")
    password = [len(b"correct horse battery staple")] + list(b"correct horse battery staple")
    mid, mfp = cc.seedkeeper_import_secret(plain_secret(cc, "BIP39 mnemonic", "main wallet", mnemonic))
    pid, pfp = cc.seedkeeper_import_secret(plain_secret(cc, "Password", "mail", password))
    # pysatochip compared the card's fingerprints with its own SHA-256 already; check them once more here.
    assert mfp == hashlib.sha256(bytes(mnemonic)).hexdigest()[:8] and pfp == hashlib.sha256(bytes(password)).hexdigest()[:8]
    assert (mid, pid) == (0, 1)

    headers = cc.seedkeeper_list_secret_headers()
    assert [h["id"] for h in headers] == [pid, mid]
    assert [(h["type"], h["label"], h["origin"], h["export_rights"]) for h in headers] == [
        (0x90, "mail", 0x01, 0x01), (0x30, "main wallet", 0x01, 0x01)]
    assert [h["fingerprint"] for h in headers] == [pfp, mfp]

    exported = cc.seedkeeper_export_secret(mid)  # pysatochip checks the authentikey signature and the fingerprint
    assert exported["secret_list"] == mnemonic and exported["fingerprint"] == mfp
    assert exported["export_nbplain"] == 1 and exported["label"] == "main wallet"
    assert cc.seedkeeper_export_secret(pid)["secret_list"] == password

    _, _, _, sk = cc.seedkeeper_get_status()
    assert sk["nb_secrets"] == 2
    logs, total, available = cc.seedkeeper_print_logs()
    assert (logs[0][0], logs[0][1], logs[0][3]) == (0xA2, pid, 0x9000)  # newest first: the last export
    assert total == 4

    # Delete one; it is gone from the listing and from export.
    _, sw1, sw2, result = cc.seedkeeper_reset_secret(pid)
    assert result["is_reset"] is True
    assert [h["id"] for h in cc.seedkeeper_list_secret_headers()] == [mid]
    with pytest.raises(SeedKeeperError, match="secret not found"):
        cc.seedkeeper_export_secret(pid)
    assert cc.seedkeeper_reset_secret(pid)[3]["is_reset"] is False


def test_export_rights_and_a_long_secret(serve):
    serve("--applet", "seedkeeper", "--seed", "sk-rights")
    cc = seedkeeper()
    setup(cc)
    cc.card_verify_PIN_simple(PIN)
    forbidden, _ = cc.seedkeeper_import_secret(plain_secret(cc, "Secret Key", "never", [1, 2, 3], "Export forbidden"))
    secure, _ = cc.seedkeeper_import_secret(plain_secret(cc, "Secret Key", "secure", [4, 5, 6], "Encrypted export only"))
    for sid in (forbidden, secure):
        with pytest.raises(SeedKeeperError, match="not allowed"):
            cc.seedkeeper_export_secret(sid)
    # Longer than a 128-byte chunk both ways.
    data = list(hashlib.sha512(b"a").digest() * 5)
    sid, fp = cc.seedkeeper_import_secret(plain_secret(cc, "Data", "long", data))
    assert fp == hashlib.sha256(bytes(data)).hexdigest()[:8]
    assert cc.seedkeeper_export_secret(sid)["secret_list"] == data


def test_generated_master_seed_derives_the_same_xpub_on_the_card_and_on_a_satochip(serve):
    server = serve("--applet", "seedkeeper", "--seed", "sk-generate")
    cc = seedkeeper()
    setup(cc)
    cc.card_verify_PIN_simple(PIN)
    response, sw1, sw2, sid, fingerprint = cc.seedkeeper_generate_masterseed(32, 0x01, "generated")
    assert (sw1, sw2) == (0x90, 0x00)
    header = cc.seedkeeper_list_secret_headers()[0]
    assert (header["type"], header["origin"], header["label"]) == (0x10, 0x03, "generated")
    exported = cc.seedkeeper_export_secret(sid)
    secret = bytes(exported["secret_list"])
    # The stored form is [size | seed]; the fingerprint covers both, as the applet computes it.
    assert len(secret) == 33 and secret[0] == 32
    assert hashlib.sha256(secret).hexdigest()[:8] == fingerprint == exported["fingerprint"]
    seed = secret[1:]
    expected = Bip32Secp256k1.FromSeed(seed).DerivePath("m/84'/0'/0'").PublicKey().ToExtended()
    # SeedKeeper 0.2 derives from its master seed secrets itself (pysatochip passes the secret id).
    assert cc.card_bip32_get_xpub("m/84'/0'/0'", "standard", True, sid=sid) == expected
    cc.card_disconnect()
    server.stop()

    # What a SeedKeeper's master seed is for: a Satochip loaded with it derives the xpub bip-utils derives.
    serve("--applet", "satochip", "--seed", "sk-satochip")
    sc = satochip()
    response, sw1, sw2 = sc.card_setup(5, 3, PIN, PUK, 5, 3, b"unused01", b"unused02", 32, 0, 0x01, 0x01, 0x01)
    assert (sw1, sw2) == (0x90, 0x00)
    sc.card_verify_PIN_simple(PIN)
    sc.card_bip32_import_seed(list(seed))
    assert sc.card_bip32_get_xpub("m/84'/0'/0'", "standard", True) == expected


def test_authenticity(serve):
    serve("--applet", "seedkeeper", "--seed", "sk-pki")
    cc = seedkeeper()
    setup(cc)
    cc.card_verify_PIN_simple(PIN)
    is_authentic, txt_ca, txt_subca, txt_device, txt_error = cc.card_verify_authenticity()
    assert is_authentic is False
    assert txt_error == "Exception during device certificate validation: unable to get local issuer certificate"
    assert "Issuer: CN=keyhost soft SeedKeeper test CA" in txt_device
    certificate = x509.load_pem_x509_certificate(cc.card_export_perso_certificate().encode())
    common_name = certificate.subject.get_attributes_for_oid(x509.NameOID.COMMON_NAME)[0].value
    assert common_name == cc.UID_SHA1
    ca = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256K1(), TEST_CA.format(compressed=False))
    ca.verify(certificate.signature, certificate.tbs_certificate_bytes, ec.ECDSA(hashes.SHA256()))
    device_key = certificate.public_key().public_bytes(encoding=serialization.Encoding.X962,
                                                       format=serialization.PublicFormat.UncompressedPoint)
    assert cc.card_challenge_response_pki(device_key) == (True, "")
    # The exported secrets are signed by that same key (the authentikey).
    assert cc.card_export_authentikey().get_public_key_bytes(compressed=False) == device_key


def test_state_file_is_private_and_survives_a_restart(serve, tmp_path):
    state = tmp_path / "seedkeeper.json"
    server = serve("--applet", "seedkeeper", "--card-state", str(state), "--seed", "sk-state")
    cc = seedkeeper()
    setup(cc)
    cc.card_verify_PIN_simple(PIN)
    sid, fp = cc.seedkeeper_import_secret(plain_secret(cc, "Password", "kept", [4] + list(b"kept")))
    assert stat.S_IMODE(os.stat(state).st_mode) == 0o600
    assert json.loads(state.read_text())["setupDone"] is True
    cc.card_disconnect()
    server.stop()
    serve("--applet", "seedkeeper", "--card-state", str(state))
    cc = seedkeeper()
    cc.card_verify_PIN_simple(PIN)
    assert cc.seedkeeper_export_secret(sid)["secret_list"] == [4] + list(b"kept")


def test_a_corrupt_state_file_is_refused_with_the_reason(keyhost_bin, tmp_path):
    state = tmp_path / "bad.json"
    state.write_text("{\"authentikey\": [1, 2]}")
    result = subprocess.run([keyhost_bin, "card", "serve", "--vpcd", "127.0.0.1:1", "--applet", "seedkeeper",
                             "--card-state", str(state)], capture_output=True, text=True, timeout=30)
    assert result.returncode != 0
    assert "soft SeedKeeper state" in result.stderr and "bad.json" in result.stderr
