#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""sidecar.py: timing sidecars (docs/formats.md section 3.2) read and
written with Python's own zlib, an oracle for the tests that is none of
bach's code.

  sidecar.py entries FILE    its entries, one a line ("-" for 2^64 - 1,
                             no time): every gzip member that is whole, in
                             order; a member a crash cut short ends it
  sidecar.py write FILE HZ [V]
                             the entries on standard input (one a line,
                             "-" none) as a blocked sidecar: members of
                             8160 entries, each with the BC and BT (HZ)
                             subfields, then the EOF block; version V
                             (default 2: varints of the differences and
                             a TE subfield of encoding 1; runs: runs of
                             equal differences, TE encoding 2, what bach
                             writes; 1: u64s)
  sidecar.py offsets FILE    the byte offset of each member
  sidecar.py crc32 FILE      zlib's CRC-32 of the whole file, 8 hex digits
"""
import struct
import sys
import zlib

NONE = 2**64 - 1
PER_MEMBER = 8160
EOF = bytes.fromhex("1f8b08040000000000ff0600424302001b0003000000000000000000")


def subfields(data, off):
    """The extra field's subfields of the gzip member at off: {id: bytes}."""
    xlen = struct.unpack_from("<H", data, off + 10)[0]
    x, i, out = data[off + 12:off + 12 + xlen], 0, {}
    while i + 4 <= len(x):
        slen = struct.unpack_from("<H", x, i + 2)[0]
        out[x[i:i + 2]] = x[i + 4:i + 4 + slen]
        i += 4 + slen
    return out


def members(data):
    """(offset, decoded bytes, TE subfield or None) of each whole member,
    in order."""
    off = 0
    while off < len(data):
        d = zlib.decompressobj(31)
        try:
            out = d.decompress(data[off:])
        except zlib.error:
            return
        if not d.eof:
            return  # cut short
        yield off, out, subfields(data, off).get(b"TE")
        off = len(data) - len(d.unused_data)


def varint(raw, i):
    """The unsigned LEB128 varint at raw[i]: (value, index after it)."""
    z = sh = 0
    while True:
        b = raw[i]
        i += 1
        z |= (b & 0x7F) << sh
        sh += 7
        if b < 0x80:
            return z, i


def varints(raw, n, enc):
    """Version 2: the n entries, each the difference from the entry
    before (mod 2^64, from 0 at the member's start), zigzag-mapped:
    encoding 1, one LEB128 varint an entry; encoding 2, runs: such a
    varint, then a varint count of entries that differ by it."""
    out, v, i = [], 0, 0
    while len(out) < n:
        z, i = varint(raw, i)
        k = 1
        if enc == 2:
            k, i = varint(raw, i)
            if not 1 <= k <= n - len(out):
                raise ValueError("member data has a run of %d" % k)
        for _ in range(k):
            v = (v + ((z >> 1) ^ -(z & 1))) % 2**64
            out.append(v)
    if i != len(raw):
        raise ValueError("member data is not its TE's entries")
    return out


def entries(data):
    out = []
    for _, raw, te in members(data):
        if te is None:
            out += struct.unpack("<%dQ" % (len(raw) // 8), raw[:len(raw) // 8 * 8])
        elif len(raw):
            assert te[0] in (1, 2), "TE encoding %d" % te[0]
            out += varints(raw, struct.unpack_from("<H", te, 1)[0], te[0])
    return out


def put_varint(raw, z):
    while z >= 0x80:
        raw.append(z & 0x7F | 0x80)
        z >>= 7
    raw.append(z)


def encode(e, version):
    if version == "1":
        return struct.pack("<%dQ" % len(e), *e), b""
    raw, prev, zs = bytearray(), 0, []
    for v in e:
        d = (v - prev) % 2**64
        zs.append(((d << 1) ^ (-1 if d >> 63 else 0)) % 2**64)
        prev = v
    if version == "runs":
        i = 0
        while i < len(zs):
            j = i + 1
            while j < len(zs) and zs[j] == zs[i]:
                j += 1
            put_varint(raw, zs[i])
            put_varint(raw, j - i)
            i = j
        return bytes(raw), b"TE" + struct.pack("<HBH", 3, 2, len(e))
    for z in zs:
        put_varint(raw, z)
    return bytes(raw), b"TE" + struct.pack("<HBH", 3, 1, len(e))


def member(raw, hz, te=b""):
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    body = c.compress(raw) + c.flush()
    extra = b"BC" + struct.pack("<HH", 2, 0) + b"BT" + struct.pack("<HQ", 8, hz) + te
    head = bytes.fromhex("1f8b08040000000000ff") + struct.pack("<H", len(extra))
    tail = struct.pack("<II", zlib.crc32(raw), len(raw))
    m = bytearray(head + extra + body + tail)
    struct.pack_into("<H", m, 16, len(m) - 1)  # BSIZE
    return bytes(m)


def main():
    cmd, path = sys.argv[1], sys.argv[2]
    if cmd == "write":
        hz = int(sys.argv[3])
        version = sys.argv[4] if len(sys.argv) > 4 else "2"
        e = [NONE if l.strip() == "-" else int(l) for l in sys.stdin if l.strip()]
        with open(path, "wb") as f:
            for i in range(0, len(e), PER_MEMBER):
                raw, te = encode(e[i:i + PER_MEMBER], version)
                f.write(member(raw, hz, te))
            f.write(EOF)
        return
    data = open(path, "rb").read()
    if cmd == "entries":
        sys.stdout.write("".join("-\n" if v == NONE else "%d\n" % v
                                 for v in entries(data)))
    elif cmd == "offsets":
        sys.stdout.write("".join("%d\n" % o for o, _, _ in members(data)))
    elif cmd == "crc32":
        print("%08x" % zlib.crc32(data))
    else:
        sys.exit("sidecar.py: unknown command " + cmd)


main()
