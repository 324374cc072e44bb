#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""png.py FILE X Y [X Y ...]: print the RGB of each pixel of an 8-bit RGB
or RGBA PNG (the PNG specification's filters undone here, with zlib), one
'r g b' line per point; first line 'W H'. No imaging library needed.
png.py FILE --count X0 Y0 X1 Y1: the pixels of that box that are not white.
png.py FILE --bbox X0 Y0 X1 Y1: the box (x0 y0 x1 y1, ends excluded) of
those pixels, or "none"""
import struct, sys, zlib

data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat, w = 8, b"", 0
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
        assert depth == 8 and ctype in (2, 6), (depth, ctype)
        bpp = 3 if ctype == 2 else 4
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
raw = zlib.decompress(idat)
stride = w * bpp
rows, prev = [], bytearray(stride)
for y in range(h):
    f = raw[y * (stride + 1)]
    line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b = prev[i]
        c = prev[i - bpp] if i >= bpp else 0
        if f == 1:
            line[i] = (line[i] + a) & 255
        elif f == 2:
            line[i] = (line[i] + b) & 255
        elif f == 3:
            line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    rows.append(line)
    prev = line
if len(sys.argv) > 2 and sys.argv[2] == "--bbox":
    x0, y0, x1, y1 = (int(v) for v in sys.argv[3:7])
    ink = [(x, y) for y in range(y0, y1) for x in range(x0, x1)
           if rows[y][x * bpp:x * bpp + 3] != b"\xff\xff\xff"]
    print(*(min(x for x, _ in ink), min(y for _, y in ink), max(x for x, _ in ink) + 1,
            max(y for _, y in ink) + 1) if ink else ["none"])
    sys.exit(0)
if len(sys.argv) > 2 and sys.argv[2] == "--count":
    x0, y0, x1, y1 = (int(v) for v in sys.argv[3:7])
    print(sum(1 for y in range(y0, y1) for x in range(x0, x1)
              if rows[y][x * bpp:x * bpp + 3] != b"\xff\xff\xff"))
    sys.exit(0)
print(w, h)
args = [int(v) for v in sys.argv[2:]]
for x, y in zip(args[::2], args[1::2]):
    print(*rows[y][x * bpp:x * bpp + 3])
