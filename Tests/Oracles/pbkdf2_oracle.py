"""PBKDF2-HMAC from Python's hashlib. Input lines: hash password_hex salt_hex iterations length (- for empty);
output: the derived key in hex, one line each."""
import hashlib
import sys

for line in sys.stdin:
    name, password, salt, iterations, length = line.split()
    password, salt = ("" if password == "-" else password), ("" if salt == "-" else salt)
    key = hashlib.pbkdf2_hmac(name, bytes.fromhex(password), bytes.fromhex(salt), int(iterations), int(length))
    print(key.hex())
