"""keyhost's software Satochip through the real PC/SC stack, driven by the maker's own client.

    scripts/virtual-reader start  ->  pcscd + vpcd  <-TCP-  keyhost card serve --vpcd --applet satochip
                                         ^
                 pysatochip's CardConnector (pyscard) -+

Every command after SELECT and GET STATUS goes through pysatochip's secure channel. Keys are compared with
bip-utils' BIP32 derivation of the imported seed, signatures verified with coincurve, the device certificate
checked with `cryptography` against the soft card's test CA.
"""
import hashlib
import json
import os
import stat
import subprocess
from unittest import mock

import coincurve
import pytest
from bip_utils import Bip32Secp256k1, Bip39SeedGenerator
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from smartcard import scard
from smartcard.CardRequest import CardRequest

import pysatochip.CardConnector as satochip_module
from pysatochip.CardConnector import CardConnector, WrongPinError, PinBlockedError

from test_keycard_py import READER, serve, reader_running, wait_for_card  # noqa: F401  (fixtures)

PIN = b"1234"
PUK = b"87654321"
MNEMONIC = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"
SEED = Bip39SeedGenerator(MNEMONIC).Generate("")
# SoftSatochip.testCAKey(): the CA that signs a soft card's device certificate.
TEST_CA = coincurve.PrivateKey(hashlib.sha256(b"keyhost soft satochip test CA").digest()).public_key


class NoMonitor:
    """Stands in for pyscard's CardMonitor: the real one would connect to the cards in every reader, those of
    other tests included; this test binds pysatochip to the virtual reader it serves."""

    def addObserver(self, observer):
        pass


def satochip():
    """A CardConnector on READER, set up as pysatochip's insertion observer does it: CPLC/IIN/CIN, SELECT, status."""
    wait_for_card()

    def request(timeout, cardType):
        return CardRequest(timeout=5, readers=[READER], cardType=cardType)

    with mock.patch.object(satochip_module, "CardMonitor", NoMonitor), mock.patch.object(satochip_module, "CardRequest", request):
        cc = CardConnector(card_filter=["satochip"])
    assert cc.card_present
    cc.cardservice.connection.connect(disposition=scard.SCARD_LEAVE_CARD)
    cplc, iin, cin = cc.card_get_CPLC()[0], cc.card_get_IIN()[0], cc.card_get_CIN()[0]
    cc.UID_SHA1 = hashlib.sha1(bytes(cplc + iin + cin)).hexdigest()
    response, sw1, sw2 = cc.card_select()
    assert (sw1, sw2) == (0x90, 0x00)
    _, sw1, sw2, _ = cc.card_get_status()
    assert (sw1, sw2) == (0x90, 0x00)
    return cc


def setup(cc, pin_tries=5, puk_tries=3):
    response, sw1, sw2 = cc.card_setup(pin_tries, puk_tries, PIN, PUK, pin_tries, puk_tries, b"unused01", b"unused02",
                                       32, 0, 0x01, 0x01, 0x01)
    assert (sw1, sw2) == (0x90, 0x00)


def bip32(path):
    return Bip32Secp256k1.FromSeed(SEED).DerivePath(path)


def test_status_setup_pin_and_secure_channel(serve):
    serve("--applet", "satochip", "--seed", "e2e-status")
    cc = satochip()
    _, sw1, sw2, status = cc.card_get_status()
    assert (sw1, sw2) == (0x90, 0x00)
    assert status["protocol_version"] == 12 and (status["applet_major_version"], status["applet_minor_version"]) == (0, 6)
    assert status["setup_done"] is False and status["is_seeded"] is False
    assert status["needs_secure_channel"] is True
    assert cc.sc is None
    setup(cc, pin_tries=20)  # beyond 15: the tries count takes 6 bits of SW2 (63C0 + n)
    # SETUP went through the secure channel pysatochip opened on demand.
    assert cc.sc is not None and cc.sc.initialized_secure_channel
    _, _, _, status = cc.card_get_status()
    assert status["setup_done"] is True
    assert (status["PIN0_remaining_tries"], status["PUK0_remaining_tries"]) == (20, 3)

    with pytest.raises(WrongPinError) as wrong:
        cc.card_verify_PIN_simple(b"0000")
    assert wrong.value.pin_left == 19
    assert cc.card_get_status()[3]["PIN0_remaining_tries"] == 19
    cc.card_verify_PIN_simple(PIN)
    assert cc.card_get_status()[3]["PIN0_remaining_tries"] == 20

    # A plain command is refused: the card insists on the channel.
    response, sw1, sw2 = cc.cardservice.connection.transmit([0xB0, 0x42, 0x00, 0x00, 4] + list(PIN))
    assert (sw1, sw2) == (0x9C, 0x20)


