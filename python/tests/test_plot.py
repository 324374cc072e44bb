# SPDX-License-Identifier: MIT
# bach.plot on matplotlib's Agg backend: its numbers against `bach plot
# KIND --json` on the same traces (the C tool computes them with its own
# code: an independent check), and the drawn artists, labels and data.
import json
import os
import subprocess

import numpy as np
import pytest

import bach

mpl = pytest.importorskip("matplotlib",
                          reason="python3-matplotlib missing (scripts/deps.sh)")
mpl.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import bach.plot  # noqa: E402

BACH = os.environ.get("BACH") or os.path.join(
    os.path.dirname(__file__), "..", "..", "build", "bin", "bach")


def run(*args):
    return subprocess.run([BACH, *map(str, args)], check=True,
                          capture_output=True).stdout


def tool(kind, *args):
    return json.loads(run("plot", kind, *args, "--json"))


@pytest.fixture(scope="module")
def cap(tmp_path_factory):
    """A capture with FIFO overflows (gaps), an unplug (device lost and
    back), in-band markers and two user marks."""
    d = tmp_path_factory.mktemp("plotcap")
    subprocess.run([BACH, "capture", "--driver", "fake",
                    "--option", "records=120000", "--option", "seed=4",
                    "--option", "overflow_every=10:3000",
                    "--option", "disconnect=60000:1",
                    "--set", "marker=io:0x80", "--set", "marker_rate=20000",
                    "--policy", "drop", "--set", "rotate_mb=1",
                    "--output", str(d)], check=True, capture_output=True)
    (c,) = [p for p in d.iterdir() if p.is_dir()]
    with (c / "manifest.jsonl").open("a") as f:
        for at, text in ((5000, "phase one"), (90000, "phase two")):
            f.write('{"time":"2026-11-26T14:00:00.000Z","event":"mark",'
                    '"segment":"seg-000001.byu.gz","at":%d,"record":%d,'
                    '"source":"ctl","text":"%s"}\n' % (at, at, text))
    return c


@pytest.fixture(scope="module")
def gen(tmp_path_factory):
    d = tmp_path_factory.mktemp("plotgen")
    run("gen", "--records", 50000, "--seed", 3, "-o", d / "g.byu")
    return d / "g.byu"


def kinds_of(d):
    return {e["event"] for e in d["events"]}


@pytest.mark.parametrize("kind", ["mix", "wss", "map", "mrc"])
def test_data_equals_the_tool(kind, cap, gen):
    for t in (cap, gen):
        want = tool(kind, t)
        got = bach.plot.data(kind, t)
        if kind == "mrc":
            for p, q in zip(got["curves"][0]["points"],
                            want["curves"][0]["points"]):
                assert abs(p.pop("miss_ratio") - q.pop("miss_ratio")) <= 5e-7
        assert got == want, (kind, t)
    # the capture has every kind of rule, and they are the tool's
    assert kinds_of(bach.plot.data("mix", cap)) == {
        "gap", "mark", "device_lost", "device_back"}


def test_options_equal_the_tool(cap, gen):
    assert bach.plot.data("wss", gen, window=777, line=64) == \
        tool("wss", "--window", 777, "--line", 64, gen)
    assert bach.plot.data("map", cap, ranges=[(0, 0xfffff)]) == \
        tool("map", "--range", "0-fffff", cap)
    got = bach.plot.data("mrc", gen, line=128)
    want = tool("mrc", "--line", 128, gen)
    assert [(p["refs"], p["misses"]) for p in got["curves"][0]["points"]] \
        == [(p["refs"], p["misses"]) for p in want["curves"][0]["points"]]


def test_gap_markers_of_a_plain_file(cap, tmp_path):
    """A plain file's gap markers are its gaps, at the same positions."""
    run("convert", cap, tmp_path / "flat.byu")
    got = bach.plot.data("mix", tmp_path / "flat.byu")
    assert got == tool("mix", tmp_path / "flat.byu")
    assert [e["event"] for e in got["events"]] == ["gap"] * len(got["events"])
    assert len(got["events"]) == len(bach.open(cap).gaps()) > 0


def test_stack_distances_by_brute_force():
    """The merge-sort count against a list walked by hand."""
    rng = np.random.default_rng(1)
    recs = np.zeros(3000, bach.RECORD)
    recs["address"] = rng.integers(0, 40, len(recs)) * 32
    recs["be"] = 0
    recs["control"] = 0x80
    recs["control"][[700, 1900]] = 0x0f      # gap markers: flushes
    recs["address"][[700, 1900]] = 5
    want, stack = [], []
    for r in recs:
        if r["control"] == 0x0f:
            stack = []
            continue
        line = int(r["address"]) // 32
        if line in stack:
            k = stack.index(line)
            want.append(k)
            del stack[k]
        else:
            want.append(-1)
        stack.insert(0, line)
    got = bach.plot.stack_distances(recs, 32)
    assert got.tolist() == want


def rules(ax):
    return {ln.get_gid(): ln for ln in ax.get_lines()
            if (ln.get_gid() or "").startswith("bach-")}


