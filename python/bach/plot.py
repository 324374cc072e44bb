# SPDX-License-Identifier: MIT
"""The pictures of `bach plot` (docs/analysis.md section 4) on matplotlib.

    import matplotlib.pyplot as plt
    import bach.plot

    fig, ax = plt.subplots()
    bach.plot.mix(ax, "capture/20261121T223000Z")   # or an open bach.Trace
    fig.savefig("mix.pdf")

map, mix, mrc and wss draw on the Axes given, so the user's rcParams and
style sheets apply; each sets its axis labels (with units) and a title,
and on map, mix and wss draws the capture's events as vertical rules at
their positions: gaps red, marks dashed blue, device lost and back
purple, each labelled (a plain file: its gap markers are the gaps).

data(kind, trace) is the numbers behind a picture, computed here with
numpy from the records (libbach.so and numpy are all it needs): a dict
with the members of `bach plot KIND TRACE --json`, equal to them
number for number (python/tests/test_plot.py holds it to the tool).
mrc is exact: LRU stack distances counted in whole arrays, O(n log^2 n)
for n references (python/README.md gives the cost and the limit).
"""
import numpy as np

from . import Trace, open as _open

__all__ = ["data", "map", "mix", "mrc", "wss", "events"]

NCOLS = 800           # time columns of map and mix (tools/bach/plot_kinds.h)
ROWS = 480            # address rows of map's data (MAP_DATA_ROWS, plot_map.c)
MAX_RULES = 400       # events drawn at most

MIX_CLASSES = ["instruction fetch", "data read", "data write", "writeback",
               "I/O read or write", "interrupt ack., special",
               "invalid, gap marker"]
# Okabe and Ito's palette ("Color Universal Design", 2008), as bach plot
# draws with it (tools/bach/plot_canvas.c): readers with any common
# colour-vision deficiency tell its colours apart
OKABE_ITO = {"black": (0, 0, 0), "orange": (230 / 255, 159 / 255, 0),
             "sky blue": (86 / 255, 180 / 255, 233 / 255),
             "bluish green": (0, 158 / 255, 115 / 255),
             "yellow": (240 / 255, 228 / 255, 66 / 255),
             "blue": (0, 114 / 255, 178 / 255),
             "vermillion": (213 / 255, 94 / 255, 0),
             "reddish purple": (204 / 255, 121 / 255, 167 / 255)}
_OI = OKABE_ITO
MIX_COLORS = [_OI["blue"], _OI["bluish green"], _OI["orange"], _OI["yellow"],
              _OI["sky blue"], _OI["reddish purple"], (0.6, 0.6, 0.6)]
MAP_CLASSES = ["instruction fetch", "data read", "data write, writeback",
               "I/O (port space)"]
MAP_COLORS = [_OI["blue"], _OI["bluish green"], _OI["orange"], _OI["sky blue"]]
# gap vermillion solid, mark black dashed, device reddish purple dash-dot
RULE_STYLE = {"gap": dict(color=_OI["vermillion"], linestyle="-"),
              "mark": dict(color=_OI["black"], linestyle="--"),
              "device_lost": dict(color=_OI["reddish purple"], linestyle="-."),
              "device_back": dict(color=_OI["reddish purple"], linestyle="-.")}
XLABEL = "trace position (records from the start)"

# by type (control >> 4): mix's class (tools/bach/plot_kinds.h cls_of)
_MIX = np.array([6, 5, 6, 5, 6, 4, 6, 4, 0, 0, 6, 6, 1, 1, 3, 2], np.int8)
# map's class, -1 for none
_MAP = np.array([-1, -1, -1, -1, -1, 3, -1, 3, 0, 0, -1, -1, 1, 1, 2, 2],
                np.int8)
# a reference (lib/analysis/refs.h): fetch, read, write types
_REF = np.zeros(16, bool)
_REF[[8, 9, 12, 13, 14, 15]] = True
_INVALID = np.array([t in (0, 2, 4, 6, 10, 11) for t in range(16)])
# the lowest requested byte: first zero bit of BE# (none: byte 0)
_LOW = np.array([((~b & 0xff) & -(~b & 0xff)).bit_length() - 1
                 if b != 0xff else 0 for b in range(256)], np.uint64)


