"""NFKD test cases from Python's unicodedata, the oracle for keyhost's own NFKD (NFKD.swift).

Prints one line per case: the input code points in hex, a tab, the NFKD of the input in hex.
Cases: every code point assigned in Python's Unicode version on its own, then random strings
(seeded, reproducible) drawn from all assigned code points, combining marks, code points with a
decomposition (compatibility and canonical), Hangul syllables and conjoining jamo, and ASCII.

Usage: nfkd_oracle.py [RANDOM_CASES]
"""
import random
import sys
import unicodedata as ud


def main():
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    assigned = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF and ud.category(chr(c)) != "Cn"]
    marks = [c for c in assigned if ud.combining(chr(c))]
    decomposing = [c for c in assigned if ud.decomposition(chr(c))]
    hangul = list(range(0xAC00, 0xD7A4)) + list(range(0x1100, 0x1200))
    ascii_ = list(range(0x20, 0x7F))
    pools = [assigned, marks, decomposing, hangul, ascii_]
    rng = random.Random(0x6E666B64)  # "nfkd"
    cases = [[c] for c in assigned]
    for _ in range(count):
        cases.append([rng.choice(rng.choice(pools)) for _ in range(rng.randint(1, 12))])
    out = sys.stdout
    out.write("# unicode %s\n" % ud.unidata_version)
    for case in cases:
        expected = ud.normalize("NFKD", "".join(map(chr, case)))
        out.write("%s\t%s\n" % (" ".join("%X" % c for c in case), " ".join("%X" % ord(c) for c in expected)))


if __name__ == "__main__":
    main()
