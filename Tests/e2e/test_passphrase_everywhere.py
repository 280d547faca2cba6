"""One key source and one secret policy for every command that takes a mnemonic.

KEYHOST_PASSPHRASE is honoured wherever a mnemonic is (key, psbt, eth, discover, card load-seed), as KEYHOST_MNEMONIC
is the default mnemonic; `--no-passphrase` ignores it, `--passphrase-env VAR` names another variable. Each wallet's
keys are checked against independent implementations (embit, eth-account, the embit-based PSBT oracle), never
against keyhost's own output. And with no key named and no terminal to ask on, every such command says the same.
"""
import json
import pathlib
import subprocess
import sys

import pytest
from embit import bip32, bip39, script
from embit.networks import NETWORKS
from eth_account import Account

REPO = pathlib.Path(__file__).resolve().parents[2]
WORDS = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"
PASSPHRASE = "secret passphrase"
TX = {"chain_id": 1, "nonce": 0, "gas": 21000, "max_priority_fee_per_gas": "1000000000",
      "max_fee_per_gas": "30000000000", "to": "0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045", "value": "1000"}


def btc_address(passphrase, path="m/84h/0h/0h/0/0", network="main"):
    root = bip32.HDKey.from_seed(bip39.mnemonic_to_seed(WORDS, passphrase))
    return script.p2wpkh(root.derive(path).key).address(NETWORKS[network])


def btc_public_key(passphrase, path):
    root = bip32.HDKey.from_seed(bip39.mnemonic_to_seed(WORDS, passphrase))
    return root.derive(path).key.sec().hex()


def eth_address(passphrase, path="m/44'/60'/0'/0/0"):
    Account.enable_unaudited_hdwallet_features()
    return Account.from_mnemonic(WORDS, passphrase=passphrase, account_path=path).address


@pytest.fixture
def run(keyhost_bin, tmp_path):
    def run(*args, env=None, stdin=None):
        environment = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state")}
        environment.update(env or {})
        # A session of its own: no controlling terminal to ask on, wherever the tests run (setsid -w waits for the status).
        return subprocess.run(["setsid", "-w", keyhost_bin, *args], cwd=tmp_path, env=environment, input=stdin, capture_output=True,
                              text=True, stdin=None if stdin is not None else subprocess.DEVNULL)
    return run


SECRET_ENV = {"KEYHOST_MNEMONIC": WORDS, "KEYHOST_PASSPHRASE": PASSPHRASE}


