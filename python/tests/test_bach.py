# SPDX-License-Identifier: MIT
# The Python module over libbach: what a user reading traces into numpy
# would check. Records are cross-checked against numpy's own reading of
# raw .byu files and against the bach tool.
import os
import struct
import subprocess

import numpy as np
import pytest

import bach

BACH = os.environ.get("BACH") or os.path.join(
    os.path.dirname(__file__), "..", "..", "build", "bin", "bach")


def run(*args):
    return subprocess.run([BACH, *map(str, args)], check=True,
                          capture_output=True).stdout


def python(code, *args, stdin=None):
    """code run by a child python (what a signal would end, or what reads
    standard input): its CompletedProcess."""
    return subprocess.run([os.sys.executable, "-c", code, *map(str, args)],
                          stdin=stdin, capture_output=True,
                          env=dict(os.environ))


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    d = tmp_path_factory.mktemp("traces")
    run("gen", "--records", 100000, "--seed", 5, "-o", d / "a.byu")
    run("gen", "--records", 100000, "--seed", 5, "-o", d / "a.byu.gz")
    raw = np.fromfile(d / "a.byu", dtype=bach.RECORD)
    return d, raw


@pytest.fixture(scope="module")
def capture(tmp_path_factory):
    d = tmp_path_factory.mktemp("cap")
    # 1 MiB segments; the board's FIFO overflows before every 50th frame
    subprocess.run([BACH, "capture", "--driver", "fake",
                    "--option", "records=400000", "--option", "seed=3",
                    "--option", "overflow_every=50:7",
                    "--set", "rotate_mb=1", "--output", str(d)],
                   check=True, capture_output=True)
    (cap,) = [p for p in d.iterdir() if p.is_dir()]
    # bachd's default segments, .byu.zst, as zstd itself reads them
    segs = sorted(cap.glob("seg-*.byu.zst"))
    assert len(segs) > 1
    raw = np.concatenate([np.frombuffer(subprocess.run(
        ["zstd", "-dcq", str(s)], check=True, capture_output=True).stdout,
        dtype=bach.RECORD) for s in segs])
    return cap, raw


def test_dtype_is_the_record():
    assert bach.RECORD.itemsize == 6
    a = np.frombuffer(bytes([0x04, 0x01, 0x6a, 0x08, 0x3f, 0x90]), bach.RECORD)
    assert a["address"][0] == 0x04016a08
    assert a["be"][0] == 0x3f
    assert bach.TYPE_NAMES[a["control"][0] >> 4] == "NC_I_FETCH"


def test_read_all_gz_and_raw(traces):
    d, raw = traces
    for name in ("a.byu", "a.byu.gz"):
        with bach.open(d / name) as t:
            got = t.read()
        assert got.dtype == bach.RECORD
        assert np.array_equal(got, raw), name


def test_chunks(traces):
    d, raw = traces
    chunks = list(bach.open(d / "a.byu.gz", chunk=30000))
    assert all(0 < len(c) <= 30000 for c in chunks)
    assert len(chunks) >= 4
    assert np.array_equal(np.concatenate(chunks), raw)


def test_read_n_and_tell(traces):
    d, raw = traces
    t = bach.open(d / "a.byu.gz")
    a = t.read(7)
    assert t.tell() == 7
    b = t.read(12345)
    assert t.tell() == 7 + 12345
    rest = t.read()
    assert np.array_equal(np.concatenate([a, b, rest]), raw)
    assert len(t.read(5)) == 0 and t.tell() == len(raw)


