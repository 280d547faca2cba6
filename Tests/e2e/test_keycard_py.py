"""keyhost's software Keycard through the real PC/SC stack, driven by independent clients.

    scripts/virtual-reader start  ->  pcscd + vpcd  <-TCP-  keyhost card serve --vpcd
                                         ^
                   keycard-py (pyscard) -+- keyhost card list / info

Signatures are checked with coincurve, exported keys against bip-utils' BIP32 derivation of the loaded seed.
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
from bip_utils import Bip32Secp256k1, Bip39SeedGenerator

from smartcard.System import readers as pcsc_readers  # noqa: E402
from smartcard.Exceptions import CardConnectionException, NoCardException  # noqa: E402
from smartcard import scard  # noqa: E402

from keycard.keycard import KeyCard  # noqa: E402
from keycard.transport import Transport  # noqa: E402
from keycard import constants  # noqa: E402
from keycard.exceptions import APDUError  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[2]
READER = "Virtual PCD 00 00"
PORT = 35963
SECOND_READER = "Virtual PCD 00 01"
SECOND_PORT = 35964
PIN = "123456"
PUK = "987654321098"  # does not start with the PIN: the 3.2 alternate PIN would otherwise switch keys
PAIRING_PASSWORD = "keyhost pairing password"
MNEMONIC = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"
SEED = Bip39SeedGenerator(MNEMONIC).Generate("")
# SoftKeycard.testCAKey(): the CA that signs a soft 4.x card's identity certificate.
TEST_CA = coincurve.PrivateKey(hashlib.sha256(b"keyhost soft keycard test CA").digest()).public_key.format(compressed=True)


def virtual_reader(*args):
    subprocess.run([str(REPO / "scripts" / "virtual-reader"), *args], check=True, timeout=60)


@pytest.fixture(scope="module", autouse=True)
def reader_running():
    virtual_reader("start")
    yield


class Server:
    """`keyhost card serve --vpcd` in the background; stderr kept in a file."""

    def __init__(self, keyhost_bin, log_path, *args, port=PORT):
        self.log_path = log_path
        self.log = open(log_path, "ab")
        self.reader = READER if port == PORT else SECOND_READER
        self.proc = subprocess.Popen([keyhost_bin, "card", "serve", "--vpcd", f"127.0.0.1:{port}", *args],
                                     stdout=subprocess.DEVNULL, stderr=self.log)

    def stderr(self):
        return pathlib.Path(self.log_path).read_text()

    def wait_for_log(self, text, count=1, timeout=15):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.stderr().count(text) >= count:
                return
            assert self.proc.poll() is None, f"server exited with {self.proc.returncode}: {self.stderr()}"
            time.sleep(0.05)
        raise AssertionError(f"no {text!r} x{count} in server log: {self.stderr()}")

    def stop(self, sig=signal.SIGTERM):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(timeout=10)
            # vpcd notices a vanished card at its next presence poll. A new card served before that
            # replaces the old one without pcscd seeing a removal, and pcscd can then get stuck
            # reporting "no card" (a disconnect racing the swap): let the removal be seen first.
            wait_for_card_state(False, reader=self.reader)
        self.log.close()
        return self.proc.returncode


def card_present(reader=READER):
    rv, context = scard.SCardEstablishContext(scard.SCARD_SCOPE_USER)
    if rv != scard.SCARD_S_SUCCESS:
        return False
    try:
        rv, states = scard.SCardGetStatusChange(context, 0, [(reader, scard.SCARD_STATE_UNAWARE)])
        return rv == scard.SCARD_S_SUCCESS and bool(states[0][1] & scard.SCARD_STATE_PRESENT)
    finally:
        scard.SCardReleaseContext(context)


def wait_for_card_state(present, timeout=5, reader=READER):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if card_present(reader) == present:
            return
        time.sleep(0.05)
    raise AssertionError(f"the card in {reader} is still {'absent' if present else 'present'} after {timeout} s")


def wait_for_card(timeout=15, reader=READER):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            for r in pcsc_readers():
                if str(r) == reader:
                    conn = r.createConnection()
                    conn.connect(disposition=scard.SCARD_LEAVE_CARD)
                    conn.disconnect()
                    return
        except (NoCardException, CardConnectionException, Exception) as e:  # pcscd restarting, no card yet
            last = e
        time.sleep(0.05)
    raise AssertionError(f"no card in {reader} after {timeout} s: {last}")


@pytest.fixture
def serve(keyhost_bin, tmp_path):
    servers = []

    def start(*args, wait=True, port=PORT):
        server = Server(keyhost_bin, tmp_path / f"serve{len(servers)}.log", *args, port=port)
        servers.append(server)
        if wait:
            server.wait_for_log("connected")
            wait_for_card(reader=server.reader)
        return server

    yield start
    # Close the test's PC/SC connections: a leftover one would keep an exclusive connect out later.
    while OPEN_TRANSPORTS:
        try:
            OPEN_TRANSPORTS.pop().disconnect()
        except Exception:
            pass
    for server in servers:
        server.stop(signal.SIGKILL)


OPEN_TRANSPORTS = []


class NamedReaderTransport(Transport):
    """keycard-py's transport, bound to the virtual reader by name rather than by index."""

    def connect(self, index: int = 0) -> None:
        wait_for_card()
        reader = next(r for r in pcsc_readers() if str(r) == READER)
        self.connection = reader.createConnection()
        # pyscard powers the card down on disconnect (and when a connection is garbage collected):
        # that would reset the card under the test's other connections.
        self.connection.connect(disposition=scard.SCARD_LEAVE_CARD)
        OPEN_TRANSPORTS.append(self)


