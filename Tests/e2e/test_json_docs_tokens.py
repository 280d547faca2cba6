"""docs/json.md's `## keyhost token` section against the real `--json` output.

Each ```json block of the section starts with a `// keyhost …` line naming the command. This test runs the
scenario those commands come from (its own wallets, issuer key and ledger in tmp_path; no network, no
waiting on a clock), keeps each documented command's output, and checks that the set of JSON key paths
(object keys recursively, an array by its first element) of the real output is the documented example's:
a key renamed, added or dropped on either side fails. The command lines must match the documented ones
exactly, with `$NAME` for what the scenario learns as it goes (holder keys, token ids, the proof file).
It also checks the output-file rule the section states and the error kinds it lists.
"""

import json
import os
import re
import shlex
import stat
import string
import subprocess

import pytest

from conftest import REPO

DOC = REPO / "docs" / "json.md"
ISSUER = "11" * 32
VOUCHER = """local t = ...
assert(type(t.args.shop) == "string", "say where the voucher is redeemed: --arg shop=...")
t.emit { kind = "redemption", voucher = t.hex.encode(t.token.id), amount = t.token.value,
         unit = t.token.unit, shop = t.args.shop, at = t.now }
"""


def section():
    text = DOC.read_text()
    start = text.index("\n## keyhost token\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end >= 0 else len(text)]


def documented():
    """{command line after 'keyhost ': parsed example} for each ```json block of the section."""
    examples = {}
    for block in re.findall(r"```json\n(.*?)```", section(), re.S):
        first, _, body = block.partition("\n")
        assert first.startswith("// keyhost "), f"a token example without its command line: {first!r}"
        command = first[len("// keyhost "):].strip()
        assert command not in examples, f"two examples for {command}"
        examples[command] = json.loads(body)
    return examples


def key_paths(value, prefix=""):
    """Object keys recursively, as dotted paths; an array stands for its first element (`name[]`)."""
    paths = set()
    if isinstance(value, dict):
        for key, item in value.items():
            path = f"{prefix}.{key}" if prefix else key
            paths.add(path)
            paths |= key_paths(item, path)
    elif isinstance(value, list) and value:
        paths |= key_paths(value[0], prefix + "[]")
    return paths


class Scenario:
    def __init__(self, keyhost_bin, tmp_path):
        self.bin, self.dir = keyhost_bin, tmp_path
        self.env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "ISSUER": ISSUER}
        if "KEYHOST_STDLIB" in os.environ:
            self.env["KEYHOST_STDLIB"] = os.environ["KEYHOST_STDLIB"]
        self.vars = {}
        self.outputs = {}

    def kh(self, line):
        args = shlex.split(string.Template(line).substitute(self.vars))
        return subprocess.run([self.bin, *args], capture_output=True, text=True, timeout=300, env=self.env, cwd=self.dir)

    def ok(self, line):
        out = self.kh(line)
        assert out.returncode == 0, f"{line}: {out.stderr}"
        return out

    def doc(self, line, status=0):
        """Runs a documented command (`keyhost ` left out) and keeps its JSON."""
        out = self.kh(line)
        assert out.returncode == status, f"{line}: exit {out.returncode}: {out.stderr}"
        if "-o " in line or "--output " in line:
            assert out.stderr == "", f"{line}: --json prints no note, its document says it: {out.stderr!r}"
        self.outputs[line] = json.loads(out.stdout)
        return self.outputs[line]

    def error(self, line, kind, status=1):
        out = self.kh(line)
        assert out.returncode == status, f"{line}: exit {out.returncode}: {out.stderr}"
        assert out.stdout == ""
        error = json.loads(out.stderr)["error"]
        assert error["kind"] == kind, error
        return error

    def path(self, name):
        return self.dir / name