def test_mix_artists(cap):
    fig, ax = plt.subplots()
    d = bach.plot.mix(ax, cap)
    assert ax.get_xlabel() == "trace position (records from the start)"
    assert ax.get_ylabel() == "share of bus cycles (%)"
    assert ax.get_title().startswith("bus cycle mix: ")
    labels = [c.get_label() for c in ax.collections]
    assert labels == bach.plot.MIX_CLASSES
    # the top of the stack is 100% in every column
    top = ax.collections[-1].get_paths()[0].vertices[:, 1]
    assert np.allclose(top.max(), 1.0)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == labels
    # one rule per event, at its position, in the tool's colours
    lines = [ln for ln in ax.get_lines() if (ln.get_gid() or "").startswith("bach-")]
    assert [ln.get_xdata()[0] for ln in lines] == [e["at"] for e in d["events"]]
    assert [ln.get_label()[1:] for ln in lines] == [e["label"] for e in d["events"]]
    gids = {ln.get_gid() for ln in lines}
    assert gids == {"bach-gap", "bach-mark", "bach-device_lost",
                    "bach-device_back"}
    for ln in lines:
        # Okabe-Ito, as bach plot: mark black dashed, gap vermillion
        if ln.get_gid() == "bach-mark":
            assert ln.get_linestyle() == "--"
            assert tuple(ln.get_color()[:3]) == (0, 0, 0)
        if ln.get_gid() == "bach-gap":
            assert tuple(ln.get_color()[:3]) == (213 / 255, 94 / 255, 0)
    texts = [t.get_text().strip() for t in ax.texts]
    assert set(texts) <= {e["label"] for e in d["events"]}
    assert {"phase one", "phase two"} & set(texts)
    assert any(t.endswith(" records lost (overflow)") for t in texts)
    fig.canvas.draw()
    plt.close(fig)


def test_wss_artists(gen):
    fig, ax = plt.subplots()
    d = bach.plot.wss(ax, gen, window=1000)
    lines = ax.get_lines()
    assert [ln.get_label() for ln in lines[:2]] == ["32-byte lines",
                                                     "4 KiB pages"]
    assert list(lines[0].get_ydata()) == [w["lines"] for w in d["windows"]]
    assert list(lines[1].get_ydata()) == [w["pages"] for w in d["windows"]]
    assert list(lines[0].get_xdata()) == [w["start"] + 500
                                          for w in d["windows"]]
    assert ax.get_ylabel() == \
        "distinct lines and pages per window of 1k records"
    assert ax.get_xlabel() == "trace position (records from the start)"
    assert not rules(ax)      # bach gen writes no gap markers
    plt.close(fig)


def test_mrc_artists(gen, cap):
    fig, ax = plt.subplots()
    d = bach.plot.mrc(ax, gen)
    bach.plot.mrc(ax, cap, label="capture")
    a, b = ax.get_lines()
    pts = d["curves"][0]["points"]
    assert list(a.get_xdata()) == [p["size"] for p in pts]
    assert list(a.get_ydata()) == [p["miss_ratio"] for p in pts]
    assert a.get_label() == str(gen) and b.get_label() == "capture"
    assert ax.get_xscale() == "log"
    assert ax.get_xlabel() == "cache size (bytes, log scale), 32-byte lines"
    assert ax.get_ylabel() == "miss ratio (fully associative LRU)"
    fig.canvas.draw()
    ticks = [t.get_text() for t in ax.get_xticklabels()]
    assert "1 KiB" in ticks and "1 MiB" in ticks
    plt.close(fig)


def test_map_artists(cap):
    fig, ax = plt.subplots()
    d = bach.plot.map(ax, cap)
    (im,) = ax.get_images()
    img = im.get_array()
    assert img.shape == (bach.plot.ROWS, bach.plot.NCOLS, 3)
    # a pixel is coloured where a cell counted references, white elsewhere
    coloured = (np.asarray(img) < 1).any(axis=2)
    assert coloured.sum() == len({(c["start"], c["lo"], c["space"])
                                  for c in d["cells"]})
    assert ax.get_ylabel() == "physical address (hex), ranges in use"
    assert ax.get_xlabel() == "trace position (records from the start)"
    fig.canvas.draw()
    ticks = [t.get_text() for t in ax.get_yticklabels()]
    assert ticks[0] == "%08x" % d["bands"][0]["lo"]
    assert ticks[-1] == "I/O ffff" and d["bands"][-1]["space"] == "io"
    assert {ln.get_gid() for ln in rules(ax).values()} >= {"bach-gap",
                                                           "bach-mark"}
    assert [t.get_text() for t in ax.get_legend().get_texts()] == \
        bach.plot.MAP_CLASSES
    plt.close(fig)


def test_user_style_applies(gen):
    """The Axes is the user's: their rcParams hold."""
    with mpl.rc_context({"lines.linewidth": 3.5, "font.size": 7}):
        fig, ax = plt.subplots()
        bach.plot.wss(ax, gen)
        assert ax.get_lines()[0].get_linewidth() == 3.5
        assert ax.xaxis.label.get_fontsize() == 7
    plt.close(fig)


def test_open_trace_and_window(cap):
    """An open Trace: what is left to read, positions from there."""
    with bach.open(cap) as t:
        t.between("phase one", "phase two")
        d = bach.plot.data("mix", t)
    assert d["records"] == 85000
    assert all(0 <= e["at"] <= 85000 for e in d["events"])
    assert any(e["label"] == "phase one" and e["at"] == 0
               for e in d["events"])
    with pytest.raises(ValueError, match="not map, mix"):
        bach.plot.data("pie", cap)
    with pytest.raises(ValueError, match="power of two"):
        bach.plot.data("wss", cap, line=48)