def keycard(**kwargs):
    card = KeyCard(NamedReaderTransport(), **kwargs)
    card.transport.connect()
    return card


def bip32(path):
    return Bip32Secp256k1.FromSeed(SEED).DerivePath(path)


def uncompressed(node):
    return node.PublicKey().RawUncompressed().ToBytes()


def check_signature(result, digest, expected_public_key):
    assert result.public_key in (expected_public_key, expected_public_key[1:])
    der = result.signature_der
    assert coincurve.PublicKey(expected_public_key).verify(der, digest, hasher=None)
    # low-S, and the recovery id recovers the same key
    assert int.from_bytes(result.s, "big") <= coincurve.utils.GROUP_ORDER_INT // 2
    recovered = coincurve.PublicKey.from_signature_and_message(result.r + result.s + bytes([result.recovery_id]), digest, hasher=None)
    assert recovered.format(compressed=False) == expected_public_key


def run_keyhost(keyhost_bin, *args, env=None):
    return subprocess.run([keyhost_bin, *args], capture_output=True, text=True, timeout=30,
                          env=None if env is None else {**os.environ, **env})


# ---------------------------------------------------------------------------------------------- flows

def test_full_flow_secure_channel_v1(serve):
    serve("--applet", "3.2")
    card = keycard()
    info = card.select()
    assert not card.is_initialized
    card.init(PIN, PUK, PAIRING_PASSWORD)

    info = card.select()
    assert card.is_initialized and card.version == (3, 2)
    assert info.key_uid in (None, b"")
    pairing = card.pair(PAIRING_PASSWORD)
    card.open_secure_channel()
    assert card.verify_pin(PIN)

    # generate a key on the card, then replace it with a known BIP39 seed
    generated_uid = card.generate_key()
    assert len(generated_uid) == 32
    key_uid = card.load_key(constants.LoadKeyType.BIP39_SEED, bip39_seed=SEED)
    assert key_uid == hashlib.sha256(uncompressed(bip32("m"))).digest()
    assert key_uid != generated_uid

    # DERIVE KEY, then export and sign with the current key
    path = "m/44'/60'/0'/0/0"
    card.derive_key(path)
    assert card.export_current_key(public_only=True).public_key == uncompressed(bip32(path))
    digest = hashlib.sha256(b"keyhost through pcscd").digest()
    check_signature(card.sign(digest), digest, uncompressed(bip32(path)))

    # sign on another path without changing the current one
    other = "m/44'/0'/0'/0/7"
    check_signature(card.sign_with_path(digest, other), digest, uncompressed(bip32(other)))
    assert card.export_current_key(public_only=True).public_key == uncompressed(bip32(path))

    # private key export is allowed on EIP-1581 paths only
    eip1581 = "m/43'/60'/1581'/0/0"
    exported = card.export_key(constants.DerivationOption.DERIVE, public_only=False, keypath=eip1581)
    assert exported.private_key == bip32(eip1581).PrivateKey().Raw().ToBytes()
    assert exported.public_key in (None, uncompressed(bip32(eip1581)))  # 3.x leaves the public key out
    with pytest.raises(APDUError) as refused:
        card.export_key(constants.DerivationOption.DERIVE, public_only=False, keypath=path)
    assert refused.value.sw == 0x6985

    status = card.status
    assert status["pin_retry_count"] == 3 and status["puk_retry_count"] == 5

    card.unpair(pairing.slot)
    card.select()
    card.pairing = pairing
    with pytest.raises(APDUError):
        card.open_secure_channel()  # the slot is free now

    card.factory_reset()
    card.select()
    assert not card.is_initialized


