"""What both front ends do, they answer alike: the rows of docs/cli-lua.md whose Lua side was missing until issue
20's last slice, run through both and compared (card list, mnemonic suggestions, signed messages with a card, card
info and status)."""
import json
import subprocess

import pytest

MNEMONIC = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"


def keyhost(keyhost_bin, *args, env=None, stdin=None):
    return subprocess.run([keyhost_bin, *args], capture_output=True, text=True, input=stdin, timeout=120,
                          env={"PATH": "/usr/bin:/bin", **(env or {})})


def test_card_list_is_the_same_list(keyhost_bin):
    cli = keyhost(keyhost_bin, "card", "list", "--json")
    lua = keyhost(keyhost_bin, "eval", """
        local json, hex = require 'keyhost.json', require 'keyhost.hex'
        local rows = {}
        for _, r in ipairs(require('keyhost.card').list()) do
          rows[#rows + 1] = { index = r.index, name = r.name, card_present = r.card_present, atr = r.atr and hex.encode(r.atr) or json.null }
        end
        print(json.encode(rows))""")
    if cli.returncode != 0:
        # No pcscd here: both say so.
        assert lua.returncode != 0, lua.stdout
        return
    assert lua.returncode == 0, lua.stderr
    assert json.loads(lua.stdout or "[]") == json.loads(cli.stdout)


def test_mnemonic_suggestions_are_the_same_words(keyhost_bin):
    typo = MNEMONIC[: -len("about")] + "abuot"
    cli = keyhost(keyhost_bin, "key", "mnemonic", "check", "--stdin", "--suggest", "--json", stdin=typo + "\n")
    report = json.loads(cli.stdout)
    assert report["valid"] is False and report["position"] == 12
    lua = keyhost(keyhost_bin, "eval", f"print(table.concat(require('keyhost.hd').mnemonic_suggestions('{typo}', 12), ' '))")
    assert lua.returncode == 0, lua.stderr
    assert lua.stdout.split() == report["suggestions"] and report["suggestions"]


def test_signed_message_with_a_card_is_the_commands(keyhost_bin, tmp_path):
    state = tmp_path / "card.json"
    setup = keyhost(keyhost_bin, "eval", f"""
        local card, hd = require 'keyhost.card', require 'keyhost.hd'
        local s <close> = card.open {{ reader = 'virtual', state = '{state}' }}
        s:init {{ pin = '123456', puk = '987654321098', pairing_password = 'KeycardTest' }}
        s:auto {{ pin = '123456', pairing_password = 'KeycardTest' }}
        s:load_seed(hd.mnemonic_to_seed('{MNEMONIC}'))
        print(require('keyhost.ec').btc_sign_message(s, 'keyhost parity', {{ path = "m/84'/0'/0'/0/1", kind = 'p2wpkh' }}))""",
        env={"KEYHOST_STATE_DIR": str(tmp_path)})
    assert setup.returncode == 0, setup.stderr
    cli = keyhost(keyhost_bin, "key", "sign-message", "--card", "--reader", "virtual", "--card-state", str(state), "--path", "m/84'/0'/0'/0/1",
                  "--kind", "p2wpkh", "--json", "keyhost parity",
                  env={"KEYHOST_PIN": "123456", "KEYHOST_PAIRING_PASSWORD": "KeycardTest", "XDG_STATE_HOME": str(tmp_path)})
    assert cli.returncode == 0, cli.stderr
    assert json.loads(cli.stdout)["signature"] == setup.stdout.strip()


CARD_BYTE_FIELDS = "{instance_uid = true, secure_channel_public_key = true, key_uid = true, identity_public_key = true, identity_ca_key = true}"


@pytest.mark.parametrize("applet", ["3.2", "4.0"])
def test_card_info_and_status_are_the_same_records(keyhost_bin, tmp_path, applet):
    """`s:info()` / `s:status()` and `keyhost card info` / `status --json`: one record each, field for field."""
    state = tmp_path / "card.json"
    env = {"XDG_STATE_HOME": str(tmp_path), "KEYHOST_PIN": "123456", "KEYHOST_PAIRING_PASSWORD": "KeycardTest"}
    lua = keyhost(keyhost_bin, "eval", f"""
        local card, hd, json, hex = require 'keyhost.card', require 'keyhost.hd', require 'keyhost.json', require 'keyhost.hex'
        local bytes = {CARD_BYTE_FIELDS}
        local function plain(record)
          local out = {{}}
          for k, v in pairs(record) do out[k] = bytes[k] and hex.encode(v) or v end
          return out
        end
        local s <close> = card.open {{ reader = 'virtual', state = '{state}', applet = '{applet}' }}
        s:init {{ pin = '123456', puk = '987654321098', pairing_password = 'KeycardTest' }}
        s:auto {{ pin = '123456', pairing_password = 'KeycardTest' }}
        s:load_seed(hd.mnemonic_to_seed('{MNEMONIC}'))
        local info = plain(s:select())
        s:auto {{ pin = '123456' }}
        print(json.encode({{ info = info, status = plain(s:status()) }}))""", env=env)
    assert lua.returncode == 0, lua.stderr
    records = json.loads(lua.stdout)
    for command, name in (("info", "info"), ("status", "status")):
        cli = keyhost(keyhost_bin, "card", command, "--reader", "virtual", "--card-state", str(state), "--json", env=env)
        assert cli.returncode == 0, cli.stderr
        expected = json.loads(cli.stdout)
        got = records[name]
        assert set(got) <= set(expected), (name, set(got) - set(expected))
        assert {k: got.get(k) for k in expected} == expected, name
    assert expected["path"] == ("m" if applet == "3.2" else None)
    assert json.loads(keyhost(keyhost_bin, "card", "info", "--reader", "virtual", "--card-state", str(state), "--json", env=env).stdout)["applet"] == applet


def test_card_export_key_is_the_same_record(keyhost_bin, tmp_path):
    state = tmp_path / "card.json"
    env = {"XDG_STATE_HOME": str(tmp_path), "KEYHOST_PIN": "123456", "KEYHOST_PAIRING_PASSWORD": "KeycardTest"}
    lua = keyhost(keyhost_bin, "eval", f"""
        local card, hd, json, hex = require 'keyhost.card', require 'keyhost.hd', require 'keyhost.json', require 'keyhost.hex'
        local s <close> = card.open {{ reader = 'virtual', state = '{state}' }}
        s:init {{ pin = '123456', puk = '987654321098', pairing_password = 'KeycardTest' }}
        s:auto {{ pin = '123456', pairing_password = 'KeycardTest' }}
        s:load_seed(hd.mnemonic_to_seed('{MNEMONIC}'))
        local r = s:export_key {{ path = "m/84'/0'/0'", kind = 'extended', family = 'zpub' }}
        print(json.encode({{ path = r.path, public_key = hex.encode(r.public_key), chain_code = hex.encode(r.chain_code), xpub = r.xpub }}))""",
        env=env)
    assert lua.returncode == 0, lua.stderr
    cli = keyhost(keyhost_bin, "card", "export-key", "--card-state", str(state), "--path", "m/84'/0'/0'", "--extended", "--family", "zpub",
                  "--json", env=env)
    assert cli.returncode == 0, cli.stderr
    assert json.loads(lua.stdout) == json.loads(cli.stdout)
