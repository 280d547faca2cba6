"""`keyhost card …` on a real pseudo-terminal: secrets asked without echo (twice when being set), and
factory-reset's and remove-key's confirmation questions."""
import json
import subprocess

import pexpect

PIN, PUK, PASSWORD = "123456", "987654321098", "KeycardTest"


def spawn(keyhost_bin, tmp_path, *args, extra_env=None):
    env = {"PATH": "/usr/bin:/bin", "TERM": "xterm", "HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state")}
    env.update(extra_env or {})
    state = str(tmp_path / "card.json")
    return pexpect.spawn(keyhost_bin, ["card", *args, "--reader", "virtual", "--card-state", state], env=env,
                         encoding="utf-8", timeout=20)


def answer(child, prompt, value):
    child.expect_exact(prompt)
    child.sendline(value)


def test_init_asks_every_secret_twice_without_echo(keyhost_bin, tmp_path):
    child = spawn(keyhost_bin, tmp_path, "init", "--applet", "3.2")
    for prompt, value in [("Keycard PIN: ", PIN), ("Keycard PIN again: ", PIN), ("Keycard PUK: ", PUK), ("Keycard PUK again: ", PUK),
                          ("Keycard pairing password: ", PASSWORD), ("Keycard pairing password again: ", PASSWORD)]:
        answer(child, prompt, value)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    transcript = child.before
    assert "initialised the card (applet 3.2" in transcript
    for secret in (PIN, PUK, PASSWORD):
        assert secret not in transcript

    # The PIN at a prompt opens the card; a new PIN typed differently twice changes nothing.
    child = spawn(keyhost_bin, tmp_path, "change-pin")
    answer(child, "Keycard PIN: ", PIN)
    answer(child, "Keycard new PIN: ", "654321")
    answer(child, "Keycard new PIN again: ", "654322")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 1
    assert "the two new PIN entries differ; nothing was changed" in child.before
    assert "65432" not in child.before


def test_factory_reset_asks_for_yes(keyhost_bin, tmp_path):
    env = {"KEYHOST_PIN": PIN, "KEYHOST_PUK": PUK}
    child = spawn(keyhost_bin, tmp_path, "init", "--applet", "4.0", extra_env=env)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before

    child = spawn(keyhost_bin, tmp_path, "factory-reset")
    answer(child, "Type yes to erase it: ", "no")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 1
    assert "not confirmed; nothing was erased" in child.before

    child = spawn(keyhost_bin, tmp_path, "factory-reset", "--json")
    child.expect_exact("Keycard with identity public key ")
    answer(child, "Type yes to erase it: ", "yes")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    result = json.loads(child.before[child.before.index("{"):])
    assert result["initialized"] is False


def test_remove_key_asks_for_yes_before_the_pin(keyhost_bin, tmp_path):
    env = {"KEYHOST_PIN": PIN, "KEYHOST_PUK": PUK, "KEYHOST_PAIRING_PASSWORD": PASSWORD}
    for command in (["init", "--applet", "3.2"], ["generate-key"]):
        child = spawn(keyhost_bin, tmp_path, *command, extra_env=env)
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 0, child.before

    # No PIN in the environment: a "no" must end it before the PIN is asked.
    child = spawn(keyhost_bin, tmp_path, "remove-key")
    child.expect_exact("erases the key with key UID ")
    answer(child, "Type yes to erase it: ", "no")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 1
    assert "not confirmed; nothing was removed" in child.before
    assert "Keycard PIN" not in child.before

    child = spawn(keyhost_bin, tmp_path, "remove-key", "--json", extra_env={"KEYHOST_PAIRING_PASSWORD": PASSWORD})
    answer(child, "Type yes to erase it: ", "yes")
    answer(child, "Keycard PIN: ", PIN)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    assert json.loads(child.before[child.before.index("{"):])["has_master_key"] is False


def test_generate_mnemonic_load_asks_a_new_passphrase_twice(keyhost_bin, tmp_path):
    env = {"KEYHOST_PIN": PIN, "KEYHOST_PUK": PUK}
    child = spawn(keyhost_bin, tmp_path, "init", "--applet", "4.0", extra_env=env)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before

    # Two different entries: nothing is loaded (a mistyped new passphrase would make a wallet nobody can restore).
    child = spawn(keyhost_bin, tmp_path, "generate-mnemonic", "--load", "--passphrase", extra_env=env)
    answer(child, "Keycard BIP39 passphrase: ", "correct horse")
    answer(child, "Keycard BIP39 passphrase again: ", "correct hoarse")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 1
    assert "the two BIP39 passphrase entries differ" in child.before
    assert "horse" not in child.before and "hoarse" not in child.before
    status = subprocess.run([keyhost_bin, "card", "status", "--json", "--reader", "virtual", "--card-state", str(tmp_path / "card.json")],
                            env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state"), **env},
                            capture_output=True, text=True, timeout=60)
    assert json.loads(status.stdout)["has_master_key"] is False, status.stderr