def test_full_flow_secure_channel_v2(serve):
    """keycard-py 0.4 speaks secure channel v2 (applet 4.0): no pairing, a CA-signed identity certificate.

    keycard-py rejects the 4.0 applet's SELECT answer whose outer A4 length is one byte short
    (BER-TLV UnexpectedEnd), so this card is served with an exact length; keyhost's own parser
    tolerates the quirk (test_card_info_v2_json)."""
    serve("--applet", "4.0", "--no-select-length-quirk")
    card = keycard(ca_public_keys=[TEST_CA])
    card.select()
    assert not card.is_initialized and card.version == (4, 0)
    # INIT without a duress PIN: the 4.0 applet makes the PIN itself the duress PIN, and VERIFY PIN
    # prefers it, so the PIN opens the decoy wallet (chain code SHA-256 of the real one): the same
    # master key, other derived keys. keyhost's own init always sets a duress PIN for this reason.
    path = "m/44'/60'/0'/0/3"
    card.init(PIN, PUK)
    card.select()
    card.open_secure_channel()
    assert card.verify_pin(PIN)
    key_uid = card.load_key(constants.LoadKeyType.BIP39_SEED, bip39_seed=SEED)
    assert key_uid == hashlib.sha256(uncompressed(bip32("m"))).digest()
    assert card.export_key(constants.DerivationOption.DERIVE, public_only=True, keypath=path).public_key != uncompressed(bip32(path))
    card.select()
    card.factory_reset()
    card.select()

    card.init(PIN, PUK, pin_retries=3, puk_retries=5, alt_pin="908172")
    card.select()
    assert card.is_initialized
    card.open_secure_channel()
    assert card.verify_pin(PIN)
    card.generate_key()
    key_uid = card.load_key(constants.LoadKeyType.BIP39_SEED, bip39_seed=SEED)
    assert key_uid == hashlib.sha256(uncompressed(bip32("m"))).digest()

    digest = hashlib.sha256(b"secure channel v2 over pcscd").digest()
    check_signature(card.sign_with_path(digest, path), digest, uncompressed(bip32(path)))
    assert card.export_key(constants.DerivationOption.DERIVE, public_only=True, keypath=path).public_key == uncompressed(bip32(path))
    eip1581 = "m/43'/60'/1581'/1/0"
    exported = card.export_key(constants.DerivationOption.DERIVE, public_only=False, keypath=eip1581)
    assert exported.private_key == bip32(eip1581).PrivateKey().Raw().ToBytes()

    # Schnorr (BIP340) with the master key
    schnorr = card.sign(digest, algorithm=constants.SigningAlgorithm.SCHNORR_BIP340)
    xonly = coincurve.PublicKeyXOnly(uncompressed(bip32("m"))[1:33])
    assert xonly.verify(schnorr.r + schnorr.s, digest)

    # an untrusted CA is refused
    untrusted = KeyCard(card.transport, ca_public_keys=[constants.OFFICIAL_CA_PUBLIC_KEY])  # same connection
    untrusted.select()
    with pytest.raises(Exception, match="(?i)trust"):
        untrusted.open_secure_channel()

    card.select()
    card.factory_reset()
    card.select()
    assert not card.is_initialized


