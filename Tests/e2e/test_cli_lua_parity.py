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
          local row = { index = r.index, name = r.name, card_present = r.card_present, atr = r.atr and hex.encode(r.atr) or json.null }
          if r.card_present then row.applets = r.applets or json.null; row.problem = r.problem or json.null end
          rows[#rows + 1] = row
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


ISSUER_KEY = "0b432b2677937381aef05bb02a66ecd012773062cf3fa2549e44f58ed2401710"


def test_the_cash_program_by_name_is_the_same_program(keyhost_bin):
    holder = "02" + "79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798"
    cli = keyhost(keyhost_bin, "token", "issue", "--program", "keyhost.cash", "--value", "5", "--unit", "EUR-cent", "--to", holder,
                  "--issuer-key-env", "ISSUER", env={"ISSUER": ISSUER_KEY})
    assert cli.returncode == 0, cli.stderr
    lua = keyhost(keyhost_bin, "eval", f"""
        local token, ec, hex = require 'keyhost.token', require 'keyhost.ec', require 'keyhost.hex'
        local text = token.issue {{ program = 'keyhost.cash', value = 5, unit = 'EUR-cent', to = hex.decode('{holder}'),
                                   issuer_key = ec.private_key(hex.decode('{ISSUER_KEY}')) }}
        print(hex.encode(token.inspect(text).program_sha256), token.inspect(text).program_kind)""")
    assert lua.returncode == 0, lua.stderr
    inspected = json.loads(keyhost(keyhost_bin, "token", "inspect", "--json", "-", stdin=cli.stdout).stdout)["tokens"][0]
    assert lua.stdout.split() == [inspected["program_sha256"], inspected["program_kind"]]
    # A name that is no stdlib module is refused by both, naming it.
    cli = keyhost(keyhost_bin, "token", "issue", "--program", "keyhost.nosuch", "--value", "5", "--unit", "EUR-cent", "--to", holder,
                  "--issuer-key-env", "ISSUER", env={"ISSUER": ISSUER_KEY})
    lua = keyhost(keyhost_bin, "eval", f"""require('keyhost.token').issue {{ program = 'keyhost.nosuch', value = 5, unit = 'EUR-cent',
        to = require('keyhost.hex').decode('{holder}'), issuer_key = require('keyhost.ec').generate() }}""")
    for result in (cli, lua):
        assert result.returncode != 0 and "no module keyhost.nosuch in keyhost's stdlib" in result.stderr, result.stderr


def test_ledger_stats_are_one_shape(keyhost_bin, tmp_path):
    ledger = tmp_path / "ledger.db"
    lua = keyhost(keyhost_bin, "eval", f"""
        local token, ec, hex, json = require 'keyhost.token', require 'keyhost.ec', require 'keyhost.hex', require 'keyhost.json'
        local issuer = ec.private_key(hex.decode('{ISSUER_KEY}'))
        local w <close> = token.wallet.create('{tmp_path / "wallet.db"}')
        for _, unit in ipairs {{ 'EUR-cent', 'EUR-cent', 'CHF-rappen' }} do
          w:import(token.issue {{ program = 'keyhost.cash', value = 7, unit = unit, to = w:holder().public_key, issuer_key = issuer }})
        end
        local ids = {{}}
        for _, row in ipairs(w:list()) do ids[#ids + 1] = row.id end
        local l <close> = token.ledger.open('sqlite:{ledger}', {{ issuers = {{ issuer }} }})
        for _, row in ipairs(l:deposit(w:deposit_chains(ids))) do assert(row.result == 'accepted', row.result) end
        print(json.encode(l:stats()))""")
    assert lua.returncode == 0, lua.stderr
    cli = keyhost(keyhost_bin, "token", "ledger", "stats", "--db", f"sqlite:{ledger}", "--json")
    assert cli.returncode == 0, cli.stderr
    stats = json.loads(cli.stdout)
    assert json.loads(lua.stdout) == stats
    assert stats == {"tokens": 3, "double_spends": 0, "units": [{"unit": "CHF-rappen", "tokens": 1, "total": "7"},
                                                                 {"unit": "EUR-cent", "tokens": 2, "total": "14"}]}



ZPUB = "zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs"


def as_lua(value):
    """The JSON value as a Lua table holds it, and keyhost.json writes it back: Lua has no null (a null member is
    absent), and an empty table cannot say whether it was a list or an object."""
    if isinstance(value, dict):
        value = {k: as_lua(v) for k, v in value.items() if v is not None}
    elif isinstance(value, list):
        value = [as_lua(v) for v in value]
    return "empty table" if value == [] or value == {} else value


def test_a_discovery_job_reports_the_same_from_both(keyhost_bin, tmp_path):
    index, jobs = tmp_path / "used.txt", tmp_path / "wallets.jsonl"
    index.write_text("bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu\n")
    jobs.write_text("\n".join(json.dumps(line) for line in [
        {"id": "alice", "xpub": ZPUB},
        {"id": "typo", "xpub": ZPUB[:-1] + "t"},
        {"id": "words", "mnemonic_env": "WORDS", "gap_limit": 3},
        {"id": "unset", "mnemonic_env": "NOT_SET_ANYWHERE"},
    ]) + "\n")
    env = {"WORDS": MNEMONIC}
    cli = keyhost(keyhost_bin, "discover", "--jobs", str(jobs), "--source", f"index:{index}", "--gap-limit", "4", "--account-gap", "2",
                  "--json", env=env)
    assert cli.returncode == 1, cli.stderr  # two wallets fail
    lua = keyhost(keyhost_bin, "eval", f"""
        local discovery, json = require 'keyhost.discovery', require 'keyhost.json'
        for _, row in ipairs(discovery.scan_jobs('{jobs}', {{ source = 'index:{index}', gap_limit = 4, account_gap = 2 }})) do
          print(json.encode(row))
        end""", env=env)
    assert lua.returncode == 0, lua.stderr
    rows = [json.loads(line) for line in cli.stdout.splitlines()]
    assert [(row["id"], row["ok"]) for row in rows] == [("alice", True), ("typo", False), ("words", True), ("unset", False)]
    assert [as_lua(json.loads(line)) for line in lua.stdout.splitlines()] == [as_lua(row) for row in rows]
    # The same defaults on both sides when none is given.
    cli = keyhost(keyhost_bin, "discover", "--jobs", str(jobs), "--source", f"index:{index}", "--json", env=env)
    lua = keyhost(keyhost_bin, "eval", f"""
        local discovery, json = require 'keyhost.discovery', require 'keyhost.json'
        for _, row in ipairs(discovery.scan_jobs('{jobs}', {{ source = 'index:{index}' }})) do print(json.encode(row)) end""", env=env)
    assert [as_lua(json.loads(line)) for line in lua.stdout.splitlines()] == [as_lua(json.loads(line)) for line in cli.stdout.splitlines()]