def test_pin_blocks_and_puk_unblocks(serve):
    serve("--applet", "satochip", "--seed", "e2e-block")
    cc = satochip()
    setup(cc, pin_tries=2, puk_tries=2)
    with pytest.raises(WrongPinError):
        cc.card_verify_PIN_simple(b"0000")
    with pytest.raises(WrongPinError) as last:
        cc.card_verify_PIN_simple(b"0000")
    assert last.value.pin_left == 0
    with pytest.raises(PinBlockedError):
        cc.card_verify_PIN_simple(PIN)
    with pytest.raises(WrongPinError) as wrong_puk:
        cc.card_unblock_PIN(0, list(b"11111111"))
    assert wrong_puk.value.pin_left == 1
    response, sw1, sw2 = cc.card_unblock_PIN(0, list(PUK))
    assert (sw1, sw2) == (0x90, 0x00)
    cc.card_verify_PIN_simple(PIN)
    response, sw1, sw2 = cc.card_change_PIN(0, list(PIN), list(b"5678"))
    assert (sw1, sw2) == (0x90, 0x00)
    with pytest.raises(WrongPinError):
        cc.card_verify_PIN_simple(PIN)
    cc.card_verify_PIN_simple(b"5678")


def test_seed_xpubs_and_signatures_against_bip_utils(serve):
    serve("--applet", "satochip", "--seed", "e2e-keys")
    cc = satochip()
    setup(cc)
    cc.card_verify_PIN_simple(PIN)
    authentikey = cc.card_bip32_import_seed(SEED)
    assert authentikey is not None
    assert cc.card_get_status()[3]["is_seeded"] is True

    for path in ["m", "m/0'", "m/44'/0'/0'", "m/84'/0'/0'/0/7", "m/0'/1/2'/2/1000000000"]:
        expected = bip32(path).PublicKey().ToExtended()
        assert cc.card_bip32_get_xpub(path, "standard", True) == expected, path

    path = "m/84'/0'/0'/0/7"
    pubkey, chaincode = cc.card_bip32_get_extendedkey(path)
    node = bip32(path)
    assert pubkey.get_public_key_bytes(compressed=True) == node.PublicKey().RawCompressed().ToBytes()
    assert bytes(chaincode) == node.ChainCode().ToBytes()
    digest = hashlib.sha256(b"a transaction to sign").digest()
    response, sw1, sw2 = cc.card_sign_transaction_hash(0xFF, list(digest), None)
    assert (sw1, sw2) == (0x90, 0x00)
    key = coincurve.PublicKey(node.PublicKey().RawCompressed().ToBytes())
    assert key.verify(bytes(response), digest, hasher=None)

    # Bitcoin signed message: pysatochip hashes client-side and signs with SIGN TRANSACTION HASH.
    response, sw1, sw2, compsig = cc.card_sign_message(0xFF, pubkey, "hello satochip")
    assert (sw1, sw2) == (0x90, 0x00) and len(compsig) == 65
    message = b"\x18Bitcoin Signed Message:\n" + bytes([len(b"hello satochip")]) + b"hello satochip"
    msg_hash = hashlib.sha256(hashlib.sha256(message).digest()).digest()
    recovered = coincurve.PublicKey.from_signature_and_message(bytes(compsig[1:]) + bytes([(compsig[0] - 27) & 3]), msg_hash, hasher=None)
    assert recovered.format() == node.PublicKey().RawCompressed().ToBytes()

    # Importing over a seed is refused; RESET SEED (with the PIN) clears it.
    with pytest.raises(Exception, match="already seeded"):
        cc.card_bip32_import_seed(SEED)
    response, sw1, sw2 = cc.card_reset_seed(PIN)
    assert (sw1, sw2) == (0x90, 0x00)
    cc.card_verify_PIN_simple(PIN)
    assert cc.card_get_status()[3]["is_seeded"] is False