def test_wrong_pin_counters_through_pcsc(serve):
    serve("--applet", "3.2")
    card = keycard()
    card.select()
    card.init(PIN, PUK, PAIRING_PASSWORD)
    card.select()
    card.pair(PAIRING_PASSWORD)
    card.open_secure_channel()

    with pytest.raises(APDUError) as wrong:
        card.send_secure_apdu(ins=constants.INS_VERIFY_PIN, data=b"000000")
    assert wrong.value.sw == 0x63C2
    assert card.verify_pin("111111") is False
    assert card.status["pin_retry_count"] == 1
    assert card.verify_pin(PIN)  # a right PIN resets the counter
    assert card.status["pin_retry_count"] == 3

    for tries_left in (2, 1):
        with pytest.raises(APDUError) as wrong:
            card.send_secure_apdu(ins=constants.INS_VERIFY_PIN, data=b"000000")
        assert wrong.value.sw == 0x63C0 | tries_left
    with pytest.raises(RuntimeError, match="blocked"):
        card.verify_pin("000000")
    with pytest.raises(APDUError) as blocked:
        card.send_secure_apdu(ins=constants.INS_VERIFY_PIN, data=PIN.encode())
    assert blocked.value.sw == 0x63C0

    card.unblock_pin(PUK, "654321")
    assert card.verify_pin("654321")
    assert card.status["pin_retry_count"] == 3


# ---------------------------------------------------------------------------------------------- CLI

