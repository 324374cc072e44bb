# SPDX-License-Identifier: MIT
# bach.dist on a LocalCluster of two worker processes: each result equal
# to json.loads of the bach command run whole on the same trace (a capture
# whose gap markers fall in several segments, and a plain .byu.gz), the
# tasks bach.dist ran (a logging wrapper around bach), bach.dist.sim's
# groups of configurations each split by time (bach sim --configs
# --partial), a stand-in bach whose sim --configs takes no --partial, the
# errors, and no process left behind.
import json
import os
import shlex
import stat
import subprocess
import sys

import pytest

distributed = pytest.importorskip(
    "distributed", reason="python3-distributed missing (scripts/deps.sh)")
psutil = pytest.importorskip("psutil", reason="python3-psutil missing")

import bach.dist  # noqa: E402

BACH = os.path.abspath(os.environ.get("BACH") or os.path.join(
    os.path.dirname(__file__), "..", "..", "build", "bin", "bach"))


def cli(*args):
    return json.loads(subprocess.run([BACH, *map(str, args)], check=True,
                                     capture_output=True).stdout)


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    d = tmp_path_factory.mktemp("dask")
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True,
        dashboard_address=None, local_directory=str(d))
    c = distributed.Client(cluster)
    try:
        yield c
    finally:
        c.close()
        cluster.close()
    # the workers and their nannies are gone (multiprocessing's resource
    # tracker stays until this interpreter exits, as it always does)
    left = [p for p in psutil.Process().children(recursive=True)
            if p.pid not in before and
            "resource_tracker" not in " ".join(p.cmdline())]
    gone, alive = psutil.wait_procs(left, timeout=10)
    assert not alive, "left behind: %r" % [p.cmdline() for p in alive]


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    """A capture with gap markers in several segments (bachd's default
    .byu.zst), and a plain blocked .byu.gz."""
    d = tmp_path_factory.mktemp("disttraces")
    subprocess.run([BACH, "capture", "--driver", "fake",
                    "--option", "records=300000", "--option", "drop_every=7",
                    "--option", "overflow_every=5:300", "--policy", "drop",
                    "--set", "rotate_mb=1", "--output", str(d)],
                   check=True, capture_output=True)
    (cap,) = [p for p in d.iterdir() if p.is_dir()]
    assert len(list(cap.glob("seg-*.byu.zst"))) > 1
    events = [json.loads(x) for x in open(cap / "manifest.jsonl")]
    assert sum(e["event"] == "gap" for e in events) > 2
    g = d / "g.byu.gz"
    subprocess.run([BACH, "gen", "--records", "200000", "--seed", "5",
                    "-o", str(g)], check=True, capture_output=True)
    return {"capture": str(cap), "file": str(g)}


@pytest.fixture(scope="module")
def logged(tmp_path_factory):
    """A bach that logs each command line to a file, then runs bach."""
    d = tmp_path_factory.mktemp("logged")
    log = d / "log"
    w = d / "bach"
    w.write_text('#!/bin/sh\nprintf "%%s\\n" "$*" >> %s\nexec %s "$@"\n'
                 % (shlex.quote(str(log)), shlex.quote(BACH)))
    w.chmod(w.stat().st_mode | stat.S_IXUSR)
    return w, log


TRACES = ["capture", "file"]
MRC = [
    ({}, []),
    ({"assoc": 4}, ["--assoc", "4"]),
    ({"assoc": 8, "line": 64, "kind": "i", "sizes": "4k,64k,1M"},
     ["--assoc", "8", "--line", "64", "--kind", "i", "--sizes", "4k,64k,1M"]),
    ({"sample": 0.01, "min": "1k", "max": "1M"},
     ["--sample", "0.01", "--min", "1k", "--max", "1M"]),
    ({"reuse": True}, ["--reuse"]),
    ({"window": 10000}, ["--window", "10000"]),
    ({"type": "fetch,read", "addr": "0x100000-0x7fffffff"},
     ["--type", "fetch,read", "--addr", "0x100000-0x7fffffff"]),
]


