"""Token runs per second through keyhost's two front ends, for scripts/bench.

    python3 token_runs.py KEYHOST DIRECTORY [runs]

Prints "<name> <microseconds per run>" lines (wall clock, medians of three rounds):
    lua_run_us         w:run in one `keyhost run` process, one durable commit per run
    lua_run_many_us    w:run_many in batches of 100: one durable commit per batch
    cli_one_us         `keyhost token run ID` in a shell loop: one process per token
    cli_batch_us       `keyhost token run ID x 25` in a shell loop: one process and one commit per 25 tokens
    cli_batch100_us    the same with 100 tokens per process
The clock starts once the wallet is made and its tokens imported (the Lua script waits for a line on its input).
"""
import os
import shutil
import subprocess
import sys
import time

keyhost, directory = sys.argv[1], sys.argv[2]
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 300
script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "token_runs.lua")
env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": directory}


def fresh(name):
    path = os.path.join(directory, name)
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    return path


def lua(mode):
    proc = subprocess.Popen([keyhost, "run", script, fresh(f"lua-{mode}.db"), str(runs), mode],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout.readline().strip() == "ready"
    start = time.monotonic()
    proc.stdin.write("go\n")
    proc.stdin.flush()
    done = proc.stdout.readline().split()
    took = time.monotonic() - start
    assert done == ["done", str(runs)], done
    assert proc.wait() == 0
    return took / runs * 1e6


def cli(per_process):
    wallet = fresh(f"cli-{per_process}.db")
    out = subprocess.run([keyhost, "run", script, wallet, str(runs), "prepare"], capture_output=True, text=True, env=env, check=True)
    ids = out.stdout.split()
    assert len(ids) == runs
    lines = [" ".join(ids[i:i + per_process]) for i in range(0, runs, per_process)]
    listing = os.path.join(directory, "ids.txt")
    with open(listing, "w") as f:
        f.write("\n".join(lines) + "\n")
    loop = f'while read -r ids; do "$0" token run --wallet "$1" $ids >/dev/null || exit 1; done < "$2"'
    start = time.monotonic()
    subprocess.run(["bash", "-c", loop, keyhost, wallet, listing], env=env, check=True)
    return (time.monotonic() - start) / runs * 1e6


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


figures = {"lua_run_us": lambda: lua("run"), "lua_run_many_us": lambda: lua("run_many"),
           "cli_one_us": lambda: cli(1), "cli_batch_us": lambda: cli(25), "cli_batch100_us": lambda: cli(100)}
only = os.environ.get("KEYHOST_BENCH_ONLY")
for name, measure in figures.items():
    if only and only != name:
        continue
    print(name, round(median([measure() for _ in range(3)]), 1), flush=True)
shutil.rmtree(os.path.join(directory, "ids.txt"), ignore_errors=True)
