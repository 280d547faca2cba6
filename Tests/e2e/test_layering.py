"""The layers keyhost's modules stack in, read from Package.swift and the `import` lines under Sources/.

Why: the card logic both front ends share lives in KeyhostServices, which knows no Lua; the Lua binding
(KeyhostBindings) and the command line (keyhost) sit on top of it. Without a check, a convenient `import` puts Lua
back under the command line or the services under a domain module, and nothing else would notice. The command
line's files that still import KeyhostBindings are an allow-list that may only shrink: the ones that run Lua, and
those whose binding types have not moved to a service yet (issue 20).
"""
import pathlib
import re

REPO = pathlib.Path(__file__).resolve().parents[2]
SOURCES = REPO / "Sources"

SERVICES = "KeyhostServices"
LUA_MODULES = {"LuaRuntime", "KeyhostBindings", "CLua", "CKeyhostLua"}
# The only targets above the services: the Lua binding and the executable (test targets are not checked).
ABOVE_SERVICES = {"KeyhostBindings", "keyhost"}

# Files of the keyhost executable that import KeyhostBindings, relative to Sources/keyhost. Remove a file from this
# list when it no longer needs the binding; never add one (put what it needs in a service instead).
CLI_BINDINGS_ALLOWED = {
    # They run Lua: run, eval, repl, -e.
    "Host.swift",
    "REPL/Repl.swift",
    "VersionText.swift",
    # discover's `--source lua:SCRIPT` runs Lua.
    "DiscoverLuaSource.swift",
}

TARGET = re.compile(r"\.(target|executableTarget|testTarget)\(\s*name:\s*\"([^\"]+)\"")
IMPORT = re.compile(r"^\s*(@\w+(\([^)]*\))?\s+)*((public|package|internal|fileprivate|private)\s+)?import\s+"
                    r"((typealias|struct|class|enum|protocol|let|var|func)\s+)?(\w+)")


def targets(package_text):
    """{name: (kind, set of quoted names in its declaration)} for every target of Package.swift."""
    found = list(TARGET.finditer(package_text))
    result = {}
    for i, match in enumerate(found):
        end = found[i + 1].start() if i + 1 < len(found) else len(package_text)
        declaration = package_text[match.end():end]
        result[match.group(2)] = (match.group(1), set(re.findall(r"\"([^\"]+)\"", declaration)))
    return result


def imports(path):
    """The modules a Swift file imports."""
    modules = set()
    for line in path.read_text().splitlines():
        match = IMPORT.match(line)
        if match:
            modules.add(match.group(7))
    return modules


def importers(folder, module):
    """Files under `folder` (relative to it, sorted) that import `module`."""
    return sorted(path.relative_to(folder).as_posix() for path in folder.rglob("*.swift") if module in imports(path))


def test_the_scans_see_the_package():
    declared = targets((REPO / "Package.swift").read_text())
    assert SERVICES in declared and "KeyhostBindings" in declared and "keyhost" in declared
    assert "LuaRuntime" in declared["KeyhostBindings"][1]
    assert "KeyhostBindings" in imports(SOURCES / "keyhost" / "Host.swift")


def test_services_know_no_lua():
    declared = targets((REPO / "Package.swift").read_text())
    assert declared[SERVICES][1] & LUA_MODULES == set(), "KeyhostServices must not depend on Lua modules"
    offenders = [f"{path.relative_to(SOURCES)} imports {sorted(imports(path) & LUA_MODULES)}"
                 for path in sorted((SOURCES / SERVICES).rglob("*.swift")) if imports(path) & LUA_MODULES]
    assert offenders == [], "the services must not see Lua; move Lua conversions to KeyhostBindings: " + ", ".join(offenders)


def test_only_the_front_ends_sit_on_the_services():
    declared = targets((REPO / "Package.swift").read_text())
    offenders = []
    for name, (kind, names) in declared.items():
        if kind == "testTarget" or name in ABOVE_SERVICES or name == SERVICES:
            continue
        if SERVICES in names:
            offenders.append(f"{name} (Package.swift)")
        folder = SOURCES / name
        if folder.is_dir():
            offenders += [f"{name}/{path}" for path in importers(folder, SERVICES)]
    assert offenders == [], "domain modules must not import KeyhostServices (it builds on them): " + ", ".join(offenders)