@pytest.mark.parametrize("which", TRACES)
@pytest.mark.parametrize("kw,args", MRC)
def test_mrc_equals_bach(client, traces, which, kw, args):
    t = traces[which]
    line = ["--line", "32"] if "line" not in kw else []
    assert bach.dist.mrc(client, t, **kw) == cli("mrc", "--json", *line,
                                                 *args, t)


@pytest.mark.parametrize("which", TRACES)
def test_stat_equals_bach(client, traces, which):
    t = traces[which]
    assert bach.dist.stat(client, t) == cli("stat", "--json", t)
    assert bach.dist.stat(client, t, type=["fetch", "write"]) == \
        cli("stat", "--json", "--type", "fetch", "--type", "write", t)


def test_several_traces_as_one(client, traces):
    ts = [traces["file"], traces["capture"]]
    assert bach.dist.stat(client, ts, chunks=5) == cli("stat", "--json", *ts)


def test_tree_of_merges(client, traces, logged):
    """bach plan's chunks, one mrc --range --partial each, merged in
    consecutive pairs into partials, the root printing --json."""
    w, log = logged
    t = traces["capture"]
    log.write_text("")
    got = bach.dist.mrc(client, t, bach=str(w), chunks=7, fanin=2,
                        sizes="1k,16k,256k")
    assert got == cli("mrc", "--json", "--sizes", "1k,16k,256k", t)
    lines = log.read_text().splitlines()
    plan = cli("plan", "--chunks", 7, "--json", t)["chunks"]
    assert len(plan) == 7
    assert lines[0] == "plan --chunks 7 --json " + t
    runs = sorted(x for x in lines if x.startswith("mrc "))
    assert runs == sorted(
        "mrc --line 32 --sizes 1k,16k,256k --range %d:%d --partial - %s"
        % (c["start"], c["end"], t) for c in plan)
    merges = [x.split() for x in lines if x.startswith("merge ")]
    # 7 partials, pairs: 4, then 2, then the root of 2
    assert [m[1:3] for m in merges].count(["--partial", "-"]) == 6
    assert sorted(len(m) - 3 for m in merges if m[1] == "--partial") == \
        [1, 2, 2, 2, 2, 2]
    (root,) = [m for m in merges if m[1] == "--json"]
    assert len(root) == 4


def test_default_chunks_few_and_large(client, traces, logged):
    """By default one per worker thread: 2 chunks on 2 x 1."""
    w, log = logged
    log.write_text("")
    bach.dist.stat(client, traces["file"], bach=str(w))
    lines = log.read_text().splitlines()
    assert lines[0].startswith("plan --chunks 2 --json")
    assert sum(x.startswith("stat ") for x in lines) == 2


SIMS = ["--l1 16k:32:4",
        ["--l1i", "8k:32:2", "--l1d", "8k:32:2", "--l2", "256k:32:4"],
        "--l1 4k:32:full --tlb 64:4",
        "--l1 8k:64:2:fifo:wt:nwa --l2 64k:64:4",
        "--l1 8k:32:4:random"]


@pytest.mark.parametrize("which", TRACES)
def test_sim_equals_bach(client, traces, which):
    t = traces[which]
    want = [cli("sim", "--json", *(shlex.split(c) if isinstance(c, str)
                                   else c), t) for c in SIMS]
    assert bach.dist.sim(client, t, SIMS) == want
    # options common to every configuration; one group
    want = [cli("sim", "--json", *shlex.split(c), "--seed", 7, "--type",
                "fetch,read", t) for c in SIMS[::2]]
    assert bach.dist.sim(client, t, SIMS[::2], seed=7,
                         type="fetch,read", groups=1) == want


