#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""sidecar.py: timing sidecars (docs/formats.md section 3.2) read and
written with Python's own zlib, an oracle for the tests that is none of
bach's code.

  sidecar.py entries FILE    its entries, one a line ("-" for 2^64 - 1,
                             no time): every gzip member that is whole, in
                             order; a member a crash cut short ends it
  sidecar.py write FILE HZ   the entries on standard input (one a line,
                             "-" none) as a blocked sidecar: members of
                             8160 entries, each with the BC and BT (HZ)
                             subfields, then the EOF block
  sidecar.py offsets FILE    the byte offset of each member
  sidecar.py crc32 FILE      zlib's CRC-32 of the whole file, 8 hex digits
"""
import struct
import sys
import zlib

NONE = 2**64 - 1
PER_MEMBER = 8160
EOF = bytes.fromhex("1f8b08040000000000ff0600424302001b0003000000000000000000")


def members(data):
    """(offset, decoded bytes) of each whole member, in order."""
    off = 0
    while off < len(data):
        d = zlib.decompressobj(31)
        try:
            out = d.decompress(data[off:])
        except zlib.error:
            return
        if not d.eof:
            return  # cut short
        yield off, out
        off = len(data) - len(d.unused_data)


def entries(data):
    raw = b"".join(m for _, m in members(data))
    return struct.unpack("<%dQ" % (len(raw) // 8), raw[:len(raw) // 8 * 8])


def member(raw, hz):
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    body = c.compress(raw) + c.flush()
    extra = b"BC" + struct.pack("<HH", 2, 0) + b"BT" + struct.pack("<HQ", 8, hz)
    head = bytes.fromhex("1f8b08040000000000ff") + struct.pack("<H", len(extra))
    tail = struct.pack("<II", zlib.crc32(raw), len(raw))
    m = bytearray(head + extra + body + tail)
    struct.pack_into("<H", m, 16, len(m) - 1)  # BSIZE
    return bytes(m)


def main():
    cmd, path = sys.argv[1], sys.argv[2]
    if cmd == "write":
        hz = int(sys.argv[3])
        e = [NONE if l.strip() == "-" else int(l) for l in sys.stdin if l.strip()]
        with open(path, "wb") as f:
            for i in range(0, len(e), PER_MEMBER):
                f.write(member(struct.pack("<%dQ" % len(e[i:i + PER_MEMBER]),
                                           *e[i:i + PER_MEMBER]), hz))
            f.write(EOF)
        return
    data = open(path, "rb").read()
    if cmd == "entries":
        sys.stdout.write("".join("-\n" if v == NONE else "%d\n" % v
                                 for v in entries(data)))
    elif cmd == "offsets":
        sys.stdout.write("".join("%d\n" % o for o, _ in members(data)))
    elif cmd == "crc32":
        print("%08x" % zlib.crc32(data))
    else:
        sys.exit("sidecar.py: unknown command " + cmd)


main()
