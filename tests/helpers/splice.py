#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""splice.py IN OUT EVERY: copy the records of IN (raw .byu) to OUT with a
gap marker (control 0f, address = records said lost) after every EVERY
records, and a tail of records the analyses must treat with care: every
BE# shape, the non-cacheable types, I/O, special and interrupt-acknowledge
cycles, an INVALID record that is no gap marker, and references at the top
of the 4 GiB space."""
import sys

TAIL = [
    (0x04016A08, 0x3F, 0x90),  # NC_I_FETCH bytes 6..7
    (0x04016A10, 0xFE, 0x80),  # I_FETCH byte 0
    (0x00001000, 0x0F, 0xD0),  # NC_D_READ bytes 4..7
    (0x00001000, 0x00, 0xC0),  # D_READ all
    (0x00002000, 0xF0, 0xF0),  # D_WRITE bytes 0..3
    (0x00003000, 0x00, 0xE0),  # WRITE_BACK all
    (0x000003F8, 0xFE, 0x50),  # IO_READ
    (0x00000CF8, 0x0F, 0x70),  # IO_WRITE
    (0x00000000, 0xFE, 0x10),  # INT_ACK
    (0x00000000, 0xFB, 0x30),  # SPECIAL halt
    (0x12345678, 0x00, 0x60),  # INVALID type 6, not a gap marker
    (0xFFFFFFF8, 0x7E, 0xD0),  # bytes 0 and 7 only
    (0xFFFFFFF8, 0x00, 0xF0),  # the last quadword, written
    (0x00004000, 0xFF, 0xF0),  # BE# ff: the whole quadword
    (0x00000008, 0xEF, 0xD0),  # byte 4
    (0x00003000, 0x00, 0xE0),  # WRITE_BACK again
]


def rec(addr, be, ctl):
    return addr.to_bytes(4, "big") + bytes([be, ctl])


def main():
    src, dst, every = sys.argv[1], sys.argv[2], int(sys.argv[3])
    data = open(src, "rb").read()
    out = bytearray()
    for i in range(0, len(data), 6):
        out += data[i:i + 6]
        if (i // 6 + 1) % every == 0:
            out += rec(5, 0xFF, 0x0F)
    for r in TAIL:
        out += rec(*r)
    open(dst, "wb").write(out)


if __name__ == "__main__":
    main()
