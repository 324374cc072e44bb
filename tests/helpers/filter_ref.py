#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""filter_ref.py IN OUT IDX [--type LIST] [--addr LO-HI] [--port LO-HI]
[--range START:END]: the reference for bach's record filters
(docs/analysis.md, "Filters"), from the BYU record's bytes
(docs/formats.md section 1), not from bach: the records of the raw .byu IN
that the filters keep, to the raw .byu OUT, and their positions in IN, one
a line, to IDX."""
import sys

NAMES = {1: "INT_ACK", 3: "SPECIAL", 5: "IO_READ", 7: "IO_WRITE",
         8: "I_FETCH", 9: "NC_I_FETCH", 12: "D_READ", 13: "NC_D_READ",
         14: "WRITE_BACK", 15: "D_WRITE"}
INVALID = {0, 2, 4, 6, 10, 11}
GROUPS = {"fetch": {8, 9}, "read": {12, 13}, "write": {14, 15},
          "io": {5, 7}, "special": {1, 3}, "invalid": INVALID}
MEMORY = {8, 9, 12, 13, 14, 15}
IO = {5, 7}


def span(s):
    lo, hi = s.split("-")
    return int(lo, 0), int(hi, 0)


def main():
    src, out, idx = sys.argv[1:4]
    args = sys.argv[4:]
    types, addr, port, rng = None, None, None, (0, None)
    while args:
        opt, val = args[0], args[1]
        args = args[2:]
        if opt == "--type":
            types = set()
            for tok in val.split(","):
                tok = tok.lower()
                if tok in GROUPS:
                    types |= GROUPS[tok]
                else:
                    types |= {t for t, n in NAMES.items() if n.lower() == tok}
        elif opt == "--addr":
            addr = span(val)
        elif opt == "--port":
            port = span(val)
        elif opt == "--range":
            a, b = val.split(":")
            rng = (int(a or 0), int(b) if b else None)
    data = open(src, "rb").read()
    kept, where = bytearray(), []
    n = len(data) // 6
    for i in range(rng[0], n if rng[1] is None else min(n, rng[1])):
        r = data[6 * i:6 * i + 6]
        a, be, ctl = int.from_bytes(r[:4], "big"), r[4], r[5]
        t = ctl >> 4
        if t in INVALID and ctl & 15 == 15:
            keep = True  # a gap marker, always
        else:
            keep = types is None or t in types
            if keep and (addr or port):
                on = [b for b in range(8) if not be >> b & 1] or range(8)
                lo, hi = a + min(on), a + max(on)
                if t in MEMORY and addr:
                    keep = lo <= addr[1] and hi >= addr[0]
                elif t in IO and port:
                    keep = lo <= port[1] and hi >= port[0]
                else:
                    keep = False
        if keep:
            kept += r
            where.append(i)
    open(out, "wb").write(kept)
    with open(idx, "w") as f:
        f.write("".join("%d\n" % i for i in where))


main()
