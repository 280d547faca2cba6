"""docs/cli-lua.md maps every leaf command of the CLI to the Lua that does the same; this keeps it true.

- The leaves come from `keyhost --experimental-dump-help`: each must be a row of the table or an entry of the
  "Front-end plumbing" list, and every row and entry must still be a command.
- Every leaf takes `--json`, unless it is plumbing.
- The entry point each row names (the first backquoted `module.function` of its Lua cell, the convention at
  the top of docs/cli-lua.md) must be a function of `require "keyhost.<module>"`, checked in one `keyhost eval`.
- A row whose Lua cell is `—` is a command with no Lua equivalent: it must be in KNOWN_GAPS, and KNOWN_GAPS
  must hold nothing else.

No network, no clock: the binary is asked about its own commands and modules only.
"""
import json
import os
import pathlib
import re
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "cli-lua.md"

# The short names the Lua column uses, and the module each stands for.
MODULES = {
    name: f"keyhost.{name}"
    for name in ("card", "hd", "ec", "hash", "address", "coins", "eth", "psbt", "descriptor", "token", "discovery", "hex", "json")
}

# Commands with no Lua equivalent today (Lua cell "—"). This set may only shrink: closing a gap means a Lua
# call in the table and the command's removal from here; a new command without Lua is a product bug, not an
# entry to add.
KNOWN_GAPS: set[str] = set()

GAP = "—"
ENTRY = re.compile(r"^([a-z_]+)((?:\.[A-Za-z_][A-Za-z0-9_]*)+)")
CELL_SPLIT = re.compile(r"(?<!\\)\|")


def doc_text():
    return DOC.read_text(encoding="utf-8")


def table_rows():
    """{command: (lua cell, notes cell)} of the mapping table; a command twice is an error."""
    rows, seen = {}, []
    for line in doc_text().splitlines():
        if not line.startswith("| `keyhost"):
            continue
        cells = [c.strip() for c in CELL_SPLIT.split(line.strip())[1:-1]]
        assert len(cells) == 3, f"docs/cli-lua.md: a row needs 3 cells (command, Lua, notes): {line}"
        command = cells[0].strip("`")
        seen.append(command)
        rows[command] = (cells[1], cells[2])
    duplicates = sorted({c for c in seen if seen.count(c) > 1})
    assert not duplicates, f"docs/cli-lua.md lists these commands twice: {duplicates}"
    return rows


def plumbing():
    """The commands of the "Front-end plumbing" list."""
    section = re.search(r"^## Front-end plumbing.*?$(.*?)(?=^## |\Z)", doc_text(), re.S | re.M)
    assert section, "docs/cli-lua.md has no '## Front-end plumbing' section"
    return set(re.findall(r"^- `(keyhost[^`]*)`", section.group(1), re.M))


def leaves(keyhost_bin):
    """{"keyhost card info": takes --json, …} for every command without subcommands."""
    out = subprocess.run([keyhost_bin, "--experimental-dump-help"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    found = {}

    def walk(command, path):
        subcommands = command.get("subcommands") or []
        if not subcommands:
            names = {n.get("name") for a in command.get("arguments") or [] for n in a.get("names") or []}
            found[" ".join(path)] = "json" in names
        for sub in subcommands:
            walk(sub, path + [sub["commandName"]])

    walk(json.loads(out.stdout)["command"], ["keyhost"])
    return found


def entry_point(lua_cell):
    """`card.open` from "`card.open{…}` then `s:info()`": the first backquoted span's leading dotted name."""
    spans = re.findall(r"`([^`]*)`", lua_cell)
    if not spans:
        return None
    m = ENTRY.match(spans[0])
    return m.group(0) if m and m.group(1) in MODULES else None


def test_every_leaf_is_in_the_table_or_plumbing(keyhost_bin):
    cli = set(leaves(keyhost_bin))
    rows, front = set(table_rows()), plumbing()
    assert not rows & front, f"both in the table and in the plumbing list: {sorted(rows & front)}"
    missing = cli - rows - front
    assert not missing, f"leaf commands missing from docs/cli-lua.md: {sorted(missing)}"
    gone = (rows | front) - cli
    assert not gone, f"docs/cli-lua.md lists commands the CLI no longer has: {sorted(gone)}"


def test_every_leaf_but_plumbing_takes_json(keyhost_bin):
    front = plumbing()
    without = sorted(c for c, has_json in leaves(keyhost_bin).items() if not has_json and c not in front)
    assert not without, f"leaf commands without --json (add it, or list them as plumbing with why): {without}"


def test_gaps_are_exactly_the_known_ones():
    rows = table_rows()
    gaps = {c for c, (lua, _) in rows.items() if lua == GAP}
    new = gaps - KNOWN_GAPS
    assert not new, f"commands without a Lua equivalent that KNOWN_GAPS does not list (give them Lua): {sorted(new)}"
    closed = KNOWN_GAPS - gaps
    assert not closed, f"KNOWN_GAPS entries that now have Lua, or are gone: remove them from the set: {sorted(closed)}"


def test_every_row_names_a_lua_entry_point_that_exists(keyhost_bin):
    rows = table_rows()
    entries, bad = {}, []
    for command, (lua, _) in sorted(rows.items()):
        if lua == GAP:
            continue
        entry = entry_point(lua)
        if entry is None:
            bad.append(command)
        else:
            entries[command] = entry
    assert not bad, (f"rows whose Lua cell does not start with a backquoted `module.function` "
                     f"(modules: {sorted(MODULES)}): {bad}")
    names = sorted(set(entries.values()))
    checks = "\n".join(
        f'do local ok, m = pcall(require, "{MODULES[n.split(".")[0]]}")\n'
        f'  local v = ok and m\n'
        + "".join(f'  if type(v) == "table" then v = v["{part}"] else v = nil end\n' for part in n.split(".")[1:])
        + f'  out[#out + 1] = "{n}=" .. type(v) end'
        for n in names
    )
    chunk = f"local out = {{}}\n{checks}\nreturn table.concat(out, '\\n')"
    result = subprocess.run([keyhost_bin, "eval", "--raw", chunk], capture_output=True, text=True, timeout=120,
                            env=dict(os.environ))
    assert result.returncode == 0, result.stderr
    types = dict(line.split("=", 1) for line in result.stdout.split())
    assert set(types) == set(names), result.stdout
    missing = sorted(f"{c}: {e} is a {types[e]}" for c, e in entries.items() if types[e] != "function")
    assert not missing, f"Lua entry points in docs/cli-lua.md that are not functions: {missing}"


@pytest.mark.parametrize("cell, entry", [
    ("`card.open{reader=…}` then `s:info()`", "card.open"),
    ("`token.wallet.open(path)` then `w:run(id)`", "token.wallet.open"),
    ("`hd.from_mnemonic(phrase):derive(path):address{}`", "hd.from_mnemonic"),
    ("`s:info()`", None),
    ("`nosuch.thing()`", None),
    (GAP, None),
])
def test_entry_point_convention(cell, entry):
    assert entry_point(cell) == entry
