"""SHA-256 from Python's hashlib. Input lines: the message in hex (- for empty); output: its digest in hex."""
import hashlib
import sys

for line in sys.stdin:
    message = line.strip()
    print(hashlib.sha256(b"" if message == "-" else bytes.fromhex(message)).hexdigest())
