#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""same_json.py GOT WANT: every number, string and list in WANT is in GOT
at the same place, equal (GOT may carry more members). Prints each
difference with its path; exits 1 when there is one."""
import json
import sys


def walk(got, want, path, out):
    if isinstance(want, dict):
        if not isinstance(got, dict):
            out.append("%s: %r, want an object" % (path, got))
            return
        for k, v in want.items():
            if k not in got:
                out.append("%s.%s: missing" % (path, k))
            else:
                walk(got[k], v, "%s.%s" % (path, k), out)
    elif isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            out.append("%s: %r, want %r" % (path, got, want))
            return
        for i, (g, w) in enumerate(zip(got, want)):
            walk(g, w, "%s[%d]" % (path, i), out)
    elif got != want:
        out.append("%s: %r, want %r" % (path, got, want))


def main():
    with open(sys.argv[1]) as f:
        got = json.load(f)
    with open(sys.argv[2]) as f:
        want = json.load(f)
    out = []
    walk(got, want, "", out)
    for line in out[:40]:
        print(line)
    if out:
        print("%d differences" % len(out))
        sys.exit(1)


if __name__ == "__main__":
    main()
