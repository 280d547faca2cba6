"""The REPL driven through a pseudo-terminal, as a person would use it."""
import os
import stat
import time

import pexpect


def ask(child, line):
    child.sendline(line)
    child.expect_exact("\r\n> ")
    # The echo of the line, then the output, then the next prompt.
    return child.before.split("\r\n", 1)[1] if "\r\n" in child.before else ""


def test_no_arguments_on_a_terminal_starts_the_repl(repl):
    child = repl()
    assert ask(child, "1 + 1") == "2"


def test_results_are_pretty_printed(repl):
    child = repl("repl")
    assert ask(child, "return 1, 2.0, 'x'") == '1\t2.0\t"x"'
    assert ask(child, "{b = 1, a = {1, 2}, [3] = true}") == "{[3] = true, a = {1, 2}, b = 1}"
    out = ask(child, "t = {name = 't'}; t.self = t; return t")
    assert "<table 1>" in out and "self = <cycle 1>" in out, out
    assert ask(child, "setmetatable({}, {__tostring = function() return 'custom!' end})") == "custom!"
    assert ask(child, "io.stdout").startswith("file (0x")
    assert ask(child, "x = 5") == ""


def test_multi_line_statements(repl):
    child = repl("repl")
    child.sendline("for i = 1, 3 do")
    child.expect_exact(">> ")
    child.sendline("  print(i)")
    child.expect_exact(">> ")
    assert ask(child, "end") == "1\r\n2\r\n3"
    child.sendline("function add(a,")
    child.expect_exact(">> ")
    child.sendline("b) return a + b end")
    child.expect_exact("\r\n> ")
    assert ask(child, "add(40, 2)") == "42"


def test_errors_show_message_and_traceback_and_the_repl_goes_on(repl):
    child = repl("repl")
    out = ask(child, "error('boom')")
    assert out.startswith("keyhost: stdin:1: boom\r\nstack traceback:"), out
    assert "repl.lua" not in out and "xpcall" not in out
    out = ask(child, "local x = = 1")
    assert out == "keyhost: stdin:1: unexpected symbol near '='"
    assert ask(child, "'still here'") == '"still here"'


def test_ctrl_c_interrupts_running_code(repl):
    # Each loop prints a word its echoed source does not hold ('spin' .. 'ning'), so Ctrl-C is sent
    # once the code runs, never to a REPL still reading the line.
    child = repl("repl")
    child.sendline("print('spin' .. 'ning') while true do end")
    child.expect_exact("spinning")
    child.sendintr()
    child.expect_exact("\r\n> ")
    assert "interrupted" in child.before
    child.sendline("co = coroutine.wrap(function() print('in' .. 'side') while true do end end); co()")
    child.expect_exact("inside")
    child.sendintr()
    child.expect_exact("\r\n> ")
    assert "interrupted" in child.before
    assert ask(child, "21 * 2") == "42"


def test_ctrl_c_at_the_prompt_discards_the_line(repl):
    child = repl("repl")
    child.send("this is not lua")
    child.expect_exact("this is not lua")  # echoed: the line editor holds it
    child.sendintr()
    child.expect_exact("> ")
    child.sendline("for i = 1, 2 do")
    child.expect_exact(">> ")
    child.sendintr()
    child.expect_exact("> ")
    assert ask(child, "'fresh'") == '"fresh"'


def test_tab_completion(repl):
    # Each completion is proven by running the completed call: the screen redraw is libedit's business.
    child = repl("repl")
    child.send("string.form\t")
    time.sleep(0.2)
    child.sendline("('<%d>', 7)")
    child.expect_exact('"<7>"')
    child.send("io.stdout:wri\t")
    time.sleep(0.2)
    child.sendline("('<ok>')")
    child.expect_exact("<ok>")
    child.send("collectg\t")
    time.sleep(0.2)
    child.sendline("('count') > 0")
    child.expect_exact("true")


def test_ctrl_d_exits_cleanly(repl):
    child = repl("repl")
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_history_is_private_and_keeps_no_secrets(repl):
    child = repl("repl")
    child.sendline("for i = 1, 1 do")
    child.expect_exact(">> ")
    ask(child, "end")
    ask(child, "pin = '123456'")
    ask(child, "words = 'abandon abandon about'")
    ask(child, " hidden = 1")
    ask(child, "answer = 40 + 2")
    child.sendeof()
    child.expect(pexpect.EOF)
    history = repl.state_dir / "keyhost" / "history"
    assert stat.S_IMODE(os.stat(history).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(history.parent).st_mode) == 0o700
    text = history.read_text()
    assert "answer" in text
    assert "123456" not in text and "abandon" not in text and "hidden" not in text
    assert "for\\040i" in text or "for i" in text
    # A new session recalls the previous one's last statement with the up arrow.
    child = repl("repl")
    child.send("\x1b[A")
    time.sleep(0.2)
    child.sendline("")
    child.expect_exact("\r\n> ")
    assert ask(child, "answer") == "42"