def test_label(serve):
    serve("--applet", "satochip", "--seed", "e2e-label")
    cc = satochip()
    setup(cc)
    cc.card_verify_PIN_simple(PIN)
    assert cc.card_get_label()[3] == ""
    response, sw1, sw2 = cc.card_set_label("keyhost ✓")
    assert (sw1, sw2) == (0x90, 0x00)
    assert cc.card_get_label()[3] == "keyhost ✓"


def test_authenticity(serve):
    serve("--applet", "satochip", "--seed", "e2e-pki")
    cc = satochip()
    setup(cc)
    cc.card_verify_PIN_simple(PIN)
    # pysatochip's verdict: a soft card does not chain to Satochip's CA (nor to its test CA).
    is_authentic, txt_ca, txt_subca, txt_device, txt_error = cc.card_verify_authenticity()
    assert is_authentic is False
    # It parses the certificate (and names its issuer) but finds no path to its CA.
    assert txt_error == "Exception during device certificate validation: unable to get local issuer certificate"
    assert "Issuer: CN=keyhost soft Satochip test CA" in txt_device
    # The certificate itself: X.509, named by the card's serial as pysatochip computes it, signed by the soft
    # card's test CA, for the key the card proves in the challenge-response.
    certificate = x509.load_pem_x509_certificate(cc.card_export_perso_certificate().encode())
    common_name = certificate.subject.get_attributes_for_oid(x509.NameOID.COMMON_NAME)[0].value
    assert common_name == cc.UID_SHA1
    ca = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256K1(), TEST_CA.format(compressed=False))
    ca.verify(certificate.signature, certificate.tbs_certificate_bytes, ec.ECDSA(hashes.SHA256()))
    device_key = certificate.public_key().public_bytes(encoding=serialization.Encoding.X962,
                                                       format=serialization.PublicFormat.UncompressedPoint)
    assert cc.card_challenge_response_pki(device_key) == (True, "")
    other = coincurve.PrivateKey().public_key.format(compressed=False)
    assert cc.card_challenge_response_pki(other)[0] is False


def test_state_file_is_private_and_survives_a_restart(serve, tmp_path):
    state = tmp_path / "satochip.json"
    server = serve("--applet", "satochip", "--card-state", str(state), "--seed", "e2e-state")
    cc = satochip()
    setup(cc)
    cc.card_verify_PIN_simple(PIN)
    cc.card_set_label("persisted")
    assert stat.S_IMODE(os.stat(state).st_mode) == 0o600
    saved = json.loads(state.read_text())
    assert saved["setupDone"] is True
    cc.card_disconnect()
    server.stop()
    serve("--applet", "satochip", "--card-state", str(state))
    cc = satochip()
    cc.card_verify_PIN_simple(PIN)
    assert cc.card_get_label()[3] == "persisted"


def test_a_corrupt_state_file_is_refused_with_the_reason(keyhost_bin, tmp_path):
    state = tmp_path / "bad.json"
    state.write_text("{\"authentikey\": [1, 2]}")
    result = subprocess.run([keyhost_bin, "card", "serve", "--vpcd", "127.0.0.1:1", "--applet", "satochip",
                             "--card-state", str(state)], capture_output=True, text=True, timeout=30)
    assert result.returncode != 0
    assert "soft Satochip state" in result.stderr and "bad.json" in result.stderr
