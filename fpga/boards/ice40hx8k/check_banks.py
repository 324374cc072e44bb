#!/usr/bin/env python3
# The banks of bach.pcf's balls, from Project IceStorm's package database
# (icebox.py pinloc_db, the iCE40HX8K-CT256: each ball's I/O tile). An I/O
# tile's edge is its bank, as Lattice's iCE40 HX8K pinout numbers them:
# top 0, right 1 (IOR_), bottom 2 (IOB_), left 3 (IOL_). Every Pentium bus
# input must be in bank 3 with the CPU's CLK (one VCCIO, 3.3 V, for the
# whole bus), the hold output and the LED in bank 2, the FT2232H in bank 1
# (docs/fpga.md section 8). Prints each signal's ball and bank; exits 1
# naming each ball in the wrong bank, 77 when icebox.py is not installed.
#
# usage: check_banks.py BACH.PCF [ICEBOX_DIR]
import re
import sys

pcf = sys.argv[1]
sys.path.insert(0, sys.argv[2] if len(sys.argv) > 2
                else "/usr/share/fpga-icestorm/python")
try:
    import icebox
except ImportError:
    print("check_banks: icebox.py (Project IceStorm) is not installed")
    sys.exit(77)

loc = {p[0]: p[1:] for p in icebox.pinloc_db["8k-ct256"]}
edge = max(max(x, y) for x, y, _ in loc.values())


def bank(ball):
    x, y, _ = loc[ball]
    return 3 if x == 0 else 2 if y == 0 else 1 if x == edge else 0


def want(sig):
    if sig in ("bus_hold", "led_run"):
        return 2
    if sig.startswith("bus_"):
        return 3
    if sig.startswith("ft_"):
        return 1
    return None


bad = 0
with open(pcf) as f:
    for n, line in enumerate(f, 1):
        m = re.match(r"\s*set_io\s+(\S+)\s+(\S+)", line)
        if not m:
            continue
        sig, ball = m.group(1), m.group(2)
        if ball not in loc:
            print(f"{pcf}:{n}: {sig}: {ball} is no ball of the CT256")
            bad += 1
            continue
        b, w = bank(ball), want(re.sub(r"\[.*", "", sig))
        print(f"{sig} {ball} bank {b}")
        if w is not None and b != w:
            print(f"{pcf}:{n}: {sig} on {ball} is in bank {b}, not {w}")
            bad += 1
sys.exit(1 if bad else 0)
