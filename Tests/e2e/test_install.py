"""scripts/install puts the binaries (keyhost and keyhost-ledger), stdlib, man pages and shell completions under a
prefix, all generated from the argument parser, and the installed keyhost runs from there."""
import os
import pathlib
import re
import signal
import subprocess

REPO = pathlib.Path(__file__).resolve().parents[2]


def test_install_into_a_prefix(keyhost_bin, tmp_path):
    prefix = tmp_path / "prefix"
    subprocess.run([str(REPO / "scripts" / "install"), "--binary", keyhost_bin, str(prefix)], check=True,
                   capture_output=True, text=True, timeout=900)
    installed = prefix / "bin" / "keyhost"
    run = subprocess.run([str(installed), "-e", "return require('keyhost.inspect') ~= nil"], capture_output=True, text=True,
                         cwd=tmp_path, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert run.returncode == 0, run.stderr
    assert run.stdout == "true\n"

    # keyhost-ledger sits beside keyhost, and the installed keyhost finds it there (not on PATH) for the ledger service.
    assert os.access(prefix / "bin" / "keyhost-ledger", os.X_OK)
    issuer = "79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798"
    serve = subprocess.Popen([str(installed), "token", "ledger", "serve", "--listen", "127.0.0.1:0", "--db", f"sqlite:{tmp_path / 'l.db'}",
                              "--issuer", issuer], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp_path,
                             env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    try:
        line = serve.stdout.readline()
        assert re.match(r"listening on http://127\.0\.0\.1:\d+ \(ledger sqlite:", line), line
        assert os.readlink(f"/proc/{serve.pid}/exe").endswith("/bin/keyhost-ledger")
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.wait(timeout=30)

    man = prefix / "share" / "man" / "man1"
    assert (man / "keyhost.1").exists() and (man / "keyhost.discover.1").exists() and (man / "keyhost.card.info.1").exists()
    assert not (man / "keyhost.token._worker.1").exists()
    # man renders it (the page is valid mdoc) and the text is the one --help prints.
    page = subprocess.run(["man", "-l", str(man / "keyhost.discover.1")], capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "MANWIDTH": "200", "MAN_KEEP_FORMATTING": "0"})
    assert page.returncode == 0, page.stderr
    assert "--gap-limit" in page.stdout.replace("\u2010", "-")

    bash = prefix / "share" / "bash-completion" / "completions" / "keyhost"
    completion = subprocess.run(["bash", "-c", f'source "{bash}"; COMP_LINE="keyhost card "; COMP_POINT=${{#COMP_LINE}}; '
                                 'COMP_WORDS=(keyhost card ""); COMP_CWORD=2; _keyhost; printf "%s\\n" "${COMPREPLY[@]}"'],
                                capture_output=True, text=True)
    assert completion.returncode == 0, completion.stderr
    assert {"info", "list", "serve"} <= set(completion.stdout.split())
    assert "#compdef keyhost" in (prefix / "share" / "zsh" / "site-functions" / "_keyhost").read_text()
    assert "complete -c 'keyhost'" in (prefix / "share" / "fish" / "vendor_completions.d" / "keyhost.fish").read_text()