def test_sim_groups(client, traces, logged):
    """By default one group, cut into a chunk per worker thread (2): one
    bach sim --configs ALL --range A:B --partial - a chunk, one bach merge
    --json of the two; the results in the order given."""
    w, log = logged
    log.write_text("")
    t = traces["file"]
    got = bach.dist.sim(client, t, SIMS, bach=str(w))
    assert got == [cli("sim", "--json", *(shlex.split(c) if isinstance(
        c, str) else c), t) for c in SIMS]
    lines = [x for x in log.read_text().splitlines() if x != "sim --help"]
    plan = cli("plan", "--chunks", 2, "--json", t)["chunks"]
    assert len(plan) == 2
    assert lines.count("plan --chunks 2 --json " + t) == 1
    runs = sorted(x.split(" ", 3)[3] for x in lines if x.startswith("sim "))
    assert all(x.startswith("--threads 1 --range ") for x in runs), runs
    assert runs == sorted(
        "--threads 1 --range %d:%d --partial - %s" % (c["start"], c["end"], t)
        for c in plan)
    merges = [x.split() for x in lines if x.startswith("merge ")]
    assert len(merges) == 1 and all(m[1] == "--json" and len(m) == 4
                                    for m in merges)
    # groups=2, chunks=1: each group whole, one bach sim --configs --json
    # a group
    log.write_text("")
    assert bach.dist.sim(client, t, SIMS, bach=str(w), groups=2,
                         chunks=1) == got
    runs = [x for x in log.read_text().splitlines()
            if x.startswith("sim ") and x != "sim --help"]
    assert len(runs) == 2 and all(x.startswith("sim --configs ") and
                                  " --json " in x for x in runs), runs
    assert bach.dist.sim(client, t, []) == []


SWEEP = ["--l1 8k:32:2",
         "--l1i 8k:32:2 --l1d 8k:32:4 --l2 64k:32:8 --tlb 16:4",
         "--l1 4k:16:4:fifo:wt:nwa --l2 32k:64:8:random --seed 7",
         "--l1 4k:16:4 --l2 32k:64:8:random --l3 64k:64:4:random",
         "--l1=2k:32:64:random --l2 8k:16:4:fifo:wt"]


@pytest.mark.parametrize("which", TRACES)
@pytest.mark.parametrize("groups,chunks", [(1, 3), (2, 7), (5, 2), (3, 16)])
def test_sim_split_by_time(client, traces, logged, which, groups, chunks):
    """Groups x chunks of bach plan, a tree of merges a group (fanin 2):
    what bach sim --json prints for each configuration, filtered too."""
    w, log = logged
    log.write_text("")
    t = traces[which]
    got = bach.dist.sim(client, t, SWEEP, bach=str(w), groups=groups,
                        chunks=chunks, fanin=2)
    assert got == [cli("sim", "--json", *shlex.split(c), t) for c in SWEEP]
    plan = cli("plan", "--chunks", chunks, "--json", t)["chunks"]
    lines = log.read_text().splitlines()
    assert sum(x.startswith("sim --configs ") for x in lines) == \
        groups * len(plan)
    assert sum(x.startswith("merge --json ") for x in lines) == groups
    # (a line's --seed would win over seed=, as in bach sim --configs)
    some = SWEEP[1::2]
    got = bach.dist.sim(client, t, some, groups=groups, chunks=chunks,
                        type="fetch,write", seed=3)
    assert got == [cli("sim", "--json", *shlex.split(c), "--type",
                       "fetch,write", "--seed", 3, t) for c in some]


