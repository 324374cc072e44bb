#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A reference model of `bach sim`, written from Dinero IV, not from bach.

Each rule below names where Dinero IV says it (the atos-tools/dineroIV
sources: the library man page d4.3, ref.c's d4ref(), misc.c's
d4_dopending(), d4_wbblock(), d4copyback() and d4invalidate(), cmdmain.c's
main() and do1stats()). The structures are Dinero's: one priority stack per
set, most recent line on top, and a stack of pending references per cache
that is emptied from the top after each reference. Nothing here is taken
from bach's C code; the things Dinero leaves open are taken from
docs/analysis.md (random replacement's numbers, the TLB, gap markers).

    dinero.py [--l1i SPEC --l1d SPEC | --l1 SPEC] [--l2 SPEC] [--l3 SPEC]
              [--tlb ENTRIES:ASSOC] [--seed N] TRACE.byu[.gz]

prints the JSON object `bach sim --json` prints.
"""
import argparse
import gzip
import json
import sys
from collections import OrderedDict

# Dinero's access types (d4.h): D4XREAD 0, D4XWRITE 1, D4XINSTRN 2,
# D4XCOPYB 4, D4XINVAL 5.
READ, WRITE, INSTRN, COPYB, INVAL = 0, 1, 2, 4, 5
KIND_NAMES = {INSTRN: "ifetch", READ: "read", WRITE: "write"}
MASK64 = (1 << 64) - 1


def sm(x):
    """splitmix64's output for the state x."""
    z = (x + 0x9E3779B97F4A7C15) & MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


# the position in the trace of the record being simulated
position = 0


def draw(seed, n, pos, k):
    """docs/analysis.md: the k-th victim cache n draws for the record at
    position pos is way draw % ASSOC, draw = sm(sm(sm(seed * 8 + n) ^ pos) ^ k)."""
    return sm(sm(sm((seed * 8 + n) & MASK64) ^ pos) ^ k)


class Memory:
    """d4new(NULL): the bottom of the hierarchy only counts (d4ref's D4F_MEM case)."""

    def ref(self, atype, addr, size):
        pass


class Set:
    """One priority stack. `stack` holds lines oldest first (the bottom of
    Dinero's stack first); its last entry is the top."""

    def __init__(self, assoc):
        self.stack = OrderedDict()  # line address -> way
        self.ways = [None] * assoc  # line address per way, in fill order
        self.dirty = set()


class Cache:
    def __init__(self, name, spec, down, seed_state):
        self.name = name
        self.size, self.block, self.assoc = spec["size"], spec["line"], spec["assoc"]
        self.repl, self.wback, self.walloc = spec["repl"], spec["wb"], spec["wa"]
        self.nsets = self.size // (self.block * self.assoc)
        self.sets = [Set(self.assoc) for _ in range(self.nsets)]
        self.down = down
        self.seed, self.index = seed_state  # (seed, n) of draw()
        self.draw_at, self.draws = None, 0
        self.pending = []  # Dinero's c->pending: the top is the end
        self.fetch = {INSTRN: 0, READ: 0, WRITE: 0}
        self.miss = {INSTRN: 0, READ: 0, WRITE: 0}
        self.multiblock = 0
        self.bytes_read = 0
        self.bytes_written = 0

    # ref.c d4ref(): "special cases first"
    def ref(self, atype, addr, size):
        if atype == COPYB:
            return self.copyback()
        if atype == INVAL:
            return self.invalidate()
        b = self.block
        blockaddr = addr & ~(b - 1)
        # d4_splitm(): a reference crossing a block is cut at the boundary;
        # the rest waits on the pending stack, multiblock counts each cut
        if blockaddr != (addr + size - 1) & ~(b - 1):
            first = b - (addr & (b - 1))
            self.pending.append(("multiblock", atype, blockaddr + b, size - first))
            self.multiblock += 1
            size = first
        s = self.sets[(addr // b) % self.nsets]
        hit = blockaddr in s.stack
        write = atype == WRITE
        walloc = write and self.walloc
        wback = False
        # "Update the cache. Don't do it for non-write-allocate misses"
        if not write or hit or walloc:
            if hit:
                if self.repl == "lru":  # d4rep_lru moves a hit to the top
                    s.stack.move_to_end(blockaddr)
            else:
                self.replace(s, blockaddr)
            # "For writes, decide if write-back or write-through"
            wback = write and self.wback
            if wback:
                s.dirty.add(blockaddr)
        # "Prepare reference for downstream cache": the write-through is
        # pushed before the fetch, so the fetch leaves first
        if write and not wback:
            self.pending.append(("down", WRITE, addr, size))
        if not hit and (not write or (walloc and size != b)):
            self.pending.append(("down", READ if write else atype, blockaddr, b))
        self.fetch[atype] += 1
        if not hit:
            self.miss[atype] += 1
        self.dopending()

    def replace(self, s, blockaddr):
        """A new line on top of the stack; the replaced one, if dirty, is
        pushed for write-back (d4ref's "Take care of replaced block")."""
        if len(s.stack) < self.assoc:  # the spare node is empty: no victim
            way = s.ways.index(None)
        elif self.repl == "random":
            # docs/analysis.md: the victim is way (draw % assoc)
            if self.draw_at != position:
                self.draw_at, self.draws = position, 0
            way = draw(self.seed, self.index, position, self.draws) % self.assoc
            self.draws += 1
        else:  # LRU and FIFO: the bottom of the stack
            way = next(iter(s.stack.values()))
        old = s.ways[way]
        if old is not None:
            del s.stack[old]
            if old in s.dirty:
                s.dirty.discard(old)
                self.pending.append(("down", WRITE, old, self.block))
        s.ways[way] = blockaddr
        s.stack[blockaddr] = way

    # misc.c d4_dopending(): take pending references from the top
    def dopending(self):
        while self.pending:
            what, atype, addr, size = self.pending.pop()
            if what == "multiblock":
                self.ref(atype, addr, size)
                continue
            if atype in (READ, INSTRN):
                self.bytes_read += size
            elif atype == WRITE:
                self.bytes_written += size
            self.down.ref(atype, addr, size)  # COPYB, INVAL: not counted

    # misc.c d4copyback(): the propagation first (so it leaves last), then
    # each dirty line, set by set, each stack from its top (d4_wbblock)
    def copyback(self):
        self.pending.append(("down", COPYB, 0, 0))
        for s in self.sets:
            for line in reversed(s.stack):
                if line in s.dirty:
                    s.dirty.discard(line)
                    self.pending.append(("down", WRITE, line, self.block))
        self.dopending()

    # misc.c d4invalidate(): everything, and the same below; no copy-back
    def invalidate(self):
        self.pending.append(("down", INVAL, 0, 0))
        self.sets = [Set(self.assoc) for _ in range(self.nsets)]
        self.dopending()

    def report(self):
        return {
            "name": self.name,
            "fetches": {KIND_NAMES[k]: v for k, v in self.fetch.items()},
            "misses": {KIND_NAMES[k]: v for k, v in self.miss.items()},
            "multiblock": self.multiblock,
            "bytes_from_memory": self.bytes_read,
            "bytes_to_memory": self.bytes_written,
        }


class Tlb:
    """Not in Dinero: docs/analysis.md's TLB, an LRU cache of 4 KiB pages."""

    def __init__(self, entries, assoc):
        self.entries, self.assoc = entries, assoc
        self.nsets = entries // assoc
        self.clear()
        self.lookups = {INSTRN: 0, READ: 0, WRITE: 0}
        self.misses = {INSTRN: 0, READ: 0, WRITE: 0}

    def clear(self):
        self.sets = [OrderedDict() for _ in range(self.nsets)]

    def lookup(self, atype, addr):
        page = addr >> 12
        s = self.sets[page % self.nsets]
        self.lookups[atype] += 1
        if page in s:
            s.move_to_end(page)
            return
        self.misses[atype] += 1
        if len(s) == self.assoc:
            s.popitem(last=False)
        s[page] = True


def parse_size(text):
    scale = {"k": 1 << 10, "K": 1 << 10, "m": 1 << 20, "M": 1 << 20,
             "g": 1 << 30, "G": 1 << 30}
    if text and text[-1] in scale:
        return int(text[:-1]) * scale[text[-1]]
    return int(text)


def parse_spec(text):
    f = text.split(":")
    spec = {"size": parse_size(f[0]), "line": parse_size(f[1]),
            "repl": "lru", "wb": True, "wa": True}
    lines = spec["size"] // spec["line"]
    spec["assoc"] = lines if f[2] == "full" else int(f[2])
    for w in f[3:]:
        if w in ("lru", "fifo", "random"):
            spec["repl"] = w
        elif w in ("wb", "wt"):
            spec["wb"] = w == "wb"
        elif w in ("wa", "nwa"):
            spec["wa"] = w == "wa"
        else:
            raise SystemExit("unknown policy " + w)
    return spec


def records(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    for i in range(0, len(data) - len(data) % 6, 6):
        yield data[i:i + 6]


# docs/formats.md section 7 (the dinx export, which Dinero's xdin format
# reads): the kind of each cycle type, and the first byte and size of the
# reference from BE#
TYPE_KIND = {8: INSTRN, 9: INSTRN, 12: READ, 13: READ, 14: WRITE, 15: WRITE}
VALID_TYPES = {1, 3, 5, 7, 8, 9, 12, 13, 14, 15}


def reference(rec):
    addr = int.from_bytes(rec[0:4], "big")
    want = ~rec[4] & 0xFF
    if want == 0:
        lo, size = 0, 8
    else:
        lo = (want & -want).bit_length() - 1
        size = want.bit_length() - lo
    if addr + lo >= 1 << 32:
        lo = 0
    if addr + lo + size > 1 << 32:
        size = (1 << 32) - addr - lo
    return addr + lo, size


def main():
    ap = argparse.ArgumentParser()
    for name in ("l1i", "l1d", "l1", "l2", "l3", "tlb"):
        ap.add_argument("--" + name)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("trace")
    a = ap.parse_args()

    # cache n draws by (seed, n, position, k) (docs/analysis.md)
    index = {"l1i": 0, "l1d": 1, "l1": 2, "l2": 3, "l3": 4}
    below = Memory()
    caches = {}
    for name in ("l3", "l2"):
        if getattr(a, name):
            below = caches[name] = Cache(name, parse_spec(getattr(a, name)),
                                         below, (a.seed, index[name]))
    if a.l1:
        ci = cd = caches["l1"] = Cache("l1", parse_spec(a.l1), below,
                                       (a.seed, 2))
    else:
        ci = caches["l1i"] = Cache("l1i", parse_spec(a.l1i), below,
                                   (a.seed, 0))
        cd = caches["l1d"] = Cache("l1d", parse_spec(a.l1d), below,
                                   (a.seed, 1))
    tlb = None
    if a.tlb:
        e, w = a.tlb.split(":")
        tlb = Tlb(int(e), int(e) if w == "full" else int(w))

    global position
    nrec = nref = skipped = flushes = 0
    for rec in records(a.trace):
        position = nrec
        nrec += 1
        t = rec[5] >> 4
        if t not in TYPE_KIND:
            if t not in VALID_TYPES and rec[5] & 15 == 15:
                # a gap marker: Dinero's -flushcount flush (cmdmain.c
                # main(): copy back the data side, invalidate both sides)
                flushes += 1
                cd.ref(COPYB, 0, 0)
                ci.ref(INVAL, 0, 0)
                if ci is not cd:
                    cd.ref(INVAL, 0, 0)
                if tlb:
                    tlb.clear()
            else:
                skipped += 1
            continue
        nref += 1
        atype = TYPE_KIND[t]
        addr, size = reference(rec)
        if tlb:
            tlb.lookup(atype, addr)
        # cmdmain.c main(): fetches to the I side, the rest to the D side
        (ci if atype == INSTRN else cd).ref(atype, addr, size)
    # cmdmain.c main(), done: "copy everything back at the end"
    cd.ref(COPYB, 0, 0)

    out = {"records": nrec, "references": nref, "skipped": skipped,
           "flushes": flushes,
           "caches": [caches[n].report()
                      for n in ("l1i", "l1d", "l1", "l2", "l3") if n in caches]}
    if tlb:
        out["tlb"] = {"entries": tlb.entries, "assoc": tlb.assoc,
                      "lookups": {KIND_NAMES[k]: v for k, v in tlb.lookups.items()},
                      "misses": {KIND_NAMES[k]: v for k, v in tlb.misses.items()}}
    json.dump(out, sys.stdout)
    print()


if __name__ == "__main__":
    main()