def test_card_list_and_info_json(serve, keyhost_bin):
    serve("--applet", "3.2", "--seed", "list-info", "--pairing-slots", "4")
    listed = run_keyhost(keyhost_bin, "card", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    entries = {e["name"]: e for e in json.loads(listed.stdout)}
    assert entries[READER]["card_present"] is True
    assert entries[READER]["atr"] == "3b80800101"
    assert entries["Virtual PCD 00 01"]["card_present"] is False

    text = run_keyhost(keyhost_bin, "card", "list")
    assert text.returncode == 0 and f"0: {READER}: card present" in text.stdout

    before = json.loads(run_keyhost(keyhost_bin, "card", "info", "--json", "--reader", READER).stdout)
    assert before["initialized"] is False and before["reader"] == READER
    assert before["applet"] is None and len(bytes.fromhex(before["secure_channel_public_key"])) == 65

    card = keycard()
    select_info = card.select()
    assert before["secure_channel_public_key"] == bytes(select_info.ecc_public_key).hex()
    card.init(PIN, PUK, PAIRING_PASSWORD)
    select_info = card.select()  # the applet makes a new secure channel key pair at INIT
    card.pair(PAIRING_PASSWORD)
    card.open_secure_channel()
    card.verify_pin(PIN)
    card.load_key(constants.LoadKeyType.BIP39_SEED, bip39_seed=SEED)
    card.transport.disconnect()

    info = run_keyhost(keyhost_bin, "card", "info", "--json", "--reader", "0")
    assert info.returncode == 0, info.stderr
    info = json.loads(info.stdout)
    assert info["initialized"] is True
    assert info["applet"] == "3.2"
    assert info["secure_channel"] == 1
    assert info["free_pairing_slots"] == 3
    assert info["key_uid"] == hashlib.sha256(uncompressed(bip32("m"))).hexdigest()
    assert len(bytes.fromhex(info["instance_uid"])) == 16
    assert info["secure_channel_public_key"] == bytes(select_info.ecc_public_key).hex()
    assert info["instance_uid"] == bytes(select_info.instance_uid).hex()
    assert set(info["capabilities"]) == {"secure_channel", "key_management", "credentials_management", "ndef", "factory_reset"}

    text = run_keyhost(keyhost_bin, "card", "info")
    assert text.returncode == 0 and "applet version: 3.2" in text.stdout and "free pairing slots: 3" in text.stdout


def test_card_info_v2_json(serve, keyhost_bin):
    serve("--applet", "4.0")  # with the applet's one-byte-short SELECT length, which keyhost tolerates
    info = run_keyhost(keyhost_bin, "card", "info", "--json")
    assert info.returncode == 0, info.stderr
    info = json.loads(info.stdout)
    assert info["applet"] == "4.0" and info["secure_channel"] == 2 and info["initialized"] is False
    assert len(bytes.fromhex(info["identity_public_key"])) == 33
    # Certified by the software card's test CA, which a real reader's card is not trusted by: said, in JSON and text.
    ca = TEST_CA.hex()
    assert info["identity_trusted"] is False and info["identity_ca_key"] == ca
    text = run_keyhost(keyhost_bin, "card", "info")
    assert text.returncode == 0 and "identity trusted: NO" in text.stdout
    assert "warning: the card's identity certificate is signed by an unknown certificate authority " + ca in text.stderr
    assert "--trusted-ca " + ca in text.stderr
    trusted = run_keyhost(keyhost_bin, "card", "info", "--json", "--trusted-ca", ca)
    assert trusted.returncode == 0 and json.loads(trusted.stdout)["identity_trusted"] is True and "warning" not in trusted.stderr
    # factory-reset believes the identity key --confirm names only from a card that proves it (trusted CA, handshake).
    made = run_keyhost(keyhost_bin, "card", "init", "--json", "--trusted-ca", ca, env={"KEYHOST_PIN": "123456", "KEYHOST_PUK": "987654321098"})
    assert made.returncode == 0, made.stderr
    identity = json.loads(made.stdout)["identity_public_key"]
    refused = run_keyhost(keyhost_bin, "card", "factory-reset", "--confirm", identity, "--json")
    assert refused.returncode == 1 and json.loads(refused.stderr)["error"]["kind"] == "untrusted_card", refused.stderr
    assert "--trusted-ca " + ca in refused.stderr
    assert json.loads(run_keyhost(keyhost_bin, "card", "info", "--json").stdout)["initialized"] is True
    reset = run_keyhost(keyhost_bin, "card", "factory-reset", "--confirm", identity, "--trusted-ca", ca, "--json")
    assert reset.returncode == 0, reset.stderr
    assert json.loads(reset.stdout)["initialized"] is False


def test_card_info_errors(keyhost_bin):
    # no card in the second reader
    result = run_keyhost(keyhost_bin, "card", "info", "--reader", "Virtual PCD 00 01")
    assert result.returncode == 1
    assert "no card is in the reader" in result.stderr and "SCARD_E_NO_SMARTCARD" in result.stderr
    result = run_keyhost(keyhost_bin, "card", "info", "--reader", "No Such Reader")
    assert result.returncode == 1
    assert 'no reader is called "No Such Reader"; readers: "Virtual PCD 00 00", "Virtual PCD 00 01"' in result.stderr
    result = run_keyhost(keyhost_bin, "card", "info", "--reader", "Virtual PCD 00 01", "--wait", "0.3")
    assert result.returncode == 1 and "SCARD_E_TIMEOUT" in result.stderr
    result = run_keyhost(keyhost_bin, "card", "info", "--reader", "7")
    assert result.returncode == 1
    assert 'no reader number 7; readers are numbered from 0' in result.stderr and '1: "Virtual PCD 00 01"' in result.stderr


# The one rule every command (and Lua's card.open) uses to pick a reader, with the same messages.
READER_COMMANDS = [("card", "info"), ("card", "status"), ("card", "export-key", "--path", "m/0"), ("key", "xpub", "--card")]


def test_every_command_picks_readers_alike(serve, keyhost_bin, tmp_path):
    serve("--applet", "3.2", port=SECOND_PORT)  # reader 0 is empty, the card is in reader 1
    env = {"HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state"),
           "KEYHOST_PIN": PIN, "KEYHOST_PAIRING_PASSWORD": PAIRING_PASSWORD}
    for command in READER_COMMANDS:
        for reader in [None, "00 01", "1", "virtual pcd 00 01", SECOND_READER]:
            args = [*command] + ([] if reader is None else ["--reader", reader])
            result = run_keyhost(keyhost_bin, *args, env=env)
            if command == ("card", "info"):
                assert result.returncode == 0, (args, result.stderr)
                assert f"reader: {SECOND_READER}" in result.stdout, (args, result.stdout)
            else:
                # The blank card is found, and refused for what it is, not for the reader.
                assert result.returncode == 1, (args, result.stdout)
                assert f"the card in {SECOND_READER} is not initialised" in result.stderr, (args, result.stderr)
        ambiguous = run_keyhost(keyhost_bin, *command, "--reader", "Virtual PCD", env=env)
        assert ambiguous.returncode == 1
        assert f'several readers match "Virtual PCD": "{READER}", "{SECOND_READER}"' in ambiguous.stderr, (command, ambiguous.stderr)
        empty = run_keyhost(keyhost_bin, *command, "--reader", "0", env=env)
        assert empty.returncode == 1 and "SCARD_E_NO_SMARTCARD" in empty.stderr, (command, empty.stderr)
    # Lua's card.open takes the same rule.
    script = tmp_path / "which.lua"
    script.write_text('print("reader " .. require("keyhost.card").open {}:reader())\n'
                      'local ok, err = pcall(require("keyhost.card").open, { reader = "Virtual PCD" })\n'
                      'print(err.kind, tostring(err))\n')
    lua = run_keyhost(keyhost_bin, "run", str(script), env=env)
    assert lua.returncode == 0, lua.stderr
    assert f"reader {SECOND_READER}" in lua.stdout and 'no_reader\tseveral readers match "Virtual PCD"' in lua.stdout, lua.stdout


