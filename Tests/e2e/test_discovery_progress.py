"""What `keyhost discover` writes to a terminal on standard error while it works: the progress line of one scan and
the line per finished wallet of a job (issue 32: an ETA that always said "≥ 0s", "1 used addresses"). Standard error
is a pseudo-terminal, as for a person watching; standard output is a pipe."""
import os
import pty
import subprocess

ZPUB = "zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs"
FIRST_RECEIVE = "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu"


def run_with_terminal_stderr(command):
    """Runs `command` with standard error on a pseudo-terminal; its exit status, standard output and what it drew."""
    controller, terminal = pty.openpty()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=terminal, env={"PATH": "/usr/bin:/bin"})
    os.close(terminal)
    drawn = b""
    while True:
        try:
            chunk = os.read(controller, 4096)
        except OSError:  # EIO: every holder of the terminal's other end has closed it
            break
        if not chunk:
            break
        drawn += chunk
    os.close(controller)
    out, _ = process.communicate(timeout=300)
    return process.returncode, out.decode(), drawn.decode(errors="replace")


def test_the_progress_line_gives_no_eta_it_cannot_estimate(keyhost_bin, tmp_path):
    index = tmp_path / "used.txt"
    index.write_text(FIRST_RECEIVE + "\n")
    status, out, drawn = run_with_terminal_stderr([keyhost_bin, "discover", "--xpub", ZPUB, "--source", f"index:{index}", "--gap-limit", "5"])
    assert status == 0, drawn
    assert "addresses checked" in drawn  # the line was drawn
    # The scan takes well under a second: no estimate says anything, so none is shown (it used to say "ETA ≥ 0s").
    assert "ETA ≥ 0s" not in drawn, drawn
    assert FIRST_RECEIVE in out


def test_a_job_counts_used_addresses_in_good_english(keyhost_bin, tmp_path):
    index, jobs = tmp_path / "used.txt", tmp_path / "wallets.jsonl"
    index.write_text(FIRST_RECEIVE + "\n")
    jobs.write_text(f'{{"id": "one", "xpub": "{ZPUB}"}}\n{{"id": "none", "xpub": "{ZPUB}", "indexes": "1-30"}}\n')
    status, out, drawn = run_with_terminal_stderr([keyhost_bin, "discover", "--jobs", str(jobs), "--source", f"index:{index}", "--gap-limit", "5"])
    assert status == 0, drawn
    assert "[1/2] one: 1 used address\r\n" in drawn, drawn
    assert "[2/2] none: 0 used addresses\r\n" in drawn, drawn
    assert out.splitlines()[0].split("\t")[:3] == ["one", "ok", "1 used address"]
