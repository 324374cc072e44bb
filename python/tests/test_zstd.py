# SPDX-License-Identifier: MIT
# .byu.zst through the Python module (docs/formats.md section 10): what
# bach.write() makes is read back by python3-zstandard frame by frame
# through the seek table (an independent zstd decoder), and what the bach
# tool writes is read by bach.open(), counted by len() and seeked, as the
# raw records numpy reads.
import os
import struct
import subprocess

import numpy as np
import pytest

import bach

zstandard = pytest.importorskip("zstandard")

BACH = os.environ.get("BACH") or os.path.join(
    os.path.dirname(__file__), "..", "..", "build", "bin", "bach")


def frames(data):
    """(frame bytes, decompressed size) from the seek table of data."""
    n, desc, magic = struct.unpack("<IBI", data[-9:])
    assert magic == 0x8F92EAB1 and desc == 0x80
    tab = len(data) - (8 + 12 * n + 9)
    assert struct.unpack("<II", data[tab:tab + 8]) == (0x184D2A5E,
                                                        12 * n + 9)
    off = 0
    for i in range(n):
        c, d, _ = struct.unpack_from("<III", data, tab + 8 + 12 * i)
        yield data[off:off + c], d
        off += c
    assert off == tab


@pytest.fixture(scope="module")
def raw(tmp_path_factory):
    d = tmp_path_factory.mktemp("zst")
    subprocess.run([BACH, "gen", "--records", "50000", "--seed", "9", "-o",
                    str(d / "a.byu")], check=True)
    return d, np.fromfile(d / "a.byu", dtype=bach.RECORD)


def test_write_read_by_zstandard(raw):
    d, recs = raw
    bach.write(d / "w.byu.zst", recs)
    dec = zstandard.ZstdDecompressor()
    out = b"".join(dec.decompress(f) for f, _ in
                   frames((d / "w.byu.zst").read_bytes()))
    assert out == recs.tobytes()
    assert not (d / "w.byu.zst.gzi").exists()


def test_open_len_seek(raw):
    d, recs = raw
    # frames of 64 KiB (the default 8 MiB makes these 50000 records one
    # frame): a seek lands inside a later frame, and a damage has frames
    # after it
    subprocess.run([BACH, "convert", "-q", "--zstd-frame-kb", "64",
                    str(d / "a.byu"), str(d / "c.byu.zst")], check=True)
    with bach.open(d / "c.byu.zst") as t:
        assert len(t) == len(recs)
        assert ".byu.zst" in repr(t)
        assert np.array_equal(np.concatenate(list(t)), recs)
    with bach.open(d / "c.byu.zst") as t:
        t.seek(40000)
        assert np.array_equal(t.read(5), recs[40000:40005])


def test_damaged_names_file_and_offset(raw):
    d, recs = raw
    data = bytearray((d / "c.byu.zst").read_bytes() if
                     (d / "c.byu.zst").exists() else b"")
    if not data:
        subprocess.run([BACH, "convert", "-q", "--zstd-frame-kb", "64",
                        str(d / "a.byu"), str(d / "c.byu.zst")], check=True)
        data = bytearray((d / "c.byu.zst").read_bytes())
    first = next(frames(bytes(data)))[0]
    data[len(first) + 300] ^= 0xFF
    (d / "bad.byu.zst").write_bytes(bytes(data))
    with pytest.raises(bach.BachError) as e:
        with bach.open(d / "bad.byu.zst") as t:
            for _ in t:
                pass
    assert "bad.byu.zst: bad zstd frame at byte offset %d" % len(first) \
        in str(e.value)