def test_master_chain_code_is_stale_across_connections(serve, keyhost_bin, tmp_path):
    """The 3.2 applet's EXPORT KEY of m (extended) answers the chain code of the last derivation, which survives
    between PC/SC connections (transient memory, kept until the card is reset): keyhost's xpub of m/84'/1'/0'
    leaves m/84'/1''s there. keyhost refuses m --extended rather than print that; keycard-py sees the raw answer."""
    serve("--applet", "3.2")
    card = keycard()
    card.select()
    card.init(PIN, PUK, PAIRING_PASSWORD)
    card.select()
    pairing = card.pair(PAIRING_PASSWORD)
    card.open_secure_channel()
    card.verify_pin(PIN)
    card.load_key(constants.LoadKeyType.BIP39_SEED, bip39_seed=SEED)
    card.transport.disconnect()

    env = {"HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state"),
           "KEYHOST_PIN": PIN, "KEYHOST_PAIRING_PASSWORD": PAIRING_PASSWORD}
    account = run_keyhost(keyhost_bin, "card", "export-key", "--path", "m/84'/1'/0'", "--extended", "--json", env=env)
    assert account.returncode == 0, account.stderr
    assert json.loads(account.stdout)["xpub"] == bip32("m/84'/1'/0'").PublicKey().ToExtended()
    master = run_keyhost(keyhost_bin, "card", "export-key", "--path", "m", "--extended", env=env)
    assert master.returncode == 1 and "master key's extended public key (m)" in master.stderr, master.stderr
    assert "xpub" not in master.stdout

    card = keycard()
    card.select()
    card.pairing = pairing
    card.open_secure_channel()
    card.verify_pin(PIN)
    answer = card.send_secure_apdu(0xC2, 0x01, 0x02)  # EXPORT KEY, derive from m (empty path), extended public
    assert answer[0] == 0xA1 and answer[4 + 65:4 + 65 + 2] == bytes([0x82, 0x20])
    chain_code = answer[4 + 65 + 2:4 + 65 + 2 + 32]
    assert chain_code == bip32("m/84'/1'").ChainCode().ToBytes()
    assert chain_code != Bip32Secp256k1.FromSeed(SEED).ChainCode().ToBytes()