# ---- the records and the events ----------------------------------------

def _load(trace):
    """(records, events, dropped, name): the records of trace (a path:
    all of it; an open Trace: what is left to read, positions from
    there) and its events as `bach plot` draws them."""
    if isinstance(trace, Trace):
        t, own = trace, False
    else:
        t, own = _open(trace, time=False), True
    try:
        start = t.tell()
        recs = t.read()
        name = " ".join(t._paths)
        if t._capture() is not None:
            evs = _manifest_events(t.manifest)
        else:
            evs = _marker_events(recs)
            start = 0
    finally:
        if own:
            t.close()
    out = []
    for e in evs:
        if e["at"] < start:
            continue
        # at or past the end: at the end, as bach plot draws them
        e["at"] = min(e["at"] - start, len(recs))
        out.append(e)
    return recs, out[:MAX_RULES], max(0, len(out) - MAX_RULES), name


def _cut(s, n):
    """s cut to n bytes of UTF-8, as bach plot's labels are."""
    return s.encode()[:n].decode(errors="ignore")


def _manifest_events(manifest):
    out = []
    for ev in manifest:
        kind, at = ev.get("event"), ev.get("at")
        if kind not in RULE_STYLE or type(at) is not int or at < 0:
            continue
        e = {"event": kind, "at": at}
        if kind == "gap":
            lost = ev.get("lost", 0)
            e["lost"] = lost if type(lost) is int else 0
            cause = ev.get("cause")
            cause = _cut(cause if isinstance(cause, str) else "", 32)
            e["label"] = "%d records lost%s" % (
                e["lost"], " (%s)" % cause if cause else "")
        elif kind == "mark":
            text = ev.get("text")
            e["label"] = _cut(text if isinstance(text, str) else "", 63)
        else:
            e["label"] = kind.replace("_", " ")
        e["label"] = _cut(e["label"], 63)
        out.append(e)
    return out


def _marker_events(recs):
    ctl = recs["control"]
    at = np.flatnonzero(((ctl & 0x0f) == 0x0f) & _INVALID[ctl >> 4])
    return [{"event": "gap", "at": int(i), "lost": int(recs["address"][i]),
             "label": "%d records lost" % recs["address"][i]} for i in at]


def _with_events(d, events, dropped):
    d["events"] = events
    d["events_left_out"] = dropped
    return d


def events(trace):
    """The events bach plot draws as rules: dicts of event (gap, mark,
    device_lost, device_back), at (the trace position), lost (a gap's)
    and label, as `bach plot KIND --json` lists them."""
    _, evs, _, _ = _load(trace)
    return evs


def _refs(recs):
    """(index, first byte address as uint64) of the references."""
    ctl = recs["control"]
    i = np.flatnonzero(_REF[ctl >> 4])
    a = recs["address"][i].astype(np.uint64)
    first = a + _LOW[recs["be"][i]]
    # past 4 GiB: the record's own address (lib/analysis/refs.h)
    first = np.where(first >= 1 << 32, a, first)
    return i, first


def _lg_line(line):
    line = int(line)
    if line < 8 or line > 65536 or line & (line - 1):
        raise ValueError("line: %r is not a power of two from 8 to 65536"
                         % (line,))
    return line.bit_length() - 1


# ---- the data of each kind ----------------------------------------------