def test_tab_after_a_very_long_line_does_not_crash(repl):
    # libedit's readline layer (Debian 3.1-20221030) kept rl_line_buffer pointing into a buffer that a
    # longer line reallocated, and rl_complete wrote into the freed block. Without the tcache, glibc
    # checks the freed block's links at once, so the old code aborts on the first or second round.
    child = repl("repl", extra_env={"GLIBC_TUNABLES": "glibc.malloc.tcache_count=0", "SWIFT_BACKTRACE": "enable=no"})
    for n in range(4):
        child.sendline("x = '" + "a" * (4000 + 500 * n) + "'")
        child.expect_exact("\r\n> ")
        child.send("string.upp")
        time.sleep(0.2)
        child.send("\t")
        time.sleep(0.2)
        child.send("('c')\r")
        child.expect_exact('"C"')
        child.expect_exact("\r\n> ")
    # Tab inside a 4,000-character line completes too.
    child.send("s = '" + "b" * 4000 + "' .. string.upp")
    time.sleep(0.2)
    child.send("\t")
    time.sleep(0.2)
    child.send("('c')\r")
    child.expect_exact("\r\n> ")
    assert ask(child, "#s") == "4001"
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, (child.exitstatus, child.signalstatus)


# Statements that hold a secret under a neutral name, and the text that must not reach the history file.
SECRET_STATEMENTS = [
    ('phrase = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"', "abandon"),
    ("a = '5HueCGU8rMjxEXxiPuD5BDku4MkFqeZyd4dZ1jvhTVqvbTLvyTJ'", "5HueCGU8rMjx"),
    ("b = 'KwdMAjGmerYanjeui5SHS7JkmpZvVipYvB2LJGU1ZxJwYvP98617'", "KwdMAjGmerYa"),
    ("c = 'L52XzL2cMkHxqxBXRyEpnPQZGUs3uKiL3R11XbAdHigRzDozKZeW'", "L52XzL2cMkHx"),
    ("d = 'cMzLdeGd5vEqxB8B6VFQoRopQ3sLAAvEzDAoQgvX54xwofSWj1fx'", "cMzLdeGd5vEq"),
    ("e = 'zprvAWgYBBk7JR8GjzqSzmunMCS7dAbwpYTCs1YUMDXqduMA5JFHZ3iX5s2UkAR6vBdcCYYa1S5o1fVLrKsrnpCQ4WpUd6aVUWP1bS2Yy5DoaKv'", "zprvAWgYBBk7"),
    ("f = 'yprvABrGsX5C9jantheLAR8A97LcTCTVsvThwu2FZpdxFtyH2CS4JPYxToNLixTWvGygnuRmFxVEZ18ny3GJ57nPGH8skkt4tbZXKhxuaUFh6jt'", "yprvABrGsX5C"),
    ("g = 'Ltpv71G8qDifUiNetP6nmxPA5STrUVmv2J9YSmXajv8VsYBUyuPhvN9xCaQrfX2wo5xxJNtEazYCFRUu5FmokYMM79pcqz8pcdo4rNXAFPgyB4k'", "Ltpv71G8qDif"),
    ("h = 'dgpv51eADS3spNJh9Gjth94XcPwAczvQaDJs9rqx11kvxKs6r3Ek8AgERHhjLs6mzXQFHRzQqGwqdeoDkZmr8jQMBfi43b7sT3sx3cCSk5fGeUR'", "dgpv51eADS3s"),
    ("k = 'e8f32e723decf4051aefac8e2c93c9c5b214313817cdb01a1494b917c8436b35'", "e8f32e723dec"),
    ("l = 0xE8F32E723DECF4051AEFAC8E2C93C9C5B214313817CDB01A1494B917C8436B35", "E8F32E723DEC"),
    ('code = "246813"', "246813"),
    ("u = '864209753124'", "864209753124"),
    ("v = {'legal', 'winner', 'thank', 'year'}", "winner"),
]


