"""What both front ends do, they answer alike: the rows of docs/cli-lua.md whose Lua side was missing until issue
20's last slice, run through both and compared (card list, mnemonic suggestions, signed messages with a card)."""
import json
import subprocess

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