@pytest.mark.parametrize("name", ["a.byu", "a.byu.gz"])
def test_seek(traces, name):
    d, raw = traces
    t = bach.open(d / name)
    for rec in (54321, 0, 10879, 10880, 99999, 65280 // 6 * 3 + 1):
        t.seek(rec)
        assert t.tell() == rec
        assert np.array_equal(t.read(10), raw[rec:rec + 10]), rec
    t.seek(100000)
    assert len(t.read(10)) == 0
    t.seek(10 ** 12)
    assert len(t.read()) == 0


def test_seek_with_a_stale_index(traces, tmp_path):
    d, raw = traces
    # another trace's index, newer than the file: must not be trusted
    run("gen", "--records", 70000, "--seed", 9, "-o", tmp_path / "b.byu.gz")
    run("index", d / "a.byu.gz")
    other = (d / "a.byu.gz.gzi").read_bytes()
    (tmp_path / "b.byu.gz.gzi").write_bytes(other)
    st = os.stat(tmp_path / "b.byu.gz")
    os.utime(tmp_path / "b.byu.gz.gzi", (st.st_atime + 60, st.st_mtime + 60))
    want = np.fromfile(tmp_path / "b.byu", dtype=bach.RECORD) if (
        tmp_path / "b.byu").exists() else bach.open(tmp_path / "b.byu.gz").read()
    t = bach.open(tmp_path / "b.byu.gz")
    t.seek(65000)
    assert np.array_equal(t.read(10), want[65000:65010])
    # and an index of the right file, with every record offset moved on
    raw_idx = bytearray(other)
    n = struct.unpack_from("<Q", raw_idx)[0]
    for i in range(n):
        c, u = struct.unpack_from("<QQ", raw_idx, 8 + 16 * i)
        struct.pack_into("<QQ", raw_idx, 8 + 16 * i, c, u + 6)
    (d / "a.byu.gz.gzi").write_bytes(bytes(raw_idx))
    t = bach.open(d / "a.byu.gz")
    t.seek(60000)
    assert np.array_equal(t.read(10), raw[60000:60010])


def test_standard_input_goes_forward(traces):
    d, raw = traces
    code = ("import bach, sys\n"
            "t = bach.open('-')\n"
            "t.seek(50000); a = t.read(2)\n"
            "t.seek(50010); b = t.read(2)\n"
            "t.seek(90000); c = t.read(2)\n"
            "sys.stdout.buffer.write(a.tobytes() + b.tobytes() + c.tobytes())\n"
            "try:\n    t.seek(10)\nexcept bach.BachError as e:\n"
            "    sys.stderr.write(str(e))\n")
    with open(d / "a.byu.gz", "rb") as f:
        p = python(code, stdin=f)
    assert p.returncode == 0, p.stderr
    # (np.concatenate would make the fields native-endian: bytes differ)
    want = b"".join(raw[i:i + 2].tobytes() for i in (50000, 50010, 90000))
    assert p.stdout == want
    assert b"<stdin>: cannot seek back to record 10" in p.stderr


def test_capture_directory(capture):
    cap, raw = capture
    with bach.open(cap) as t:
        assert np.array_equal(t.read(), raw)
        for rec in (0, 174761, 174762, 174763, 349530, len(raw) - 3):
            t.seek(rec)
            assert np.array_equal(t.read(5), raw[rec:rec + 5]), rec


def test_gaps_and_their_causes(capture):
    cap, raw = capture
    gaps = bach.open(cap).gaps()
    assert gaps, "the board overflowed: there are gaps"
    assert {g["cause"] for g in gaps} == {"overflow"}
    assert all(g["lost"] == 7 for g in gaps)
    # the manifest's ended event counts the same loss
    import json
    ended = [json.loads(l) for l in open(cap / "manifest.jsonl")
             if '"ended"' in l][-1]
    assert sum(g["lost"] for g in gaps) == ended["lost"]
    # each gap's marker is the record at its position: INVALID, 0f, lost
    for g in gaps:
        m = raw[g["at"]]
        assert m["control"] == 0x0F and m["address"] == g["lost"], g


def test_errors_name_the_file_and_offset(traces, tmp_path):
    d, raw = traces
    cut = tmp_path / "cut.byu.gz"
    cut.write_bytes((d / "a.byu.gz").read_bytes()[:30000])
    t = bach.open(cut)
    with pytest.raises(bach.BachError) as e:
        t.read()
    assert "cut.byu.gz: truncated gzip member at byte offset" in str(e.value)
    assert e.value.exit_status == 1
    with pytest.raises(bach.BachError) as e:
        bach.open(tmp_path / "missing.byu")
    assert "missing.byu" in str(e.value) and e.value.exit_status == 2


def test_write_round_trip(traces, tmp_path):
    d, raw = traces
    part = raw[1000:40000]
    bach.write(tmp_path / "w.byu.gz", part)
    assert np.array_equal(bach.open(tmp_path / "w.byu.gz").read(), part)
    # the tool reads it the same
    want = run("dump", "--range", "1000:40000", d / "a.byu")
    assert run("dump", tmp_path / "w.byu.gz") == want
    bach.write(tmp_path / "w.byu", part)
    assert (tmp_path / "w.byu").read_bytes() == part.tobytes()


# record numbers whose byte offsets do not fit in 64 bits: 6 * (2**63 + 5)
# wraps to 30 (record 5), 6 * 3074457345618258603 to 2 (byte 2)
FAR = [2**64 - 1, 2**64 - 2, 2**64 - 6, 2**63 + 5, 2**63, 2**63 - 1,
       3074457345618258601, 3074457345618258602, 3074457345618258603,
       3074457345618258604, 1537228672809129302]


@pytest.mark.parametrize("name", ["a.byu", "a.byu.gz", "plain.byu.gz"])
def test_seek_far_past_the_end(traces, name):
    d, raw = traces
    if name == "plain.byu.gz" and not (d / name).exists():
        import gzip
        (d / name).write_bytes(gzip.compress((d / "a.byu").read_bytes(), 1))
    t = bach.open(d / name)
    for rec in FAR:
        t.seek(rec)
        assert t.tell() == rec
        assert len(t.read()) == 0, rec
        assert t.tell() == rec
        t.seek(rec)
        assert list(t) == [], rec
        t.seek(rec)
        assert len(t.read(10)) == 0 and t.tell() == rec
    # a range whose end is far: what there is, and no more
    t.seek(len(raw) - 5)
    assert np.array_equal(t.read(3074457345618258603), raw[-5:])
    with pytest.raises(OverflowError):
        t.seek(2**64)
    with pytest.raises(ValueError):
        t.seek(-1)
    # and back: the trace reads right
    t.seek(3)
    assert np.array_equal(t.read(4), raw[3:7])


def test_seek_far_in_a_capture(capture):
    cap, raw = capture
    with bach.open(cap) as t:
        for rec in FAR:
            t.seek(rec)
            assert len(t.read()) == 0 and t.tell() == rec, rec
        t.seek(len(raw) - 2)
        assert np.array_equal(t.read(2**63), raw[-2:])


def test_standard_input_seeks_replace(traces):
    d, raw = traces
    # a second seek before any read goes where it says, not that far on
    code = ("import bach, sys\n"
            "t = bach.open('-')\n"
            "t.seek(10); t.seek(20)\n"
            "assert t.tell() == 20, t.tell()\n"
            "a = t.read(1)\n"
            "t.seek(2**63 + 5)\n"
            "assert t.tell() == 2**63 + 5, t.tell()\n"
            "b = t.read()\n"
            "sys.stdout.buffer.write(a.tobytes() + b.tobytes())\n")
    with open(d / "a.byu.gz", "rb") as f:
        p = python(code, stdin=f)
    assert p.returncode == 0, p.stderr
    assert p.stdout == raw[20:21].tobytes()


def test_file_truncated_while_read(traces, tmp_path):
    d, raw = traces
    # another process cuts the file after the first block was read: the
    # records before the cut, then an error naming the file and offset,
    # never SIGBUS (in a child: a signal would end pytest itself)
    big = tmp_path / "big.byu"
    big.write_bytes((d / "a.byu").read_bytes() * 3)
    code = ("import bach, os, sys\n"
            "t = bach.open(sys.argv[1], chunk=1000)\n"
            "n = len(next(t))\n"
            "os.truncate(sys.argv[1], 6 * 200000)\n"
            "try:\n"
            "    for c in t:\n"
            "        n += len(c)\n"
            "except bach.BachError as e:\n"
            "    print(n, e.exit_status, e)\n")
    p = python(code, big)
    assert p.returncode == 0, (p.returncode, p.stderr)
    assert p.stdout.decode() == (
        "200000 1 %s: truncated while being read: 1800000 bytes when "
        "opened, 1200000 now; reading stopped at byte offset 1200000\n"
        % big)


@pytest.mark.parametrize("chunk", [0, -1])
def test_chunk_of_no_records_refused(traces, chunk):
    d, raw = traces
    with pytest.raises(ValueError, match="chunk"):
        bach.open(d / "a.byu", chunk=chunk)


def test_closed_trace_says_so(traces):
    d, raw = traces
    t = bach.open(d / "a.byu")
    t.read(3)
    t.close()
    for call in (t.read, t.tell, lambda: t.seek(0), lambda: next(t)):
        with pytest.raises(ValueError, match="closed trace"):
            call()


def test_write_refuses_other_arrays(tmp_path):
    for bad in (np.zeros(3), np.zeros(3, dtype=[("address", ">u4")]),
                [1, 2, 3]):
        with pytest.raises(TypeError, match="bach.RECORD") as e:
            bach.write(tmp_path / "w.byu", bad)
        assert "dtype" in str(e.value)
    assert not (tmp_path / "w.byu").exists()


def test_to_pandas(traces):
    pd = pytest.importorskip("pandas")
    d, raw = traces
    t = bach.open(d / "a.byu.gz")
    t.seek(99990)
    df = t.to_pandas()
    assert isinstance(df, pd.DataFrame) and len(df) == 10
    assert list(df["address"]) == [int(a) for a in raw["address"][99990:]]
    assert list(df["type"]) == [bach.TYPE_NAMES[c >> 4]
                                for c in raw["control"][99990:]]


# ---- timing sidecars: the `time` field, against bach dump --time ----------

@pytest.fixture(scope="module")
def timed(tmp_path_factory):
    d = tmp_path_factory.mktemp("timed")
    # the fake board's clocks; every 4th frame lost on the link (gap
    # markers); 1 MiB segments, so several sidecars
    subprocess.run([BACH, "capture", "--driver", "fake",
                    "--option", "records=400000", "--option", "seed=3",
                    "--option", "frame=1000", "--option", "drop_every=4",
                    "--option", "timing=1", "--set", "rotate_mb=1",
                    "--output", str(d)], check=True, capture_output=True)
    (cap,) = [p for p in d.iterdir() if p.is_dir()]
    return cap


def dump_clocks(*args):
    """The clock column of bach dump --time ('-' as TIME_NONE)."""
    out = run("dump", "--time", *args).split(b"\n")
    return np.array([bach.TIME_NONE if f[3] == b"-" else int(f[3])
                     for f in (line.split() for line in out if line)],
                    dtype=np.uint64)


def test_time_field_is_dump_time(timed):
    want = dump_clocks(timed)
    assert len({p.name for p in timed.glob("seg-*.time.gz")}) > 1
    with bach.open(timed, chunk=50000) as t:
        assert t.timed and t.dtype == bach.TIMED
        chunks = list(t)
        assert t.clock_hz == 66666666
    assert all(c.dtype == bach.TIMED for c in chunks)
    got = np.concatenate(chunks)
    assert len(got) == len(want)
    assert np.array_equal(got["time"], want)
    # the records are those of the untimed reading
    with bach.open(timed, time=False) as t:
        assert t.dtype == bach.RECORD
        plain = t.read()
    assert np.array_equal(got["address"], plain["address"])
    assert np.array_equal(got["control"], plain["control"])
    df = bach.open(timed).to_pandas()
    assert np.array_equal(df["time"].to_numpy(), want)
    assert np.array_equal(df["address"].to_numpy(), plain["address"])


def test_time_after_seek_and_read_n(timed):
    want = dump_clocks("--range", "123456:123556", timed)
    with bach.open(timed) as t:
        t.seek(123456)
        a = t.read(60)
        b = t.read(40)
    assert np.array_equal(np.concatenate([a, b])["time"], want)


def test_time_errors_name_the_sidecar(timed, traces, tmp_path):
    seg = sorted(timed.glob("seg-*.byu.zst"))[0]
    (tmp_path / "d.byu.zst").write_bytes(seg.read_bytes())
    side = seg.with_name(seg.name.replace(".byu.zst", ".time.gz"))
    data = side.read_bytes()  # cut in its first member (BSIZE + 1 bytes)
    (tmp_path / "d.time.gz").write_bytes(data[:int.from_bytes(data[16:18], "little") + 1 - 10])
    with pytest.raises(bach.BachError) as e:
        bach.open(tmp_path / "d.byu.zst").read()
    assert "d.time.gz: truncated gzip member at byte offset" in str(e.value)
    assert e.value.exit_status == 1
    d, _ = traces
    assert not bach.open(d / "a.byu.gz").timed
    with pytest.raises(bach.BachError) as e:
        bach.open(d / "a.byu.gz", time=True).read(1)
    assert "a.time.gz: no timing sidecar" in str(e.value)
    assert e.value.exit_status == 2


def copy_capture(src, dst):
    """A capture directory copied, times kept (a .byu.gz's .gzi stays
    fresh)."""
    import shutil
    shutil.copytree(src, dst)
    return dst


def test_time_going_back_is_refused(tmp_path):
    # segments 1 and 2 hold as many records (nothing lost, 1 MiB each):
    # their sidecars swapped, the clocks jump back where segment 2 begins
    # (docs/formats.md 3.2)
    subprocess.run([BACH, "capture", "--driver", "fake",
                    "--option", "records=400000", "--option", "timing=1",
                    "--set", "rotate_mb=1", "--output", str(tmp_path)],
                   check=True, capture_output=True)
    (d,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    a, b = d / "seg-000001.time.gz", d / "seg-000002.time.gz"
    a_bytes = a.read_bytes()
    a.write_bytes(b.read_bytes())
    b.write_bytes(a_bytes)
    with pytest.raises(bach.BachError) as e:
        bach.open(d).read()
    assert "seg-000002.time.gz: entry 0 (in the member at byte offset 0)" \
        in str(e.value)
    assert "the clocks go backwards from one segment to the next" \
        in str(e.value)
    assert e.value.exit_status == 1


def test_untimed_segment_of_a_timed_capture(timed, tmp_path):
    # segment 2 without a sidecar, its event naming none (as recovery
    # leaves a segment whose sidecar held nothing whole): its records
    # read without a time, the others with theirs
    want = dump_clocks(timed)
    d = copy_capture(timed, tmp_path / "un")
    (d / "seg-000002.time.gz").unlink()
    man = (d / "manifest.jsonl").read_text().split("\n")
    n2 = None
    for i, line in enumerate(man):
        if '"name":"seg-000002.byu.zst"' in line:
            n2 = int(line.split('"records":')[1].split(",")[0])
            cut = line.index(',"timing":')
            man[i] = line[:cut] + "}"
    (d / "manifest.jsonl").write_text("\n".join(man))
    n1 = len(bach.open(timed / "seg-000001.byu.zst", time=False).read())
    got = bach.open(d).read()
    assert len(got) == len(want)
    assert np.all(got["time"][n1:n1 + n2] == bach.TIME_NONE)
    assert np.array_equal(got["time"][:n1], want[:n1])
    assert np.array_equal(got["time"][n1 + n2:], want[n1 + n2:])
    # while its event names one, a missing sidecar is damage
    d2 = copy_capture(timed, tmp_path / "gone")
    (d2 / "seg-000002.time.gz").unlink()
    with pytest.raises(bach.BachError) as e:
        bach.open(d2).read()
    assert "seg-000002.time.gz: missing: " in str(e.value)
    assert e.value.exit_status == 1


# ---- marks, --between, labels, len(), repr, clock_hz, Categorical type ----

@pytest.fixture(scope="module")
def marked(tmp_path_factory):
    """A capture with in-band markers (the POST port, as
    tests/cli/markers.sh makes them), labels, 1 MiB segments, and three
    user marks written into its manifest out of trace order, two with
    the same text (the first in trace order is the one that counts)."""
    d = tmp_path_factory.mktemp("marked")
    subprocess.run([BACH, "capture", "--driver", "fake",
                    "--option", "records=300000", "--option", "seed=7",
                    "--set", "marker=io:0x80", "--set", "marker_rate=1000000",
                    "--set", "rotate_mb=1", "--label", "machine=p166",
                    "--label", "run=7", "--output", str(d)],
                   check=True, capture_output=True)
    (cap,) = [p for p in d.iterdir() if p.is_dir()]
    with (cap / "manifest.jsonl").open("a") as f:
        for at, text in ((250000, "end"), (1000, "go"), (200000, "go")):
            f.write('{"time":"2026-11-26T14:00:00.000Z","event":"mark",'
                    '"segment":"seg-000001.byu.zst","at":%d,"record":%d,'
                    '"source":"ctl","text":"%s"}\n' % (at, at, text))
    return cap


def between_cli(cap, a, b, tmp_path):
    """The records bach convert --between A B writes, as bytes."""
    out = tmp_path / ("w%d.byu" % len(list(tmp_path.iterdir())))
    run("convert", "--between", a, b, cap, out)
    return out.read_bytes()


def test_marks_are_where_bach_finds_them(marked):
    with bach.open(marked) as t:
        marks = t.marks()
    assert [m["text"] for m in marks if m["text"]] == ["go", "go", "end"]
    markers = [m for m in marks if m["source"] == "marker"]
    assert len(markers) > 10 and all(m["text"] is None for m in markers)
    assert all("record" in m and "at" in m for m in marks)
    assert [m["at"] for m in marks] == sorted(m["at"] for m in marks)
    # each marker's position is where bach dump --between starts on its
    # address, counted from the one before (csv keeps trace indexes)
    for k in (markers[0], markers[5]):
        csv = run("dump", "--format", "csv", "-n", 1, "--between",
                  k["address"], k["address"], marked).decode()
        first = csv.split("\n")[1].split(",")
        assert int(first[0]) == markers[0]["at"]
        assert int(first[1], 16) == int(k["address"], 16)
    go = next(m for m in marks if m["text"] == "go")
    csv = run("dump", "--format", "csv", "-n", 1, "--between", "go", "end",
              marked).decode()
    assert int(csv.split("\n")[1].split(",")[0]) == go["at"] == 1000


def test_between_is_dump_between(marked, tmp_path):
    marks = bach.open(marked).marks()
    markers = [m for m in marks if m["source"] == "marker"]
    addr = markers[0]["address"]
    for a, b in (("go", "end"), ("go", "go"), (addr, addr), ("0x80", "end"),
                 ("128", "0x80"), ("end", "0x80")):
        try:
            want = between_cli(marked, a, b, tmp_path)
        except subprocess.CalledProcessError as e:
            assert e.returncode == 2
            with pytest.raises(ValueError, match="no mark matching"):
                bach.open(marked).between(a, b)
            continue
        with bach.open(marked) as t:
            got = t.between(a, b).read()
            assert len(t.read()) == 0, "reading stops at the window's end"
        assert got.tobytes() == want, (a, b)
        assert len(got) > 0
    # entries of marks(): that very mark (the second "go", not the first)
    go2 = [m for m in marks if m["text"] == "go"][1]
    end = next(m for m in marks if m["text"] == "end")
    raw = bach.open(marked).read()
    with bach.open(marked) as t:
        got = t.between(go2, end).read()
    assert np.array_equal(got, raw[go2["at"]:end["at"]])
    # an int is an address, as the word is
    with bach.open(marked) as t:
        assert t.between(0x80, "end").read().tobytes() == \
            between_cli(marked, "0x80", "end", tmp_path)
        # and chunks stop at the window's end too
        n = sum(len(c) for c in t.between("go", "end"))
    assert n == 250000 - 1000
    with pytest.raises(ValueError, match="no mark matching 'nowhere'"):
        bach.open(marked).between("nowhere", "end")


def test_between_after_retention(marked, tmp_path):
    # retention removed segment 1: positions are the capture's, the
    # trace read starts at segment 2 (the CLI's rule, compared)
    d = copy_capture(marked, tmp_path / "ret")
    for f in d.glob("seg-000001.*"):
        f.unlink()
    with (d / "manifest.jsonl").open("a") as f:
        f.write('{"time":"2026-11-26T14:00:01.000Z","event":"retention",'
                '"name":"seg-000001.byu.zst","bytes":1,"reason":"keep_bytes"}\n')
    want = between_cli(d, "end", "0x80", tmp_path)
    with bach.open(d) as t:
        assert t.between("end", "0x80").read().tobytes() == want
    assert len(want) > 0
    with pytest.raises(subprocess.CalledProcessError):
        between_cli(d, "go", "end", tmp_path)
    with pytest.raises(ValueError, match="retention removed"):
        bach.open(d).between("go", "end")


def test_damaged_mark_named(marked, tmp_path):
    d = copy_capture(marked, tmp_path / "bad")
    with (d / "manifest.jsonl").open("a") as f:
        f.write('{"time":"2026-11-26T14:00:01.000Z","event":"mark",'
                '"at":"soon","source":"ctl","text":"x"}\n')
    n = len((d / "manifest.jsonl").read_text().split("\n")) - 1
    with pytest.raises(bach.BachError) as e:
        bach.open(d).marks()
    # as bach dump --between words it
    p = subprocess.run([BACH, "dump", "--between", "go", "end", d],
                       capture_output=True)
    assert p.returncode == 1
    assert p.stderr.decode() == "bach dump: --between: %s\n" % e.value
    assert str(e.value) == \
        '%s/manifest.jsonl: line %d: "at" is not a record index' % (d, n)
    assert e.value.exit_status == 1


def test_labels_and_manifest(marked, traces):
    with bach.open(marked) as t:
        assert t.labels == {"machine": "p166", "run": "7"}
        assert t.manifest[0]["event"] == "started"
        assert t.manifest[-1]["event"] == "mark"
        assert any(e["event"] == "ended" for e in t.manifest)
    d, raw = traces
    with bach.open(d / "a.byu") as t:
        assert t.manifest is None and t.labels == {} and t.marks() == []
        with pytest.raises(ValueError, match="capture directory"):
            t.between("a", "b")


def test_len_without_reading(traces, capture, tmp_path):
    import gzip
    d, raw = traces
    assert len(bach.open(d / "a.byu")) == len(raw) == 100000
    t = bach.open(d / "a.byu.gz")
    assert len(t) == 100000 and t.tell() == 0
    cap, craw = capture
    assert len(bach.open(cap)) == len(craw)
    # the manifest's segment events say as much
    import json
    segs = [json.loads(l) for l in open(cap / "manifest.jsonl")
            if '"event":"segment"' in l]
    assert len(bach.open(cap)) == sum(s["records"] for s in segs)
    # a blocked file without its index: counted from its members
    (tmp_path / "n.byu.gz").write_bytes((d / "a.byu.gz").read_bytes())
    assert not (tmp_path / "n.byu.gz.gzi").exists()
    assert len(bach.open(tmp_path / "n.byu.gz")) == 100000
    assert len(bach.open(d / "a.byu", d / "a.byu.gz")) == 200000
    # plain gzip, standard input: not countable without reading
    (tmp_path / "p.byu.gz").write_bytes(
        gzip.compress((d / "a.byu").read_bytes(), 1))
    with pytest.raises(TypeError, match="p.byu.gz"):
        len(bach.open(tmp_path / "p.byu.gz"))
    code = ("import bach\n"
            "try:\n    len(bach.open('-'))\n"
            "except TypeError as e:\n    print(e)\n")
    with open(d / "a.byu", "rb") as f:
        p = python(code, stdin=f)
    assert b"standard input" in p.stdout, p.stderr


def test_repr(traces, capture):
    d, raw = traces
    r = repr(bach.open(d / "a.byu.gz"))
    assert "a.byu.gz" in r and ".byu.gz" in r and "100000 records" in r
    cap, craw = capture
    t = bach.open(cap)
    assert str(cap) in repr(t) and "capture" in repr(t) \
        and "%d records" % len(craw) in repr(t)
    t.close()
    assert "closed" in repr(t)


def test_clock_hz_from_open_to_after_close(timed):
    t = bach.open(timed)
    assert t.clock_hz == 66666666, "known before the first read"
    want = dump_clocks("--range", "0:5", timed)
    assert np.array_equal(t.read(5)["time"], want), "nothing lost to it"
    assert t.tell() == 5
    t.close()
    assert t.clock_hz == 66666666, "and after close"
    t = bach.open(timed)
    t.close()
    assert t.clock_hz == 66666666, "closed unread"


def test_to_pandas_type_is_categorical(tmp_path):
    pd = pytest.importorskip("pandas")
    run("gen", "--records", 3000000, "--seed", 4, "-o", tmp_path / "m.byu")
    raw = np.fromfile(tmp_path / "m.byu", dtype=bach.RECORD)
    df = bach.open(tmp_path / "m.byu").to_pandas()
    assert isinstance(df["type"].dtype, pd.CategoricalDtype)
    assert list(df["type"].cat.categories) == list(dict.fromkeys(
        bach.TYPE_NAMES))
    assert (df["type"].astype(str).to_numpy()
            == np.array(bach.TYPE_NAMES)[raw["control"] >> 4]).all()
    obj = df["type"].astype(object)
    cat_bytes = df["type"].memory_usage(deep=True)
    # one byte a record, and well below strings
    assert cat_bytes < 2 * len(df) < obj.memory_usage(deep=True) / 10