def test_key_address_uses_the_passphrase_variable(run):
    with_passphrase = btc_address(PASSPHRASE)
    assert with_passphrase != btc_address("")
    r = run("key", "address", env=SECRET_ENV)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == with_passphrase
    # --no-passphrase ignores a set variable; --passphrase-env names another one.
    r = run("key", "address", "--no-passphrase", env=SECRET_ENV)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == btc_address("")
    r = run("key", "address", "--passphrase-env", "OTHER", env={**SECRET_ENV, "OTHER": "other"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == btc_address("other")
    assert PASSPHRASE not in r.stdout + r.stderr


def test_eth_sign_tx_signs_with_the_passphrase_wallet(run, tmp_path):
    (tmp_path / "tx.json").write_text(json.dumps(TX))
    r = run("eth", "sign-tx", "tx.json", "--json", env=SECRET_ENV)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["from"] == eth_address(PASSPHRASE)
    r = run("key", "address", "--coin", "eth", env=SECRET_ENV)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == eth_address(PASSPHRASE)


def psbt_oracle(command, request):
    answer = subprocess.run([sys.executable, str(REPO / "Tests/Oracles/psbt_oracle.py"), command], input=json.dumps(request),
                            capture_output=True, text=True, check=True)
    return json.loads(answer.stdout)


def test_psbt_sign_signs_with_the_passphrase_wallet(run, tmp_path):
    # A PSBT whose input belongs to the passphrase wallet (its origins name that master's fingerprint).
    made = psbt_oracle("make", {"mnemonic": WORDS, "passphrase": PASSPHRASE, "network": "test", "seed": 7,
                                "inputs": [{"kind": "p2wpkh", "path": "m/84h/1h/0h/0/0", "amount": 50_000}],
                                "outputs": [{"amount": 39_000}, {"amount": 10_000, "path": "m/84h/1h/0h/1/0"}]})
    (tmp_path / "t.psbt").write_text(made["psbt"] + "\n")
    r = run("psbt", "sign", "t.psbt", "--json", env=SECRET_ENV)
    assert r.returncode == 0, r.stderr
    signed = json.loads(r.stdout)["psbt"]
    checked = psbt_oracle("verify", {"psbt": signed})["inputs"]
    assert checked == [{"signatures": 1, "valid": True}]
    # Without the passphrase, the wallet is another one: nothing of it is in the PSBT.
    r = run("psbt", "sign", "t.psbt", "--no-passphrase", "--json", env=SECRET_ENV)
    assert r.returncode == 1
    assert json.loads(r.stderr)["error"]["kind"] == "nothing_signed"


def test_discover_scans_the_passphrase_wallet(run, tmp_path):
    used = btc_address(PASSPHRASE)
    (tmp_path / "used.txt").write_text(used + "\n")
    r = run("discover", "--coin", "btc", "--purpose", "84", "--source", "index:used.txt", "--gap-limit", "3", "--json", env=SECRET_ENV)
    assert r.returncode == 0, r.stderr
    assert used in r.stdout
    assert json.loads(r.stdout)["accounts"], r.stdout


def test_card_load_seed_loads_the_passphrase_wallet(run, tmp_path):
    card = ["--reader", "virtual", "--card-state", "c.json"]
    secrets = {"KEYHOST_PIN": "123456", "KEYHOST_PUK": "987654321098", "KEYHOST_PAIRING_PASSWORD": "KeycardTest"}
    r = run("card", "init", *card, env=secrets)
    assert r.returncode == 0, r.stderr
    r = run("card", "load-seed", *card, env={**secrets, **SECRET_ENV})
    assert r.returncode == 0, r.stderr
    path = "m/84'/0'/0'/0/0"
    r = run("card", "export-key", "--path", path, *card, "--json", env=secrets)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["public_key"] in (btc_public_key(PASSPHRASE, path),)
    # --no-passphrase loads the plain wallet even with the variable set.
    r = run("card", "load-seed", "--replace", "--no-passphrase", *card, env={**secrets, **SECRET_ENV})
    assert r.returncode == 0, r.stderr
    r = run("card", "export-key", "--path", path, *card, "--json", env=secrets)
    assert json.loads(r.stdout)["public_key"] == btc_public_key("", path)


@pytest.mark.parametrize("args", [
    ["key", "address"],
    ["psbt", "sign", "t.psbt"],
    ["eth", "sign-tx", "tx.json"],
    ["discover", "--source", "index:used.txt"],
])
def test_no_key_and_no_terminal_is_the_same_answer_everywhere(run, tmp_path, args):
    made = psbt_oracle("make", {"mnemonic": WORDS, "network": "test", "seed": 7,
                                "inputs": [{"kind": "p2wpkh", "path": "m/84h/1h/0h/0/0", "amount": 50_000}],
                                "outputs": [{"amount": 49_000}]})
    (tmp_path / "t.psbt").write_text(made["psbt"] + "\n")
    (tmp_path / "tx.json").write_text(json.dumps(TX))
    (tmp_path / "used.txt").write_text("")
    r = run(*args, "--json")
    assert r.returncode == 1, r.stderr
    error = json.loads(r.stderr)["error"]
    assert error["kind"] == "no_secret"
    assert "KEYHOST_MNEMONIC" in error["message"] and "--mnemonic-env" in error["message"]


@pytest.mark.parametrize("args", [
    ["key", "address", "--xpub", "zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs", "--passphrase-env", "P"],
    ["eth", "sign-tx", "tx.json", "--card", "--no-passphrase"],
    ["psbt", "sign", "t.psbt", "--passphrase-env", "P", "--no-passphrase"],
    ["discover", "--xpub", "zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs", "--passphrase-prompt", "--source", "index:used.txt"],
])
def test_passphrase_options_without_a_mnemonic_are_usage_errors(run, args):
    r = run(*args)
    assert r.returncode == 64, r.stderr
    assert r.stderr.startswith("keyhost: ")
    assert "passphrase" in r.stderr
