#!/usr/bin/env python3
"""Split recorded netlink dumps (tests/data/*/*.nl) into one message per file: a fuzz corpus."""
import os
import struct
import sys

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
for path in sys.argv[2:]:
    data = open(path, "rb").read()
    off = n = 0
    while off + 16 <= len(data):
        (length,) = struct.unpack_from("=I", data, off)
        if length < 16 or off + length > len(data):
            break
        name = "%s-%s-%d" % (os.path.basename(os.path.dirname(path)), os.path.basename(path), n)
        with open(os.path.join(out, name), "wb") as f:
            f.write(data[off:off + length])
        off += (length + 3) & ~3
        n += 1