def _mix(recs, events, dropped, name):
    n = len(recs)
    per = 1
    while n > NCOLS * per:
        per *= 2
    ncol = -(-n // per)
    cls = _MIX[recs["control"] >> 4].astype(np.int64)
    col = np.arange(n, dtype=np.int64) // per
    counts = np.bincount(col * 7 + cls, minlength=ncol * 7).reshape(ncol, 7)
    cols = [{"start": k * per, "records": min(per, n - k * per),
             "counts": counts[k].tolist()} for k in range(ncol)]
    return _with_events({"kind": "mix", "records": n, "per_column": per,
                         "classes": list(MIX_CLASSES), "columns": cols},
                        events, dropped)


def _wss(recs, events, dropped, name, window=None, line=32):
    lg = _lg_line(line)
    n = len(recs)
    if window is None:
        window = max(n // 400, 1)
    window = int(window)
    if window < 1:
        raise ValueError("window: %r is not a number of records" % window)
    i, first = _refs(recs)
    w = (i // window).astype(np.uint64)
    nwin = -(-n // window)
    lines = np.bincount((np.unique((w << np.uint64(32)) | (first >> np.uint64(lg)))
                         >> np.uint64(32)).astype(np.int64), minlength=nwin)
    pages = np.bincount((np.unique((w << np.uint64(32)) | (first >> np.uint64(12)))
                         >> np.uint64(32)).astype(np.int64), minlength=nwin)
    wins = [{"start": k * window, "records": min(window, n - k * window),
             "lines": int(lines[k]), "pages": int(pages[k])}
            for k in range(nwin)]
    return _with_events({"kind": "wss", "line": int(line), "page": 4096,
                         "window": window, "records": n, "windows": wins},
                        events, dropped)


def _greater_before(v):
    """c[i] = #{j < i: v[j] > v[i]} for v of values in [0, len(v)],
    by the levels of a merge sort, each in whole arrays."""
    n = len(v)
    c = np.zeros(n, np.int64)
    idx = np.arange(n, dtype=np.int64)
    m = n + 2
    k = 1
    while k < n:
        blk = idx // (2 * k)
        right = (idx // k) & 1 == 1
        left_keys = np.sort(blk[~right] * m + v[~right])
        br = blk[right]
        q = br * m + v[right]
        c[right] += (np.searchsorted(left_keys, (br + 1) * m, "left")
                     - np.searchsorted(left_keys, q, "right"))
        k *= 2
    return c


def stack_distances(recs, line=32):
    """The LRU stack distance of every reference of recs (-1: cold), in
    lines: the distinct other lines referenced since its line's last
    reference; a gap marker makes every line cold again
    (docs/analysis.md section 3.1). Exact; O(n log^2 n) time and about
    100 bytes a reference."""
    lg = _lg_line(line)
    ctl = recs["control"]
    gap = ((ctl & 0x0f) == 0x0f) & _INVALID[ctl >> 4]
    seg = np.cumsum(gap, dtype=np.uint64)
    i, first = _refs(recs)
    key = (seg[i] << np.uint64(32)) | (first >> np.uint64(lg))
    n = len(key)
    order = np.argsort(key, kind="stable")
    sk = key[order]
    same = sk[1:] == sk[:-1]
    prev = np.full(n, -1, np.int64)
    prev[order[1:][same]] = order[:-1][same]
    greater = _greater_before(prev + 1)
    d = np.arange(n, dtype=np.int64) - prev - 1 - greater
    d[prev < 0] = -1
    return d


def _mrc(recs, events, dropped, name, line=32):
    lg = _lg_line(line)
    sizes = [1024 << k for k in range(16)]  # 1 KiB to 32 MiB
    if sizes[0] % (1 << lg):
        raise ValueError("line: %d is more than the smallest size, 1 KiB"
                         % line)
    d = stack_distances(recs, line)
    refs = len(d)
    cold = int(np.count_nonzero(d < 0))
    warm = np.sort(d[d >= 0])
    pts = []
    for s in sizes:
        c = s >> lg
        misses = cold + int(len(warm) - np.searchsorted(warm, c, "left"))
        pts.append({"size": s, "refs": refs, "misses": misses,
                    "miss_ratio": misses / refs if refs else 0.0})
    return {"kind": "mrc", "line": int(line), "assoc": "full", "sample": 1,
            "curves": [{"trace": name, "points": pts}]}


def _map_bands(recs, ranges):
    """(lo, hi, y0, y1, io) of map's bands, bottom up, and the class and
    address of every record (tools/bach/plot_map.c map_ranges)."""
    cls = _MAP[recs["control"] >> 4]
    addr = recs["address"].astype(np.int64)
    io = bool(np.count_nonzero(cls == 3))
    lo, hi = [], []
    if ranges:
        for a, b in ranges:
            lo.append(int(a))
            hi.append(int(b))
    else:
        used = np.flatnonzero(np.bincount(addr[(cls >= 0) & (cls < 3)] >> 16,
                                          minlength=1 << 16))
        for c in used.tolist():
            if lo and (c << 16) - hi[-1] <= 1 << 20:
                hi[-1] = ((c + 1) << 16) - 1
                continue
            if len(lo) == 8:  # join the closest pair
                best = 0
                for b in range(1, len(lo) - 1):
                    if lo[b + 1] - hi[b] < lo[best + 1] - hi[best]:
                        best = b
                hi[best] = hi[best + 1]
                del lo[best + 1], hi[best + 1]
            lo.append(c << 16)
            hi.append(((c + 1) << 16) - 1)
    n = len(lo)
    if io:
        lo.append(0)
        hi.append(0xffff)
    nb = len(lo)
    room = ROWS - 6.0 * (nb - 1 if nb else 0)
    io_h = (room / (n * 3 + 1) if n else room) if io else 0.0
    each = (room - io_h) / n if n else 0.0
    y0, y1, y = [], [], 0.0
    for b in range(nb):
        h = io_h if io and b == n else each
        y0.append(y)
        y1.append(y + h)
        y += h + 6
    return lo, hi, y0, y1, io, cls, addr


def _map_cells(recs, ranges):
    lo, hi, y0, y1, io, cls, addr = _map_bands(recs, ranges)
    n = len(recs)
    nmem = len(lo) - 1 if io else len(lo)
    row = np.full(n, -1, np.int64)
    for b in range(nmem):
        sel = (row < 0) & (cls >= 0) & (cls < 3) & (addr >= lo[b]) & \
              (addr <= hi[b])
        row[sel] = (y0[b] + (addr[sel] - lo[b]).astype(np.float64)
                    / float(hi[b] - lo[b] + 1) * (y1[b] - y0[b])).astype(
                        np.int64)
    if io:
        sel = cls == 3
        row[sel] = (y0[nmem] + (addr[sel] & 0xffff).astype(np.float64)
                    / 65536.0 * (y1[nmem] - y0[nmem])).astype(np.int64)
    col = np.arange(n, dtype=np.int64) * NCOLS // max(n, 1)
    ok = (row >= 0) & (row < ROWS) & (cls >= 0)
    cell = np.bincount((cls[ok].astype(np.int64) * ROWS + row[ok]) * NCOLS
                       + col[ok], minlength=4 * ROWS * NCOLS)
    return cell.reshape(4, ROWS, NCOLS), (lo, hi, y0, y1, io)


def _row_addrs(lo, hi, y0, y1, r):
    import math
    h, size = y1 - y0, float(hi - lo + 1)
    f0, f1 = (r - y0) / h, (r + 1 - y0) / h
    a = lo + int(math.ceil(max(f0, 0) * size))
    b = min(lo + int(math.ceil(min(f1, 1) * size)) - 1, hi)
    return a, b


def _map(recs, events, dropped, name, ranges=None, cells=None):
    import math
    cell, (lo, hi, y0, y1, io) = cells or _map_cells(recs, ranges)
    n = len(recs)
    cells = []
    for b in range(len(lo)):
        band_io = io and b == len(lo) - 1
        for r in range(max(int(y0[b]), 0), min(ROWS, math.ceil(y1[b]))):
            a, z = _row_addrs(lo[b], hi[b], y0[b], y1[b], r)
            sub = cell[:, r, :]
            for x, c in zip(*np.nonzero(sub.T)):
                if (c == 3) != band_io:
                    continue
                s0 = (int(x) * n + NCOLS - 1) // NCOLS
                s1 = ((int(x) + 1) * n + NCOLS - 1) // NCOLS
                cells.append({"start": s0, "records": s1 - s0,
                              "space": "io" if band_io else "memory",
                              "lo": a, "hi": z, "class": int(c),
                              "count": int(sub[c, x])})
    bands = [{"space": "io" if io and b == len(lo) - 1 else "memory",
              "lo": lo[b], "hi": hi[b]} for b in range(len(lo))]
    return _with_events({"kind": "map", "records": n,
                         "classes": list(MAP_CLASSES), "bands": bands,
                         "cells": cells}, events, dropped)


_KINDS = {"map": _map, "mix": _mix, "mrc": _mrc, "wss": _wss}


def data(kind, trace, **opts):
    """The numbers behind picture kind (map, mix, mrc, wss) of trace (a
    path or an open bach.Trace), as a dict with the members `bach plot
    KIND TRACE --json` writes (docs/analysis.md section 4). Options:
    map: ranges=[(lo, hi), ...] (--range, inclusive); wss: window=N,
    line=B; mrc: line=B."""
    if kind not in _KINDS:
        raise ValueError("kind: %r is not map, mix, mrc or wss" % (kind,))
    return _KINDS[kind](*_load(trace), **opts)


# ---- drawing ---------------------------------------------------------------

def _si(v):
    for div, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= div:
            s = "%.1f" % (v / div)
            return (s[:-2] if s.endswith(".0") else s) + unit
    return "%g" % v


def _time_axis(ax, total):
    from matplotlib.ticker import FuncFormatter
    ax.set_xlim(0, max(total, 1))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: _si(v)))
    ax.set_xlabel(XLABEL)


def _draw_events(ax, d, total):
    """The rules: one axvline each (gid bach-EVENT, label the event's
    label), labelled on the plot where there is room."""
    span = max(total, 1)
    last = -1.0
    for e in d["events"]:
        st = RULE_STYLE[e["event"]]
        ln = ax.axvline(e["at"], linewidth=1, **st)
        ln.set_gid("bach-" + e["event"])
        ln.set_label("_" + e["label"])  # out of the legend
        x = e["at"] / span
        if e["label"] and x - last > 60 / 860:
            ax.text(x, 0.99, " " + e["label"], transform=ax.get_xaxis_transform(),
                    color=st["color"], fontsize="x-small", va="top",
                    gid="bach-" + e["event"] + "-label")
            last = x
    if d["events_left_out"]:
        ax.text(1, 1.01, "(%d more events not drawn)" % d["events_left_out"],
                transform=ax.transAxes, ha="right", va="bottom",
                color=_OI["vermillion"], fontsize="x-small", gid="bach-left-out")


def _legend(ax, names, colors, lines):
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    h = [Line2D([], [], color=c, label=n) if lines else
         Patch(facecolor=c, label=n) for n, c in zip(names, colors)]
    ax.legend(handles=h, loc="upper right", fontsize="small")


def _title(ax, title, what, name):
    ax.set_title(title if title is not None else what + name)


def _over_time(ax, d, names, colors, title, what, name):
    """What map and mix end with: the time axis, the legend of the
    classes, the events and the title."""
    _time_axis(ax, d["records"])
    _legend(ax, names, colors, False)
    _draw_events(ax, d, d["records"])
    _title(ax, title, what, name)


def mix(ax, trace, title=None):
    """The share of each kind of bus cycle along the trace (bach plot
    mix): one filled band per class (a PolyCollection labelled with the
    class), columns of data()["per_column"] records, the events as rules.
    Returns data("mix", trace)."""
    recs, evs, dropped, name = _load(trace)
    d = _mix(recs, evs, dropped, name)
    from matplotlib.ticker import PercentFormatter
    n = d["records"]
    if d["columns"]:
        counts = np.array([c["counts"] for c in d["columns"]], float)
        share = counts / np.maximum(counts.sum(axis=1), 1)[:, None]
        edges = [c["start"] for c in d["columns"]] + [n]
        share = np.vstack([share, share[-1:]])
        base = np.zeros(len(edges))
        for j, cname in enumerate(MIX_CLASSES):
            top = base + share[:, j]
            ax.fill_between(edges, base, top, step="post", linewidth=0,
                            color=MIX_COLORS[j], label=cname)
            base = top
    ax.set_ylim(0, 1)
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_ylabel("share of bus cycles (%)")
    _over_time(ax, d, MIX_CLASSES, MIX_COLORS, title, "bus cycle mix: ", name)
    return d


def wss(ax, trace, window=None, line=32, title=None):
    """Distinct lines and 4 KiB pages per window of records (bach plot
    wss): two lines at the windows' middles (a short last window left
    out, as bach plot does), the events as rules. Returns data("wss",
    trace, window=, line=)."""
    recs, evs, dropped, name = _load(trace)
    d = _wss(recs, evs, dropped, name, window=window, line=line)
    w = d["windows"]
    if len(w) > 1 and w[-1]["records"] < d["window"]:
        w = w[:-1]
    x = [v["start"] + v["records"] / 2 for v in w]
    ax.plot(x, [v["lines"] for v in w], color=MIX_COLORS[0],
            label="%d-byte lines" % d["line"])
    ax.plot(x, [v["pages"] for v in w], color=MIX_COLORS[2],
            label="4 KiB pages")
    ax.set_ylim(bottom=0)
    ax.set_ylabel("distinct lines and pages per window of %s records"
                  % _si(d["window"]))
    _time_axis(ax, d["records"])
    ax.legend(loc="upper right", fontsize="small")
    _draw_events(ax, d, d["records"])
    _title(ax, title, "working set: ", name)
    return d


def _bytes_label(v, _=None):
    for k, u in ((30, "GiB"), (20, "MiB"), (10, "KiB")):
        if v >= 1 << k:
            return "%g %s" % (v / (1 << k), u)
    return "%g B" % v


def mrc(ax, trace, line=32, label=None, title=None):
    """The miss ratio of fully associative LRU from 1 KiB to 32 MiB (bach
    plot mrc), exact, one curve on a log2 x axis; call again on the same
    Axes for more traces. label: the curve's (default the trace's
    name). Returns data("mrc", trace, line=)."""
    from matplotlib.ticker import FixedLocator, FuncFormatter
    recs, evs, dropped, name = _load(trace)
    d = _mrc(recs, evs, dropped, name, line=line)
    pts = d["curves"][0]["points"]
    ax.plot([p["size"] for p in pts], [p["miss_ratio"] for p in pts],
            marker=".", label=name if label is None else label)
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(FixedLocator([p["size"] for p in pts][::2]))
    ax.xaxis.set_major_formatter(FuncFormatter(_bytes_label))
    ax.set_ylim(0, 1)
    ax.set_xlabel("cache size (bytes, log scale), %d-byte lines" % line)
    ax.set_ylabel("miss ratio (fully associative LRU)")
    ax.legend(loc="upper right", fontsize="small")
    _title(ax, title, "miss-ratio curves: ", name)
    return d


def map(ax, trace, ranges=None, title=None):
    """Physical address against trace position, a density map (bach plot
    map): an image of 800 columns by 480 rows, each cell the colour of
    its commonest kind, darker with the log of its count; the address
    ranges in use (or ranges=[(lo, hi), ...]) as bands labelled with
    their first and last address, I/O ports in a band of their own; the
    events as rules. Returns data("map", trace, ranges=)."""
    from matplotlib.ticker import FixedLocator
    recs, evs, dropped, name = _load(trace)
    cells = _map_cells(recs, ranges)
    cell, (lo, hi, y0, y1, io) = cells
    d = _map(recs, evs, dropped, name, cells=cells)
    n = len(recs)
    total = cell.sum(axis=0)
    best = cell.argmax(axis=0)
    v = np.where(total > 0, 0.25 + 0.75 * np.log1p(total)
                 / np.log1p(max(int(total.max()), 1)), 0.0)
    rgb = np.array(MAP_COLORS)[best]
    img = 1 - v[..., None] * (1 - rgb)
    ax.imshow(img, origin="lower", aspect="auto", interpolation="nearest",
              extent=(0, max(n, 1), 0, ROWS))
    ticks, labels = [], []
    for b in range(len(lo)):
        fmt = "I/O %04x" if io and b == len(lo) - 1 else "%08x"
        ticks += [y0[b], y1[b]]
        labels += [fmt % lo[b], fmt % hi[b]]
    ax.yaxis.set_major_locator(FixedLocator(ticks))
    ax.set_yticklabels(labels, fontsize="x-small")
    ax.set_ylim(0, ROWS)
    ax.set_ylabel("physical address (hex), ranges in use")
    _over_time(ax, d, MAP_CLASSES, MAP_COLORS, title, "address map: ", name)
    return d
