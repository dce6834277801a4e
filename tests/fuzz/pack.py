#!/usr/bin/env python3
"""pack.py DIR OUT: pack the files under DIR into one fuzz input (the container of
tests/fuzz/fuzz.h: name length byte, name, 4-byte little-endian data length, data)."""
import os
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: pack.py DIR OUT")
    root, out = sys.argv[1], sys.argv[2]
    blob = bytearray()
    for base, dirs, files in sorted(os.walk(root)):
        dirs.sort()
        for f in sorted(files):
            path = os.path.join(base, f)
            name = os.path.relpath(path, root).encode()
            data = open(path, "rb").read()
            if len(name) > 255:
                sys.exit(f"pack.py: {path}: name longer than 255 bytes")
            blob += bytes([len(name)]) + name + len(data).to_bytes(4, "little") + data
    open(out, "wb").write(blob)


if __name__ == "__main__":
    main()