def test_the_command_line_imports_the_lua_binding_only_where_allowed():
    found = set(importers(SOURCES / "keyhost", "KeyhostBindings"))
    added = sorted(found - CLI_BINDINGS_ALLOWED)
    assert added == [], ("these command-line files import KeyhostBindings but are not on the allow-list; take what they need "
                         "from KeyhostServices (or move it there) instead: " + ", ".join(added))
    gone = sorted(CLI_BINDINGS_ALLOWED - found)
    assert gone == [], "these files no longer import KeyhostBindings: remove them from CLI_BINDINGS_ALLOWED: " + ", ".join(gone)


def test_the_import_scan_reads_the_forms_swift_allows(tmp_path):
    sample = tmp_path / "Sample.swift"
    sample.write_text("\n".join([
        "import KeyhostBindings",
        "@testable import KeyhostServices",
        "internal import LuaRuntime",
        "@_spi(Testing) public import CLua",
        "import struct KeyhostRecord.Record",
        "// import KeyhostWallet",
        "let text = \"import KeyhostTokens\"",
    ]) + "\n")
    assert imports(sample) == {"KeyhostBindings", "KeyhostServices", "LuaRuntime", "CLua", "KeyhostRecord"}


def layout_table_names(readme_text):
    """Every module a row of README's layout table (`| folder | what |`) names: `Sources/X` or a bare `CName`."""
    lines = readme_text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.replace(" ", "") == "|folder|what|")
    names = set()
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        first_cell = line.split("|")[1]
        names |= {ticked.rstrip("/").split("/")[-1] for ticked in re.findall(r"`([^`]+)`", first_cell)}
    return names


def test_readme_layout_names_every_target():
    # Every folder under Sources/ is a target (C wrappers declared through helper functions included); test support
    # lives under Tests/ and is covered by the `Tests` row.
    product = sorted(path.name for path in SOURCES.iterdir() if path.is_dir())
    assert "CSQLite" in product and "keyhost" in product
    named = layout_table_names((REPO / "README.md").read_text())
    missing = [name for name in product if name not in named]
    assert missing == [], "README's layout table (| folder | what |) does not name these targets; add a row: " + ", ".join(missing)


def test_the_layout_scan_reads_the_table():
    sample = "\n".join([
        "| folder | what |",
        "|---|---|",
        "| `Sources/CLua`, `CSecp256k1` | C |",
        "| `Sources/keyhost` | the `KeyhostNotAFolder` CLI |",
        "",
        "| `Sources/After` | not in the table |",
    ])
    assert layout_table_names(sample) == {"CLua", "CSecp256k1", "keyhost"}


# The files of KeyhostServices that may word things for a front end: the card's wording for each front end (hints,
# secret sources, defaults) and the variables the services read on their own. Anything else in the services is
# shared by both front ends, so it must not name a command, an option or a variable of one of them.
SERVICES_WORDING = {"Card/CardFrontEnd.swift", "EnvironmentNames.swift"}
STRING_LITERAL = re.compile(r'"(?:[^"\\\n]|\\.)*"')
CLI_WORDS = re.compile(r"keyhost [a-z]|(?<![\w-])--[a-z]|KEYHOST_[A-Z]")


def front_end_words(swift_text):
    """The string literals of a Swift file (comments left out) that name a keyhost command, option or variable."""
    found = []
    for line in swift_text.splitlines():
        code = line.split("//", 1)[0] if line.lstrip().startswith("//") else line
        for literal in STRING_LITERAL.findall(code):
            if CLI_WORDS.search(literal):
                found.append(literal)
    return found


def test_the_services_word_nothing_for_one_front_end():
    offenders = []
    for path in sorted((SOURCES / SERVICES).rglob("*.swift")):
        relative = path.relative_to(SOURCES / SERVICES).as_posix()
        if relative in SERVICES_WORDING:
            continue
        offenders += [f"{relative}: {literal}" for literal in front_end_words(path.read_text())]
    assert offenders == [], ("KeyhostServices is shared by Lua and the command line; put front-end wording in "
                             + " or ".join(sorted(SERVICES_WORDING)) + " (or pass it in): " + "; ".join(offenders))
    assert all((SOURCES / SERVICES / name).is_file() for name in SERVICES_WORDING)


def test_the_wording_scan_reads_literals_not_comments():
    sample = "\n".join([
        '/// Run `keyhost card init --reader virtual` first.',
        'let a = "set KEYHOST_PIN"  // keyhost card init',
        'let b = "the card; use --card-state FILE"',
        'let c = "keyhost \\(version)"',
        'let d = "m/84\'/0\'/0\' - a path -- not an option"',
    ])
    assert front_end_words(sample) == ['"set KEYHOST_PIN"', '"the card; use --card-state FILE"']