# A bach with `sim --configs FILE` (one pass over the trace; FILE one
# configuration a line, written as bach sim's options; --json an array,
# one entry a line, each what that configuration's bach sim --json
# prints), standing in until bach has it: it runs each line of FILE
# through the real bach sim --json.
CONFIGS_BACH = r'''#!%s
import json, subprocess, sys
BACH, LOG = %r, %r
a = sys.argv[1:]
open(LOG, "a").write(" ".join(a) + "\n")
if a == ["sim", "--help"]:
    # a sim --configs that takes no --partial (the groups run whole)
    sys.stdout.write(subprocess.run([BACH] + a, capture_output=True,
                                    text=True).stdout.replace(
        "holding each configuration's", ""))
    print("      --configs FILE   one configuration a line, one pass")
    sys.exit(0)
if a[0] == "sim" and "--configs" in a:
    i = a.index("--configs")
    lines = open(a[i + 1]).read().splitlines()
    rest = a[1:i] + a[i + 2:]
    if "--threads" in rest:  # one task, one thread: bach sim --configs's
        j = rest.index("--threads")
        rest = rest[:j] + rest[j + 2:]
    out = [json.loads(subprocess.run([BACH, "sim"] + l.split() + rest,
                                     check=True, capture_output=True).stdout)
           for l in lines]
    print(json.dumps(out))
    sys.exit(0)
sys.exit(subprocess.run([BACH] + a).returncode)
'''


def test_sim_configs_when_bach_has_it(client, traces, tmp_path):
    log = tmp_path / "log"
    w = tmp_path / "bach"
    w.write_text(CONFIGS_BACH % (sys.executable, BACH, str(log)))
    w.chmod(w.stat().st_mode | stat.S_IXUSR)
    t = traces["file"]
    want = [cli("sim", "--json", *(shlex.split(c) if isinstance(c, str)
                                   else c), "--seed", 3, t) for c in SIMS]
    assert bach.dist.sim(client, t, SIMS, bach=str(w), seed=3) == want
    runs = [x for x in log.read_text().splitlines()
            if x.startswith("sim ") and x != "sim --help"]
    assert len(runs) == 2
    assert all(x.startswith("sim --configs ") and
               x.endswith(" --json --seed 3 " + t) for x in runs)


def test_damaged_member_fails_as_bach_does(client, traces, tmp_path):
    bad = tmp_path / "bad.byu.gz"
    data = bytearray(open(traces["file"], "rb").read())
    data[len(data) // 2:len(data) // 2 + 64] = bytes(64)
    bad.write_bytes(data)
    whole = subprocess.run([BACH, "mrc", "--json", str(bad)],
                           capture_output=True, text=True)
    assert whole.returncode == 1
    with pytest.raises(bach.dist.CommandError) as e:
        bach.dist.mrc(client, str(bad))
    assert e.value.exit_status == whole.returncode
    assert whole.stderr.strip() in e.value.stderr
    assert str(bad) in str(e.value)


def test_bad_options(client, traces):
    with pytest.raises(bach.dist.CommandError) as e:
        bach.dist.mrc(client, traces["file"], assoc="seven")
    assert e.value.exit_status == 2 and "assoc" in e.value.stderr
    for k in ("range", "partial", "json", "csv"):
        with pytest.raises(ValueError, match=k):
            bach.dist.stat(client, traces["file"], **{k: "0:10"})
    with pytest.raises(ValueError, match="standard input"):
        bach.dist.stat(client, "-")
    with pytest.raises(TypeError):
        bach.dist.sim(client, traces["file"], "--l1 16k:32:4")


def test_options_mapping():
    assert bach.dist._options({"sizes": "1k,4k", "reuse": True, "kind": None,
                               "assoc": False, "chunk_records": 5,
                               "addr": ["0-0xff", "0x1000-0x1fff"]}) == \
        ["--sizes", "1k,4k", "--reuse", "--chunk-records", "5",
         "--addr", "0-0xff", "--addr", "0x1000-0x1fff"]


def test_find_bach(monkeypatch, tmp_path):
    monkeypatch.setenv("BACH", BACH)
    assert bach.dist.find_bach() == BACH
    assert bach.dist.find_bach("/bin/true") == "/bin/true"
    monkeypatch.delenv("BACH")
    monkeypatch.setenv("PATH", os.path.dirname(BACH))
    assert bach.dist.find_bach() == BACH
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="BACH"):
        bach.dist.find_bach()