def test_history_keeps_no_secret_found_by_content(repl):
    folder = repl.state_dir / "keyhost"
    folder.mkdir(parents=True)
    os.chmod(folder, 0o755)
    (folder / "history").write_text("_HiStOrY_V2_\nold\\040=\\0401\nleak\\040=\\040'91gGn1HgSap6CbU12F6z3pJri26xzp7Ay1VW6NHCoEayNXwRpu2'\n")
    os.chmod(folder / "history", 0o644)
    child = repl("repl")
    for statement, _ in SECRET_STATEMENTS:
        ask(child, statement)
    ask(child, "x = 1")
    ask(child, "print(string.format('%x', 255))")
    ask(child, "xp = 'xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8'")
    child.sendeof()
    child.expect(pexpect.EOF)
    history = folder / "history"
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(history).st_mode) == 0o600
    text = history.read_text()
    for statement, secret in SECRET_STATEMENTS:
        assert secret not in text, statement
    # An entry an older keyhost saved is dropped from the file too.
    assert "91gGn1HgSap6" not in text
    assert "old\\040=\\0401" in text
    assert "x\\040=\\0401" in text and "string.format" in text and "xpub661MyMwAqRbc" in text


def test_binary_strings_show_as_hex_and_hex_gives_all_of_it(repl):
    child = repl("repl")
    # SHA-256("abc") from FIPS 180-2: the value is known outside keyhost.
    assert ask(child, 'hash.sha256("abc")') == "<32 bytes ba7816bf…>"
    assert ask(child, 'hex(hash.sha256("abc"))') == '"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"'
    assert ask(child, '{ digest = "\\0\\1\\2", name = "text" }') == '{digest = <3 bytes 000102>, name = "text"}'
    assert ask(child, '"line\\n"') == '"line\\n"'


def test_preloaded_modules_paste_the_quick_start(repl):
    child = repl("repl")
    assert "globals hd, ec, hex, card, address, hash" in child.before
    child.sendline('m = hd.from_mnemonic("abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about")')
    child.expect_exact("\r\n> ")
    # BIP84's test vector: the first receive address of the test phrase.
    assert ask(child, 'm:derive("m/84\'/0\'/0\'/0/0"):address()') == '"bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu"'


def test_structured_errors_print_their_fields(repl):
    child = repl("repl")
    child.sendline('s = card.open { reader = "virtual", applet = "3.2" }; '
                   's:init { pin = "123456", puk = "987654321098", pairing_password = "p" }; '
                   's:auto { pin = "123456", pairing_password = "p" }')
    child.expect_exact("\r\n> ")
    out = ask(child, 's:verify_pin("000000")')
    assert "wrong PIN: 2 tries left" in out
    assert 'kind = "wrong_pin"' in out and "retries_left = 2" in out and "sw = 0x63C2" in out


def test_ctrl_l_clears_the_screen(repl):
    child = repl("repl")
    child.send("\x0c")
    child.expect(r"\x1b\[(H|2J)")
    assert ask(child, "1 + 1") == "2"


def test_a_history_that_cannot_be_saved_is_announced(repl, tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the state folder should be")
    child = repl("repl", extra_env={"XDG_STATE_HOME": str(blocker)})
    assert "warning: history is not saved this session" in child.before
    assert ask(child, "'works'") == '"works"'


def test_a_relative_xdg_state_home_is_ignored(keyhost_bin, tmp_path):
    # The XDG spec: a relative XDG_STATE_HOME is invalid and ignored; the history goes under HOME instead of
    # under whatever folder the REPL was started in.
    home = tmp_path / "home"
    work = tmp_path / "work"
    home.mkdir()
    work.mkdir()
    env = {"PATH": "/usr/bin:/bin", "TERM": "xterm", "HOME": str(home), "XDG_STATE_HOME": "rel"}
    child = pexpect.spawn(keyhost_bin, ["repl"], env=env, cwd=str(work), encoding="utf-8", timeout=120, dimensions=(40, 200))
    try:
        child.expect_exact("> ")
        assert ask(child, "answer = 40 + 2") == ""
        child.sendeof()
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert not (work / "rel").exists()
    assert "answer" in (home / ".local" / "state" / "keyhost" / "history").read_text()


def test_ctrl_c_stops_a_long_keyhost_call(repl):
    # A million addresses per call: without a check inside the call, Ctrl-C would wait for it to finish, call after call.
    child = repl("repl")
    child.sendline('n = hd.from_mnemonic("abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon '
                   'abandon about"):derive("m/84\'/0\'/0\'")')
    child.expect_exact("\r\n> ")
    child.sendline("print('call' .. 'ing') for i = 1, 1000 do n:addresses(0, 0, 1000000) end")
    child.expect_exact("calling")  # then at once inside the first call, which takes seconds
    child.sendintr()
    child.expect_exact("\r\n> ")
    assert "interrupted" in child.before
    assert ask(child, "#n:addresses(0, 0, 3)") == "3"
