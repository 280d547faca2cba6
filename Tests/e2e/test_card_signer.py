"""One signer interface over every card family: what signs for a Keycard signs for a Satochip.

A software Satochip is set up and seeded by its maker's client (pysatochip, through pcscd), then used by keyhost as
a signer: from Lua (`card.signer{}`), through the virtual reader (its state file) and through pcscd (a real reader,
where keyhost finds the Satochip after the Keycard SELECT fails). Keys are checked against bip-utils, signatures with
coincurve, PSBTs signed by a Satochip twin and a Keycard twin holding the same seed with embit (verify, finalize).
"""
import json
import subprocess
import sys

import coincurve
import pytest
from bip_utils import Bip32Secp256k1, Bip39SeedGenerator

from test_keycard_py import READER, REPO, serve, reader_running, wait_for_card  # noqa: F401  (fixtures)
from test_satochip_py import PIN, satochip, setup

WORDS = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"
SEED = Bip39SeedGenerator(WORDS).Generate("")
DIGEST = bytes(range(32))


def bip32(path):
    return Bip32Secp256k1.FromSeed(SEED).DerivePath(path)


def environment(tmp_path, **extra):
    return {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state"), **extra}


def keyhost(keyhost_bin, tmp_path, *args, env=None, stdin=None):
    return subprocess.run([keyhost_bin, *args], cwd=tmp_path, env=env or environment(tmp_path), capture_output=True, text=True,
                          input=stdin, timeout=120)


@pytest.fixture
def satochip_state(serve, tmp_path):
    """A software Satochip's state file, set up (PIN 1234) and seeded with WORDS' seed by pysatochip."""
    state = tmp_path / "satochip.json"
    server = serve("--applet", "satochip", "--card-state", str(state), "--seed", "one-interface")
    cc = satochip()
    setup(cc)
    cc.card_verify_PIN_simple(PIN)
    cc.card_bip32_import_seed(SEED)
    cc.card_disconnect()
    server.stop()
    return state


LUA = r'''
local card = require "keyhost.card"
local hex = require "keyhost.hex"
local json = require "keyhost.json"
local s <close> = card.signer{reader = READER, state = STATE}
local info = s:info()
local signed = s:sign(hex.decode(DIGEST), {path = "m/84'/0'/0'/0/0"})
local refused, err = pcall(s.sign_schnorr, s, hex.decode(DIGEST), {path = "m/86'/0'/0'/0/0"})
local deep_ok, deep = pcall(s.public_key, s, "m/0/1/2/3/4/5/6/7/8/9/10")
print(json.encode{
  family = info.family, schnorr = info.abilities.schnorr, text = tostring(s),
  xpub = s:xpub("m/84'/0'/0'"), zpub = s:xpub("m/84'/0'/0'", {family = "zpub"}),
  public_key = hex.encode(s:public_key("m/84'/0'/0'/0/0")),
  compact = hex.encode(signed.compact), recovery_id = signed.recovery_id, signer_key = hex.encode(signed.public_key),
  schnorr_refused = not refused, schnorr_kind = type(err) == "table" and err.kind or tostring(err),
  deep_refused = not deep_ok, deep_kind = type(deep) == "table" and deep.kind or tostring(deep),
})
'''


def run_lua(keyhost_bin, tmp_path, reader, state):
    script = tmp_path / "signer.lua"
    script.write_text(LUA.replace("READER", json.dumps(reader)).replace("STATE", json.dumps(str(state)) if state else "nil")
                      .replace("DIGEST", json.dumps(DIGEST.hex())))
    result = keyhost(keyhost_bin, tmp_path, "run", str(script), env=environment(tmp_path, KEYHOST_PIN=PIN.decode()))
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def check_lua_answer(answer):
    assert answer["family"] == "Satochip" and answer["schnorr"] is False
    assert answer["xpub"] == bip32("m/84'/0'/0'").PublicKey().ToExtended()
    assert answer["zpub"].startswith("zpub")
    expected = bip32("m/84'/0'/0'/0/0").PublicKey().RawCompressed().ToBytes()
    assert bytes.fromhex(answer["public_key"]) == expected
    assert bytes.fromhex(answer["signer_key"]) == expected
    recoverable = bytes.fromhex(answer["compact"]) + bytes([answer["recovery_id"]])
    assert coincurve.PublicKey.from_signature_and_message(recoverable, DIGEST, hasher=None).format() == expected
    assert answer["schnorr_refused"] and answer["schnorr_kind"] == "unsupported"
    assert answer["deep_refused"] and answer["deep_kind"] == "invalid_path"


def test_lua_signer_over_the_virtual_satochip(keyhost_bin, tmp_path, satochip_state):
    answer = run_lua(keyhost_bin, tmp_path, "virtual", satochip_state)
    check_lua_answer(answer)
    assert "Satochip" in answer["text"]


def test_lua_signer_finds_the_satochip_behind_a_real_reader(keyhost_bin, tmp_path, satochip_state, serve):
    serve("--applet", "satochip", "--card-state", str(satochip_state))
    check_lua_answer(run_lua(keyhost_bin, tmp_path, READER, None))


def test_a_wrong_pin_is_a_clear_error_and_costs_a_try(keyhost_bin, tmp_path, satochip_state):
    script = tmp_path / "wrong.lua"
    script.write_text(f'local card = require "keyhost.card"\ncard.signer{{reader = "virtual", state = {json.dumps(str(satochip_state))}, pin = "9999"}}\n')
    result = keyhost(keyhost_bin, tmp_path, "run", str(script))
    assert result.returncode != 0
    assert "wrong PIN" in result.stderr and "tries left" in result.stderr
    assert "9999" not in result.stderr


def oracle(command, request):
    made = subprocess.run([sys.executable, str(REPO / "Tests/Oracles/psbt_oracle.py"), command], capture_output=True, text=True, check=True,
                          input=json.dumps(request))
    return json.loads(made.stdout)


def test_one_psbt_signed_by_a_satochip_and_a_keycard_holding_the_same_seed(keyhost_bin, tmp_path, satochip_state):
    psbt = oracle("make", {"mnemonic": WORDS, "network": "main", "seed": 7,
                           "inputs": [{"kind": "p2wpkh", "path": "m/84h/0h/0h/0/0", "amount": 50_000},
                                      {"kind": "p2sh-p2wpkh", "path": "m/49h/0h/0h/0/3", "amount": 20_000}],
                           "outputs": [{"amount": 60_000}, {"amount": 9_000, "path": "m/84h/0h/0h/1/0"}]})["psbt"]
    (tmp_path / "tx.psbt").write_text(psbt + "\n")
    keycard = ["--reader", "virtual", "--card-state", str(tmp_path / "keycard.json")]
    env = environment(tmp_path, KEYHOST_MNEMONIC=WORDS, KEYHOST_PIN="123456", KEYHOST_PUK="987654321098",
                      KEYHOST_PAIRING_PASSWORD="KeycardTest")
    for args in (["card", "init", *keycard], ["card", "load-seed", *keycard]):
        made = keyhost(keyhost_bin, tmp_path, *args, env=env)
        assert made.returncode == 0, made.stderr
    signed = {}
    for name, card, pin in (("keycard", keycard, "123456"), ("satochip", ["--reader", "virtual", "--card-state", str(satochip_state)], PIN.decode())):
        result = keyhost(keyhost_bin, tmp_path, "psbt", "sign", "tx.psbt", "--card", *card, "--json",
                         env=environment(tmp_path, KEYHOST_PIN=pin, KEYHOST_PAIRING_PASSWORD="KeycardTest"))
        assert result.returncode == 0, f"{name}: {result.stderr}"
        answer = json.loads(result.stdout)
        assert answer["complete"] is True, f"{name}: {answer}"
        verdict = oracle("verify", {"psbt": answer["psbt"]})
        assert [i["valid"] for i in verdict["inputs"]] == [True, True], f"{name}: {verdict}"
        assert [i["signatures"] for i in verdict["inputs"]] == [1, 1]
        signed[name] = oracle("finalize", {"psbt": answer["psbt"]})["tx"]
    # Both cards hold the seed and sign with RFC 6979 nonces: the same transaction, byte for byte.
    assert signed["keycard"] == signed["satochip"]


def test_key_commands_take_a_satochip_as_they_take_a_keycard(keyhost_bin, tmp_path, satochip_state):
    card = ["--card", "--reader", "virtual", "--card-state", str(satochip_state)]
    env = environment(tmp_path, KEYHOST_PIN=PIN.decode())
    for path in ("m/84'/0'/0'", "m/44'/0'/0'", "m"):
        xpub = keyhost(keyhost_bin, tmp_path, "key", "xpub", *card, "--path", path, "--family", "xpub", env=env)
        assert xpub.returncode == 0, xpub.stderr
        assert xpub.stdout.strip() == bip32(path).PublicKey().ToExtended(), path
    deep = keyhost(keyhost_bin, tmp_path, "key", "xpub", *card, "--path", "m" + "/0" * 11, "--family", "xpub", "--json", env=env)
    # Refused before the card is opened (no PIN asked), as a usage error.
    assert deep.returncode == 64
    error = json.loads(deep.stderr)["error"]
    assert error["kind"] == "usage" and "derive at most 10" in error["message"]