def test_card_info_traces_apdus_over_pcsc(serve, keyhost_bin):
    serve("--applet", "3.2")
    result = run_keyhost(keyhost_bin, "card", "info", "--reader", READER, env={"KEYHOST_TRACE": "apdu"})
    assert result.returncode == 0, result.stderr
    assert ">> 00 A4 04 00 09 A0 00 00 08 04 00 01 01 01  ; SELECT" in result.stderr and "<< " in result.stderr, result.stderr


def test_no_card_in_any_reader(keyhost_bin):
    for command in READER_COMMANDS:
        result = run_keyhost(keyhost_bin, *command, env={"KEYHOST_PIN": PIN})
        assert result.returncode == 1
        assert f'no card is in any reader ("{READER}", "{SECOND_READER}")' in result.stderr, (command, result.stderr)


def test_exclusive_connection_blocks_others(serve, keyhost_bin):
    serve()
    holder = keycard()
    holder.transport.connection.disconnect()
    reader = next(r for r in pcsc_readers() if str(r) == READER)
    holder.transport.connection = reader.createConnection()
    holder.transport.connection.connect(mode=scard.SCARD_SHARE_EXCLUSIVE, disposition=scard.SCARD_LEAVE_CARD)
    result = run_keyhost(keyhost_bin, "card", "info", "--reader", READER)
    assert result.returncode == 1
    assert "SCARD_E_SHARING_VIOLATION" in result.stderr and "exclusively" in result.stderr
    holder.transport.disconnect()
    result = run_keyhost(keyhost_bin, "card", "info", "--reader", READER, "--exclusive", "--protocol", "t1")
    assert result.returncode == 0, result.stderr


def test_pcscd_not_running(keyhost_bin):
    virtual_reader("stop")
    try:
        result = run_keyhost(keyhost_bin, "card", "list")
        assert result.returncode == 1
        assert "pcscd is not running" in result.stderr and "SCARD_E_NO_SERVICE" in result.stderr
        # Every command that opens a card says the same, not "connect a reader".
        for command in READER_COMMANDS:
            result = run_keyhost(keyhost_bin, *command, env={"KEYHOST_PIN": PIN})
            assert result.returncode == 1
            assert "no card reader: " in result.stderr and "pcscd is not running" in result.stderr, (command, result.stderr)
            assert "SCARD_E_NO_SERVICE" in result.stderr and "--reader virtual --card-state FILE" in result.stderr
    finally:
        virtual_reader("start")


def test_serve_validation(keyhost_bin):
    result = run_keyhost(keyhost_bin, "card", "serve")
    assert result.returncode != 0 and "--vpcd" in result.stderr
    result = run_keyhost(keyhost_bin, "card", "serve", "--vpcd", "--applet", "2.0")
    assert result.returncode != 0 and "3.2 or 4.0" in result.stderr
    result = run_keyhost(keyhost_bin, "card", "serve", "--vpcd", "localhost:notaport")
    assert result.returncode != 0 and "HOST:PORT" in result.stderr


# ---------------------------------------------------------------------------------------------- resilience

def test_state_survives_kill_9(serve, tmp_path):
    state = tmp_path / "card.json"
    server = serve("--card-state", str(state), "--applet", "3.2")
    card = keycard()
    card.select()
    card.init(PIN, PUK, PAIRING_PASSWORD)
    card.select()
    pairing = card.pair(PAIRING_PASSWORD)
    card.open_secure_channel()
    card.verify_pin(PIN)
    key_uid = card.load_key(constants.LoadKeyType.BIP39_SEED, bip39_seed=SEED)
    card.derive_key("m/44'/60'/0'/0/1")
    assert oct(state.stat().st_mode & 0o777) == "0o600"

    # mid-session: the secure channel is open and the PIN verified
    assert server.stop(signal.SIGKILL) == -signal.SIGKILL
    card.transport.disconnect()

    serve("--card-state", str(state), "--applet", "3.2")
    card = keycard()
    info = card.select()
    assert card.is_initialized and bytes(info.key_uid) == key_uid
    card.pairing = pairing  # the pairing made before the kill still opens a channel
    card.open_secure_channel()
    assert card.verify_pin(PIN)
    # the current path survived too (3.x keeps it in EEPROM)
    assert card.export_current_key(public_only=True).public_key == uncompressed(bip32("m/44'/60'/0'/0/1"))


