"""Every command a user runs daily shows examples in its --help, and they work.

The examples are read from `--help` as users see it (80 columns off a terminal, as the parser lays it out) and run,
continuation lines joined, in a folder holding the files they name: a software card `c.json` loaded with the BIP39
test mnemonic, `tx.psbt` (a PSBT of that wallet made by the embit-based oracle), `tx.json`, `permit.json`,
`used.txt`, `hello.lua`. Lines that need a network, a real card or reader, or a token wallet's earlier history are
checked only for being there; every other one must exit 0.
"""
import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
WORDS = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"

DAILY = [
    "key address", "key xpub", "key sign-message", "key verify-message", "key mnemonic new", "key mnemonic check",
    "psbt inspect", "psbt sign", "psbt combine", "psbt finalize",
    "eth sign-tx", "eth sign-typed-data", "eth decode-tx",
    "card info", "card status", "card list", "card init", "card pair", "card export-key", "card sign",
    "discover", "token issue", "token pay", "token deposit", "token run", "token wallet init",
    "token import", "token verify-receipt", "token verify-proof",
    "run", "eval", "repl",
]

# What an example may not need here: a server, a real card or reader, tokens this folder does not hold.
NEEDS_MORE = re.compile(r"https?://|esplora:|electrum:|…|--reader 0|words\.txt|3fa9c1|\.khreq|\.khchain|\.tok\b|"
                        r"\.rcpt|\.khproof|WORDS|--generate-secrets")

TYPED = {
    "types": {
        "EIP712Domain": [{"name": "name", "type": "string"}, {"name": "version", "type": "string"},
                         {"name": "chainId", "type": "uint256"}, {"name": "verifyingContract", "type": "address"}],
        "Person": [{"name": "name", "type": "string"}, {"name": "wallet", "type": "address"}],
        "Mail": [{"name": "from", "type": "Person"}, {"name": "to", "type": "Person"}, {"name": "contents", "type": "string"}],
    },
    "primaryType": "Mail",
    "domain": {"name": "Ether Mail", "version": "1", "chainId": 1, "verifyingContract": "0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC"},
    "message": {"from": {"name": "Cow", "wallet": "0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826"},
                "to": {"name": "Bob", "wallet": "0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB"}, "contents": "Hello, Bob!"},
}


def help_text(keyhost_bin, command):
    env = {"PATH": "/usr/bin:/bin", "COLUMNS": "80"}
    r = subprocess.run([keyhost_bin, *command.split(), "--help"], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    return r.stdout


def examples(text):
    """The example command lines under "Examples:", continuations joined, comment lines left out."""
    lines = text.split("\n")
    start = next((i for i, line in enumerate(lines) if line.strip() == "Examples:"), None)
    if start is None:
        return []
    out, current = [], ""
    for line in lines[start + 1:]:
        if not line.startswith("  ") or not line.strip():
            break
        body = line.strip()
        if body.startswith("#"):
            continue
        current = (current + " " + body) if current else body
        if current.endswith("\\"):
            current = current[:-1].rstrip()
            continue
        out.append(current)
        current = ""
    return out


@pytest.fixture(scope="module")
def folder(tmp_path_factory, keyhost_bin_module):
    path = tmp_path_factory.mktemp("examples")
    env = environment(path)
    card = ["--reader", "virtual", "--card-state", "c.json"]
    for args in (["card", "init", *card], ["card", "load-seed", *card]):
        r = subprocess.run([keyhost_bin_module, *args], cwd=path, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL)
        assert r.returncode == 0, r.stderr
    made = subprocess.run([sys.executable, str(REPO / "Tests/Oracles/psbt_oracle.py"), "make"], capture_output=True, text=True, check=True,
                          input=json.dumps({"mnemonic": WORDS, "network": "test", "seed": 3,
                                            "inputs": [{"kind": "p2wpkh", "path": "m/84h/1h/0h/0/0", "amount": 50_000}],
                                            "outputs": [{"amount": 39_000}, {"amount": 10_000, "path": "m/84h/1h/0h/1/0"}]}))
    (path / "tx.psbt").write_text(json.loads(made.stdout)["psbt"] + "\n")
    (path / "tx.json").write_text(json.dumps({"chain_id": 1, "nonce": 0, "gas": 21000, "max_priority_fee_per_gas": "1000000000",
                                              "max_fee_per_gas": "30000000000", "to": "0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045"}))
    (path / "permit.json").write_text(json.dumps(TYPED))
    (path / "used.txt").write_text("bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu\n")
    (path / "hello.lua").write_text('print("hello " .. (... or "nobody"))\n')
    return path


@pytest.fixture(scope="module")
def keyhost_bin_module():
    path = os.environ.get("KEYHOST_BIN", str(REPO / ".build" / "debug" / "keyhost"))
    assert os.access(path, os.X_OK), f"keyhost binary not found at {path}; build it or set KEYHOST_BIN"
    return path


def environment(path):
    return {"PATH": "/usr/bin:/bin", "HOME": str(path), "XDG_STATE_HOME": str(path / "state"), "KEYHOST_MNEMONIC": WORDS,
            "KEYHOST_PIN": "123456", "KEYHOST_PUK": "987654321098", "KEYHOST_PAIRING_PASSWORD": "KeycardTest"}


def test_every_daily_command_has_examples_that_fit_the_screen(keyhost_bin):
    for command in DAILY:
        text = help_text(keyhost_bin, command)
        found = examples(text)
        assert found, f"keyhost {command} --help has no examples"
        for line in found:
            assert "keyhost " in line, f"{command}: {line!r} is not a keyhost command line (cut by the help layout?)"


@pytest.mark.parametrize("command", DAILY)
def test_examples_run(keyhost_bin_module, folder, command):
    ran = 0
    found = examples(help_text(keyhost_bin_module, command))
    assert found, f"keyhost {command} --help has no examples"
    for line in found:
        if NEEDS_MORE.search(line) or (("--card" in line or line.startswith("keyhost card")) and "virtual" not in line):
            continue
        script = 'set -o pipefail; keyhost() { "$KEYHOST_BIN" "$@"; }; ' + line
        # A session of its own: no controlling terminal, so nothing waits on a prompt.
        r = subprocess.run(["setsid", "-w", "bash", "-c", script], cwd=folder, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                           env={**environment(folder), "KEYHOST_BIN": keyhost_bin_module})
        assert r.returncode == 0, f"keyhost {command}: {line}\n{r.stderr}"
        ran += 1
    if command not in {"card info", "card list", "token issue", "token pay", "token deposit", "token run", "token import",
                       "token verify-receipt", "token verify-proof", "card init"}:
        assert ran, f"keyhost {command}: no example ran here"


def test_eth_sign_tx_help_names_the_fields_of_its_file_and_its_sample_signs(keyhost_bin_module, folder):
    text = help_text(keyhost_bin_module, "eth sign-tx")
    for field in ("chain_id", "nonce", "gas", "to", "gas_price", "max_priority_fee_per_gas", "max_fee_per_gas", "value",
                  "data", "access_list", "type", "from"):
        assert re.search(r"^  .*\b%s\b" % field, text, re.M), f"eth sign-tx --help does not name {field}"
    sample = text.split("A TX.json:", 1)[1].split("\nThe key:", 1)[0]
    (folder / "sample.json").write_text(json.dumps(json.loads(sample)))
    r = subprocess.run([keyhost_bin_module, "eth", "sign-tx", "sample.json"], cwd=folder, capture_output=True, text=True,
                       env=environment(folder), stdin=subprocess.DEVNULL)
    assert r.returncode == 0 and r.stdout.startswith("0x02"), r.stderr