def run_scenario(s):
    (s.path("voucher.lua")).write_text(VOUCHER)
    s.vars["ALICE"] = s.doc("token wallet init --wallet alice.db --json")["holder"]
    s.vars["BOB"] = json.loads(s.ok("token wallet init --wallet bob.db --json").stdout)["holder"]
    s.vars["CAROL"] = json.loads(s.ok("token wallet init --wallet carol.db --json").stdout)["holder"]

    issued = s.doc("token issue --program keyhost.cash --value 100 --unit EUR-cent --to $ALICE --issuer-key-env ISSUER "
                   "-o cash100.tok --json")
    s.vars["X"], s.vars["CASH100"] = issued["issuer"], issued["id"][:8]
    assert issued["file"] == "cash100.tok"
    # Without --json: the note goes to standard error, without the error prefix.
    out = s.ok("token issue --program keyhost.cash --value 50 --unit EUR-cent --to $ALICE --issuer-key-env ISSUER -o cash50.tok")
    assert out.stdout == "" and out.stderr.startswith("issued token ") and "into cash50.tok" in out.stderr
    assert not out.stderr.startswith("keyhost:")
    for name in ("cash100.tok", "cash50.tok"):
        assert stat.S_IMODE(os.stat(s.path(name)).st_mode) == 0o600
    s.path("withdrawal.tok").write_text(s.path("cash100.tok").read_text() + s.path("cash50.tok").read_text())

    # Never over an existing file: file_exists, and the file keeps its bytes; write_failed when it cannot be made.
    before = s.path("cash100.tok").read_bytes()
    s.error("token issue --program keyhost.cash --value 100 --unit EUR-cent --to $ALICE --issuer-key-env ISSUER "
            "-o cash100.tok --json", "file_exists")
    assert s.path("cash100.tok").read_bytes() == before
    s.error("token issue --program keyhost.cash --value 1 --unit EUR-cent --to $ALICE --issuer-key-env ISSUER "
            "-o missing/t.tok --json", "write_failed")

    imported = s.doc("token import --wallet alice.db withdrawal.tok --json")
    s.vars["CASH50"] = [row["id"] for row in imported["imported"] if not row["id"].startswith(s.vars["CASH100"])][0][:8]
    # A copy of Alice's wallet before she pays: it spends the 100 again, a double spend the ledger catches.
    s.ok("token list --wallet alice.db")
    wal = s.path("alice.db-wal")
    assert not wal.exists() or wal.stat().st_size == 0
    s.path("alice-copy.db").write_bytes(s.path("alice.db").read_bytes())
    os.chmod(s.path("alice-copy.db"), 0o600)

    s.ok("token issue --program voucher.lua --value 500 --unit EUR-cent --to $CAROL --issuer-key-env ISSUER "
         "--expires 2099-12-31 --instruction-limit 1000000 --memory-limit 16 --time-limit 2 -o voucher.tok")
    s.ok("token import --wallet carol.db voucher.tok")
    inspected = s.doc("token inspect voucher.tok --wallet carol.db --json")
    s.vars["VOUCHER"] = inspected["tokens"][0]["id"][:8]
    s.doc("token trust $X --wallet carol.db --json")

    s.doc("token keys --wallet bob.db --count 2 --json")
    s.error("token keys --wallet bob.db --count 0 --json", "usage", status=64)
    s.doc("token request --wallet bob.db --amount 150 --unit EUR-cent --issuer $X --memo lunch -o request.txt --json")
    paid = s.doc("token pay --wallet alice.db request.txt -o payment.txt --json")
    assert paid["amount"] == 150
    received = s.doc("token receive --wallet bob.db payment.txt --json")
    assert received["complete"]
    s.doc("token list --wallet alice.db --json")
    s.ok("token request --wallet carol.db --amount 1000 --unit EUR-cent --issuer $X -o big.txt")
    s.error("token pay --wallet bob.db big.txt --json", "insufficient")

    ran = s.doc("token run --wallet carol.db $VOUCHER --arg 'shop=bakery on the corner' --receipt receipt.txt --json")
    assert ran["effects"][0]["shop"] == "bakery on the corner"
    assert stat.S_IMODE(os.stat(s.path("receipt.txt")).st_mode) == 0o600
    s.error("token run --wallet carol.db $VOUCHER --arg shop=again --json", "already_spent")
    s.error("token run --wallet carol.db ffff --json", "not_found")
    s.doc("token receipt --wallet carol.db $VOUCHER -o receipt-copy.txt --json")
    assert s.path("receipt-copy.txt").read_text() == s.path("receipt.txt").read_text()
    s.doc("token verify-receipt receipt.txt --json")
    s.doc("token wallet info --wallet carol.db --json")

    chains = s.doc("token deposit-chains --wallet bob.db $CASH100 $CASH50 -o chains.txt --json")
    assert len(chains["chains"]) == 2
    results = s.doc("token deposit chains.txt --ledger sqlite:ledger.db --issuer $X --json")["results"]
    assert [r["result"] for r in results] == ["accepted", "accepted"]
    caught = s.doc("token deposit $CASH100 --wallet alice-copy.db --ledger sqlite:ledger.db --issuer $X --proofs proofs --json",
                   status=1)["results"]
    assert [r["result"] for r in caught] == ["double_spend"] and caught[0]["signer"] == s.vars["ALICE"]
    s.vars["PROOF"] = caught[0]["proof_file"]
    assert s.vars["PROOF"].startswith("proofs/") and s.vars["PROOF"].endswith(".khproof")
    assert s.doc("token verify-proof $PROOF --json")["signer"] == s.vars["ALICE"]
    s.doc("token ledger stats --db sqlite:ledger.db --json")
    return s


@pytest.fixture
def scenario(keyhost_bin, tmp_path):
    return run_scenario(Scenario(keyhost_bin, tmp_path))


def test_every_documented_token_command_prints_the_documented_keys(scenario):
    docs = documented()
    assert set(docs) == set(scenario.outputs), (
        f"documented but not run: {sorted(set(docs) - set(scenario.outputs))}; "
        f"run but not documented: {sorted(set(scenario.outputs) - set(docs))}")
    differences = []
    for command, example in docs.items():
        real, shown = key_paths(scenario.outputs[command]), key_paths(example)
        if real != shown:
            differences.append(f"keyhost {command}: keys only in the output {sorted(real - shown)}, "
                               f"only in the doc {sorted(shown - real)}")
    assert not differences, "\n".join(differences)


def test_the_section_lists_the_error_kinds_the_scenario_meets(scenario):
    text = section()
    for kind in ("file_exists", "write_failed", "usage", "insufficient", "already_spent", "not_found"):
        assert f"`{kind}`" in text, f"error kind {kind} is not in the section"


def test_key_paths_see_renamed_and_new_keys():
    base = {"a": 1, "b": [{"c": 2}], "d": {"e": None}}
    assert key_paths(base) == {"a", "b", "b[].c", "d", "d.e"}
    assert key_paths({**base, "f": 0}) != key_paths(base)
    assert key_paths({"a": 1, "b": [{"c2": 2}], "d": {"e": None}}) != key_paths(base)
