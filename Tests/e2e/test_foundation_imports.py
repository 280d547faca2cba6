"""No module linked into keyhost imports Foundation proper.

Why: the static keyhost links ICU's data (32 MiB) as soon as one of its modules uses Foundation beyond
FoundationEssentials. Modules import FoundationEssentials instead; `import Foundation` is allowed only as the
macOS fallback in `#if canImport(FoundationEssentials) … #else import Foundation #endif`.

This scans sources, so it is cheap and names the file, but it cannot see a use that leaks in through another
module's import: MemberImportVisibility (Package.swift) turns those into compile errors, and the symbol check in
docs/startup-and-size.md (`nm -u … | grep 10Foundation`) is the final word.
"""
import pathlib
import re

import pytest

SOURCES = pathlib.Path(__file__).resolve().parents[2] / "Sources"

# Not linked into keyhost: benchmarks, and keyhost-ledger with the ledger's HTTP service and PostgreSQL store
# (a program of its own, which keyhost execs or runs as a child).
NOT_IN_KEYHOST = {"keyhost-bench", "keyhost-token-bench", "keyhost-ledger-bench", "keyhost-ledger", "KeyhostLedgerServer",
                  "KeyhostLedgerPostgres", "KeyhostLedgerDeadline"}

IMPORT = re.compile(r"^\s*(@\w+\s+)*((public|package|internal|fileprivate|private)\s+)?import\s+"
                    r"((typealias|struct|class|enum|protocol|let|var|func)\s+)?Foundation(Networking|XML)?(\.\S+)?\s*(//.*)?$")


def plain_foundation_imports(path):
    """Line numbers of Foundation imports outside the `#else` of `#if canImport(FoundationEssentials)`."""
    found = []
    stack = []  # per open #if: [is the FoundationEssentials check, in its #else branch]
    for number, line in enumerate(path.read_text().splitlines(), 1):
        directive = line.strip()
        if directive.startswith("#if"):
            stack.append([directive.replace(" ", "") == "#ifcanImport(FoundationEssentials)", False])
        elif directive.startswith("#elseif") and stack:
            stack[-1] = [False, False]
        elif directive.startswith("#else") and stack:
            stack[-1][1] = True
        elif directive.startswith("#endif") and stack:
            stack.pop()
        elif IMPORT.match(line) and not (stack and stack[-1] == [True, True]):
            found.append(number)
    return found


def owner(path):
    """The allow-list entry that covers `path` (relative to Sources), if any."""
    relative = path.relative_to(SOURCES).as_posix()
    for entry in NOT_IN_KEYHOST:
        if relative == entry or relative.startswith(entry + "/"):
            return entry
    return None


def test_the_scan_sees_the_sources():
    files = list(SOURCES.rglob("*.swift"))
    assert len(files) > 100
    assert plain_foundation_imports(SOURCES / "KeyhostCard" / "SoftKeycard" / "SoftKeycardStore.swift") == []


def test_the_pattern_tells_foundation_from_foundation_essentials(tmp_path):
    sample = tmp_path / "Sample.swift"
    sample.write_text("\n".join([
        "import FoundationEssentials",           # fine
        "#if canImport(FoundationEssentials)",
        "import FoundationEssentials",
        "#else",
        "import Foundation",                     # fine: the macOS fallback
        "#endif",
        "import Foundation",                     # 7
        "@_exported import Foundation",          # 8
        "internal import Foundation",            # 9
        "import struct Foundation.Date",         # 10
        "import FoundationNetworking",           # 11
        "#if canImport(Glibc)",
        "#else",
        "import Foundation",                     # 14: not the FoundationEssentials fallback
        "#endif",
    ]) + "\n")
    assert plain_foundation_imports(sample) == [7, 8, 9, 10, 11, 14]


def test_no_module_linked_into_keyhost_imports_foundation():
    offenders = []
    for path in sorted(SOURCES.rglob("*.swift")):
        if owner(path) is None:
            offenders += [f"{path.relative_to(SOURCES)}:{n}" for n in plain_foundation_imports(path)]
    assert offenders == [], ("these files are linked into keyhost and import Foundation (ICU comes with it); "
                             "import FoundationEssentials as the other modules do: " + ", ".join(offenders))

