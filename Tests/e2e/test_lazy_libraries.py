"""keyhost maps the heavy C libraries (libcrypto, libssl, libedit, libsqlite3) on first use, not at
every start: loading libcrypto alone costs about as much as Lua's whole start-up. These tests watch
the dynamic loader from outside (readelf, LD_DEBUG) rather than trusting keyhost's word."""
import os
import re
import subprocess

import pytest

LAZY = ["libcrypto.so", "libssl.so", "libedit.so", "libsqlite3.so"]


def loaded_libraries(keyhost_bin, *args, env=None):
    """The shared objects the dynamic loader opened while keyhost ran `args`."""
    run_env = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/tmp"), "LD_DEBUG": "files"}
    run_env.update(env or {})
    result = subprocess.run([keyhost_bin, *args], capture_output=True, text=True, env=run_env, timeout=60)
    assert result.returncode == 0, result.stderr[-2000:]
    return set(re.findall(r"file=(\S+?)\s+\[0\];\s+(?:needed|dynamically loaded)", result.stderr)), result


def assert_lua_but_none_of(lazy, names, what):
    """`names` (shared objects) hold Lua, so they are the real list, and none of `lazy`."""
    assert any(name.startswith("liblua5.4") for name in names), names
    for lib in lazy:
        assert not any(name.startswith(lib) for name in names), f"{lib} {what}: {names}"


def test_binary_does_not_need_the_lazy_libraries(keyhost_bin):
    dynamic = subprocess.run(["readelf", "-d", keyhost_bin], capture_output=True, text=True, check=True).stdout
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]", dynamic)
    assert_lua_but_none_of(LAZY, needed, "is linked")


def test_empty_script_loads_none_of_them(keyhost_bin, tmp_path):
    script = tmp_path / "empty.lua"
    script.write_text("")
    libs, _ = loaded_libraries(keyhost_bin, "run", str(script))
    assert_lua_but_none_of(LAZY, libs, "loaded for an empty script")


def test_sha256_and_signatures_load_none_of_them(keyhost_bin, tmp_path):
    # SHA-256 is keyhost's own and randomness comes from getrandom: what a token run does (hash, sign,
    # verify) must not pay for loading and initialising libcrypto.
    script = tmp_path / "sign.lua"
    script.write_text(
        'local hash, hex, ec = require("keyhost.hash"), require("keyhost.hex"), require("keyhost.ec")\n'
        'local key = ec.private_key(string.rep("\\1", 32))\n'
        'local sig = ec.schnorr_sign(key, hash.sha256("m"))\n'
        'assert(ec.schnorr_verify(key:public_key(), hash.sha256("m"), sig))\n'
        'print(hex.encode(hash.sha256("abc")))\n')
    libs, result = loaded_libraries(keyhost_bin, "run", str(script))
    assert result.stdout.strip() == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert_lua_but_none_of(LAZY, libs, "loaded for SHA-256 and a signature")


def test_sha512_loads_libcrypto_only(keyhost_bin, tmp_path):
    script = tmp_path / "hash.lua"
    script.write_text('print(require("keyhost.hex").encode(require("keyhost.hash").sha512("abc")):sub(1, 16))\n')
    libs, result = loaded_libraries(keyhost_bin, "run", str(script))
    assert result.stdout.strip() == "ddaf35a193617aba"
    assert "libcrypto.so.3" in libs, libs
    assert_lua_but_none_of([lib for lib in LAZY if lib != "libcrypto.so"], libs, "loaded for a hash")


def test_a_broken_library_is_reported_like_the_dynamic_loader_would(keyhost_bin, tmp_path):
    # An unreadable libcrypto found first on the search path stands in for a missing one.
    (tmp_path / "libcrypto.so.3").write_bytes(b"")
    script = tmp_path / "hash.lua"
    script.write_text('require("keyhost.hash").sha512("abc")\n')
    env = {"PATH": "/usr/bin:/bin", "LD_LIBRARY_PATH": str(tmp_path)}
    result = subprocess.run([keyhost_bin, "run", str(script)], capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 127
    assert "cannot load libcrypto.so.3" in result.stderr
    assert "libssl3" in result.stderr  # names the package to install
    # An empty script never needs it, so it still runs.
    empty = tmp_path / "empty.lua"
    empty.write_text("")
    assert subprocess.run([keyhost_bin, "run", str(empty)], env=env, timeout=60).returncode == 0
