"""Ctrl-C latency: how long `keyhost run` takes to exit after SIGINT arrives inside a long call.

    python3 interrupt_latency.py KEYHOST REPEATS   -> one line per case: name median_us max_us

Each case starts a script that prints "started" and then runs a call of minutes; SIGINT is sent 0.3 s
later and the time until the process has exited is taken (it includes unwinding the Lua stack, running
<close> handlers and process exit).
"""
import signal
import statistics
import subprocess
import sys
import tempfile
import time

PHRASE = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"
CASES = {
    "addresses": 'local n = require("keyhost.hd").from_mnemonic("%s"):derive("m/84\'/0\'/0\'")\n'
                 'print("started") io.stdout:flush()\nwhile true do n:addresses(0, 0, 1000000) end\n' % PHRASE,
    "pbkdf2": 'local hash = require "keyhost.hash"\nprint("started") io.stdout:flush()\n'
              'hash.pbkdf2_sha512("password", "salt", 2000000000, 64)\n',
    "lua_loop": 'print("started") io.stdout:flush()\nlocal x = 0\nwhile true do x = x + 1 end\n',
}


def once(keyhost, source):
    with tempfile.NamedTemporaryFile("w", suffix=".lua") as script:
        script.write(source)
        script.flush()
        process = subprocess.Popen([keyhost, "run", script.name], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert "started" in process.stdout.readline()
        time.sleep(0.3)
        start = time.perf_counter()
        process.send_signal(signal.SIGINT)
        process.wait(timeout=60)
        elapsed = time.perf_counter() - start
        assert process.returncode == 130, process.returncode
        return elapsed * 1e6


keyhost, repeats = sys.argv[1], int(sys.argv[2])
for name, source in CASES.items():
    times = [once(keyhost, source) for _ in range(repeats)]
    print(name, round(statistics.median(times)), round(max(times)))