def test_sigterm_exits_cleanly_with_state(serve, tmp_path):
    state = tmp_path / "card.json"
    server = serve("--card-state", str(state))
    card = keycard()
    card.select()
    card.init(PIN, PUK, PAIRING_PASSWORD)
    card.transport.disconnect()
    assert server.stop(signal.SIGTERM) == 0
    assert json.loads(state.read_text())["credentials"] is not None


def test_reconnects_after_pcscd_restart(serve):
    server = serve("--applet", "3.2")
    card = keycard()
    card.select()
    card.init(PIN, PUK, PAIRING_PASSWORD)
    card.transport.disconnect()

    virtual_reader("stop")
    server.wait_for_log("reconnecting")
    virtual_reader("start")
    server.wait_for_log("connected", count=2)
    wait_for_card()

    card = keycard()
    card.select()
    assert card.is_initialized  # the same (in-memory) card, served again
    card.pair(PAIRING_PASSWORD)
    card.open_secure_channel()
    assert card.verify_pin(PIN)


# --------------------------------------------------------------------- keyhost's own client over PC/SC

LUA_FLOW = REPO / "Tests" / "e2e" / "lua" / "card_over_pcsc.lua"


@pytest.mark.parametrize("applet", ["3.2", "4.0"])
def test_keyhost_card_module_over_pcsc(serve, keyhost_bin, tmp_path, applet):
    """keyhost.card drives the served card through libpcsclite, pcscd and vpcd: both secure channels."""
    serve("--applet", applet, "--no-select-length-quirk" if applet == "4.0" else "--select-length-quirk")
    store = tmp_path / "pairings.json"
    result = run_keyhost(keyhost_bin, "run", str(LUA_FLOW), READER, applet, str(store))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().splitlines()[-1] == "4 passed, 0 failed"
    if applet == "3.2":
        assert oct(store.stat().st_mode & 0o777) == "0o600"
        assert "123456" not in store.read_text()


def test_card_removed_mid_session_is_a_typed_error(serve, keyhost_bin, tmp_path):
    """The server dies mid-session: the script sees connection_lost, and a new session works once a card is back."""
    server = serve("--applet", "3.2")
    script = tmp_path / "removal.lua"
    script.write_text(
        """
        local card = require "keyhost.card"
        local reader, pid, store = ...
        local s <close> = card.open { reader = reader, pairing_store = store }
        s:select()
        s:init { pin = "123456", puk = "987654321098", pairing_password = "KeycardTest" }
        s:auto { pin = "123456", pairing_password = "KeycardTest" }
        os.execute("kill -9 " .. pid)
        os.execute("sleep 1.5")
        local ok, err = pcall(s.status, s)
        assert(not ok, "the card is gone")
        print(err.kind, tostring(err))
        """
    )
    store = tmp_path / "pairings.json"
    result = run_keyhost(keyhost_bin, "run", str(script), READER, str(server.proc.pid), str(store))
    assert result.returncode == 0, result.stdout + result.stderr
    kind = result.stdout.split("\t")[0]
    assert kind in ("connection_lost", "transport"), result.stdout
    wait_for_card_state(False)
    serve("--applet", "3.2")
    again = tmp_path / "again.lua"
    again.write_text(
        """
        local card = require "keyhost.card"
        local s <close> = card.open { reader = ..., pairing_store = select(2, ...) }
        print(s:select().initialized)
        """
    )
    result = run_keyhost(keyhost_bin, "run", str(again), READER, str(store))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "false"
