# SPDX-License-Identifier: MIT
"""BYU address traces of Intel Pentium machines, as numpy arrays.

    import bach
    with bach.open("capture/20261121T223000Z") as t:   # .byu, .byu.gz, .byu.zst, dir, "-"
        for chunk in t:                 # numpy structured arrays, in chunks
            print(chunk["address"][:4], chunk["control"] >> 4)
        t.seek(1_000_000_000)           # through the segments' seek tables
        ten = t.read(10)
        t.gaps()                        # the capture's gaps and their causes
        t.marks(), t.between("a", "b")  # its marks; bach dump --between

A record is the 6-byte BYU record: dtype RECORD, fields address (uint32,
big-endian as on disk), be (BE#, uint8) and control (uint8); its type is
control >> 4 (TYPE_NAMES). When the trace has timing sidecars (NAME.time.gz,
docs/formats.md 3.2), records are of dtype TIMED: the same and time
(uint64 clocks, TIME_NONE where unknown; seconds = time / t.clock_hz). The module is libbach.so.0 through cffi;
errors raise BachError with the library's message, which names the file
and the byte offset.
"""
import builtins
import errno

import numpy as np

from ._lib import ffi, lib, libc

__all__ = ["open", "write", "Trace", "BachError", "RECORD", "TIMED",
           "TIME_NONE", "TYPE_NAMES", "version"]

RECORD = np.dtype([("address", ">u4"), ("be", "u1"), ("control", "u1")])
assert RECORD.itemsize == lib.BACH_REC_SIZE
# a record with its time from the timing sidecar (bus clocks, or samples
# for bach decode's traces)
TIMED = np.dtype([("address", ">u4"), ("be", "u1"), ("control", "u1"),
                  ("time", "<u8")])
TIME_NONE = lib.BACH_TIME_NONE
TYPE_NAMES = [ffi.string(lib.bach_type_name(t)).decode() for t in range(16)]
# what to_pandas() gives: native byte order
NATIVE = np.dtype([("address", "=u4"), ("be", "u1"), ("control", "u1")])


def version():
    """The library's version, e.g. '0.1.0'."""
    return ffi.string(lib.bach_version()).decode()


class BachError(Exception):
    """A failure of libbach: str() is its message (file and offset),
    .errno the error number, .exit_status what the tools would exit with
    (1 damaged data, 2 anything else)."""

    def __init__(self, err, msg):
        super().__init__(msg)
        self.errno = -err
        self.exit_status = lib.bach_exit_status(err)


def _path(p):
    import os
    return os.fsencode(p)


class Trace:
    """A trace opened for reading: one or more paths read as one trace."""

    def __init__(self, *paths, chunk=1 << 20, time=None):
        if not paths:
            raise ValueError("bach.open: no path")
        self.chunk = int(chunk)
        if self.chunk < 1:
            # a chunk of no records would be given forever
            raise ValueError("bach.open: chunk must be at least 1 record, "
                             "not %r" % (chunk,))
        self._paths = [str(p) for p in paths]
        self._r = ffi.gc(lib.bach_reader_new(), lib.bach_reader_free)
        if self._r == ffi.NULL:
            raise MemoryError()
        self._pp = ffi.new("const uint8_t **")
        self._tp = ffi.new("const uint64_t **")
        self._pending = None    # records read from the library, not yet given
        for p in paths:
            self._check(lib.bach_reader_add(self._r, _path(p)))
        if time is None:
            time = all(p != "-" and lib.bach_times_present(_path(p))
                       for p in self._paths)
        self.timed = bool(time)
        self.dtype = TIMED if self.timed else RECORD
        self._clock_hz = 0
        self._events = None     # the capture's manifest, read once

    @property
    def clock_hz(self):
        """The clock rate of the timing sidecar, in Hz: the bus clock of
        a capture, the sample rate of bach decode's output; 0 when the
        trace has no sidecar or it does not say. Known from open (the
        first block is read ahead for it) until after close."""
        if self._r is not None and self.timed and not self._clock_hz:
            if self._pending is None:
                # the sidecar says its rate once read: read ahead one
                # block, which the next read gives
                self._pending = self._block()
            self._clock_hz = lib.bach_reader_clock_hz(self._r)
        return self._clock_hz

    def _check(self, err):
        if err < 0:
            raise BachError(err, ffi.string(
                lib.bach_reader_strerror(self._r)).decode(errors="replace"))
        return err

    def _open(self):
        """The library's reader; ValueError once closed, as a file's."""
        if self._r is None:
            raise ValueError("I/O operation on a closed trace")
        return self._r

    def _block(self):
        """The next block of the library as a numpy array (a copy), or
        None at the end."""
        self._open()
        n = self._check(lib.bach_reader_read(self._r, self._pp))
        if self.timed:
            # the entries of those records (at the end: the check that
            # the last sidecar holds no more)
            self._check(lib.bach_reader_times(self._r, self._tp))
        if n == 0:
            return None
        # copied as bytes: numpy copies a structured dtype field by field,
        # ten times slower than the plain bytes
        recs = np.frombuffer(ffi.buffer(self._pp[0], n * 6),
                             dtype=np.uint8).copy().view(RECORD)
        if not self.timed:
            return recs
        out = np.empty(n, TIMED)
        for f in ("address", "be", "control"):
            out[f] = recs[f]
        out["time"] = np.frombuffer(ffi.buffer(self._tp[0], n * 8), "<u8")
        return out

    def read(self, n=-1):
        """Up to n records (all that are left when n < 0) as one array;
        an empty array at the end."""
        self._open()
        if self.timed:
            return self._read_timed(n)
        # the library's blocks go straight into one numpy buffer, grown by
        # doubling (numpy asks for huge pages for big arrays: fresh memory
        # costs more than the copies)
        buf = np.empty(1 << 20 if n < 0 else min(n * 6, 1 << 26), np.uint8)
        have = 0
        if self._pending is not None:
            p = self._pending.view(np.uint8)
            if len(p) > len(buf):
                buf = np.empty(len(p), np.uint8)
            buf[:len(p)] = p
            have = len(p)
            self._pending = None
        want = -1 if n < 0 else n * 6
        while want < 0 or have < want:
            k = self._check(lib.bach_reader_read(self._r, self._pp))
            if k == 0:
                break
            if have + k * 6 > len(buf):
                grown = np.empty(max(2 * len(buf), have + k * 6), np.uint8)
                grown[:have] = buf[:have]
                buf = grown
            buf[have:have + k * 6] = np.frombuffer(
                ffi.buffer(self._pp[0], k * 6), np.uint8)
            have += k * 6
        out = buf[:have].view(RECORD)
        if 0 <= n < len(out):
            self._pending = out[n:].view(np.uint8).copy().view(RECORD)
            out = out[:n]
        return out

    def _read_timed(self, n):
        parts, have = [], 0
        if self._pending is not None:
            parts.append(self._pending)
            have = len(self._pending)
            self._pending = None
        while n < 0 or have < n:
            b = self._block()
            if b is None:
                break
            parts.append(b)
            have += len(b)
        out = np.concatenate(parts) if parts else np.empty(0, TIMED)
        if 0 <= n < len(out):
            self._pending = out[n:].copy()
            out = out[:n]
        return out

    def __iter__(self):
        return self

    def __next__(self):
        """The next chunk: at most `chunk` records, as the library reads
        them (whole blocks, never split unless longer than a chunk)."""
        if self._pending is not None:
            out, self._pending = self._pending, None
        else:
            out = self._block()
            if out is None:
                raise StopIteration
        if len(out) > self.chunk:
            self._pending = out[self.chunk:]
            out = out[:self.chunk]
        return out

    def seek(self, rec):
        """Go to record rec of the whole trace (from 0); through the seek
        table of .byu.zst files and the .gzi index of blocked .byu.gz
        files, checked before it is trusted.
        Past the end, reads give nothing. Standard input: forward only."""
        r = self._open()
        if rec < 0:
            raise ValueError("seek: negative record index")
        if rec > (1 << 64) - 1:
            raise OverflowError("seek: record index above 2**64 - 1")
        if self._pending is not None:
            # within what was read ahead: no need to ask the library
            # (which is past it, and standard input cannot go back)
            at = self.tell()
            if at <= rec < at + len(self._pending):
                self._pending = self._pending[rec - at:]
                return
        self._pending = None
        self._check(lib.bach_reader_seek(r, int(rec)))

    def tell(self):
        """The index of the next record."""
        pending = 0 if self._pending is None else len(self._pending)
        return lib.bach_reader_records(self._open()) - pending

    def gaps(self):
        """The gaps of the capture directories among the paths, as dicts
        (at, lost, cause, segment, capture), in order; at is the record
        index within that capture."""
        import os
        out = []
        for p in self._paths:
            if not os.path.isdir(p):
                continue
            gp = ffi.new("struct bach_gap **")
            msg = ffi.new("char[]", 512)
            n = lib.bach_capture_gaps(_path(p), gp, msg, 512)
            if n < 0:
                raise BachError(n, ffi.string(msg).decode(errors="replace"))
            try:
                for i in range(n):
                    g = gp[0][i]
                    out.append({"at": g.at, "lost": g.lost,
                                "cause": ffi.string(g.cause).decode(),
                                "segment": ffi.string(g.segment).decode(),
                                "capture": p})
            finally:
                libc.free(gp[0])
        return out

    def to_pandas(self):
        """The records left, as a pandas DataFrame: address, be, control
        (native integers), type (a Categorical of the names, INVALID
        once for the types that have none)."""
        import pandas as pd
        r = self.read()
        a = r[["address", "be", "control"]].astype(NATIVE)
        # codes into the 16 names: one byte a record, where strings
        # would take an object each (1.5 GB for 19 M records)
        names = list(dict.fromkeys(TYPE_NAMES))
        code = np.array([names.index(n) for n in TYPE_NAMES], np.int8)
        types = pd.Categorical.from_codes(code[a["control"] >> 4],
                                          categories=names)
        cols = {"address": a["address"], "be": a["be"],
                "control": a["control"], "type": types}
        if self.timed:
            cols["time"] = r["time"]
        return pd.DataFrame(cols)

    # ---- the capture's manifest: labels, marks, --between -------------

    def _capture(self):
        """The capture directory when the trace is one, else None."""
        import os
        if len(self._paths) == 1 and os.path.isdir(self._paths[0]):
            return self._paths[0]
        return None

    @property
    def manifest(self):
        """The events of the capture's manifest.jsonl (docs/bachd.md
        section 5), as dicts in the order written; None when the trace
        is not one capture directory. A last line without its newline
        (a crash's) is left out, as bach's readers do."""
        import json
        import os
        d = self._capture()
        if d is None:
            return None
        if self._events is None:
            path = os.path.join(d, "manifest.jsonl")
            with builtins.open(path, "rb") as f:
                lines = f.read().split(b"\n")[:-1]
            events = []
            for i, line in enumerate(lines, 1):
                try:
                    ev = json.loads(line)
                except ValueError as e:
                    raise BachError(-errno.EBADMSG, "%s: line %d: not JSON: "
                                    "%s" % (path, i, e)) from None
                if not (isinstance(ev, dict)
                        and isinstance(ev.get("event"), str)):
                    raise BachError(-errno.EBADMSG, "%s: line %d: not an event "
                                    '(a JSON object with "event")' % (path, i))
                events.append(ev)
            self._events = events
        return self._events

    @property
    def labels(self):
        """The capture's labels (the started event's), as a dict; {}
        when it has none or the trace is not a capture."""
        for ev in self.manifest or ():
            if ev.get("event") == "started":
                return dict(ev.get("labels") or {})
        return {}

    def marks(self):
        """The capture's marks in trace order (by position, then line),
        as dicts: the mark event's members (at, record, source, segment,
        time, and text for a user's mark, rule, address, be, type for a
        marker's), text None for a marker, and line (its line in the
        manifest, from 1). [] when the trace is not a capture."""
        import os
        out = []
        for i, ev in enumerate(self.manifest or (), 1):
            if ev.get("event") != "mark":
                continue
            m = dict(ev)
            where = "%s: line %d: " % (
                os.path.join(self._paths[0], "manifest.jsonl"), i)
            # what lib/io/manifest_read.c refuses, refused alike
            for key, what in (("at", "a record index"),
                              ("record", "a count")):
                v = m.setdefault(key, 0)
                if type(v) is not int or v < 0:
                    raise BachError(-errno.EBADMSG,
                                    where + '"%s" is not %s' % (key, what))
            if m.get("source") == "marker":
                m["text"] = None
                try:
                    ok = (int(m["address"], 16) <= 0xFFFFFFFF
                          and int(m["be"], 16) <= 0xFF)
                except (KeyError, TypeError, ValueError):
                    ok = False
                if not ok:
                    raise BachError(-errno.EBADMSG, where + "marker event "
                                    'without a proper "address" and "be"')
            elif not isinstance(m.get("text"), str):
                m["text"] = None
            m["line"] = i
            out.append(m)
        out.sort(key=lambda m: (m["at"], m["line"]))
        return out

    def between(self, a, b):
        """Read only the records from the first mark matching a up to,
        not including, the next mark after it matching b, as bach dump
        --between A B does: a and b are a mark's text, or a number (an
        int, or a string decimal or 0x hex) that a marker's record covers
        (its quadword, that byte enabled), or an entry of marks() (that
        very mark). Positions the trace there (its next read() or chunk
        is the window's first record, and reading stops at its end) and
        returns it: t.between(a, b).read(). ValueError when no mark
        matches, naming the word."""
        d = self._capture()
        if d is None:
            raise ValueError("between: needs one capture directory "
                             "(its manifest holds the marks)")
        marks = self.marks()
        i = _find(marks, 0, a)
        if i == len(marks):
            raise ValueError("between: no mark matching %r in %s"
                             % (_word(a), d))
        j = _find(marks, i + 1, b)
        if j == len(marks):
            raise ValueError("between: no mark matching %r after %r "
                             "(record %d) in %s"
                             % (_word(b), _word(a), marks[i]["at"], d))
        # retention removed the oldest segments: the trace starts later
        segs, gone = {}, set()
        for ev in self.manifest:
            if ev.get("event") == "segment" and "name" in ev:
                segs[ev["name"]] = ev.get("records", 0)
            elif ev.get("event") == "retention" and ev.get("name") in segs:
                gone.add(ev["name"])
        base = sum(segs[n] for n in gone)
        if marks[i]["at"] < base:
            raise ValueError("between: mark %r (record %d) is in a segment "
                             "retention removed from %s"
                             % (_word(a), marks[i]["at"], d))
        self._pending = None
        self._check(lib.bach_reader_range(self._open(), marks[i]["at"] - base,
                                          marks[j]["at"] - base))
        return self

    # ---- len() and repr ------------------------------------------------

    def _files(self):
        """The files read, in order (a capture's closed segments)."""
        import os
        out = []
        for p in self._paths:
            if p != "-" and os.path.isdir(p):
                pp = ffi.new("char ***")
                msg = ffi.new("char[]", 512)
                n = lib.bach_capture_open(_path(p), pp, ffi.NULL, msg, 512)
                if n < 0:
                    raise BachError(n, ffi.string(msg).decode(errors="replace"))
                try:
                    for k in range(n):
                        out.append(os.fsdecode(ffi.string(pp[0][k])))
                        libc.free(pp[0][k])
                finally:
                    if pp[0] != ffi.NULL:
                        libc.free(pp[0])
            else:
                out.append(p)
        return out

    def __len__(self):
        """The trace's records, counted without reading them: a raw
        file's size / 6, a blocked .byu.gz's .gzi index (or its members'
        headers and trailers when the index is missing or stale), a
        .byu.zst's seek table, a capture's segments likewise. TypeError when it cannot be known
        so: standard input, a gzip file that is not blocked."""
        import os
        total = 0
        for f in self._files():
            if f == "-" or not os.path.isfile(f):
                raise TypeError("len() of a trace read from %s: its "
                                "records cannot be counted without "
                                "reading them" % ("standard input"
                                                  if f == "-" else f))
            if f.endswith((".zst", ".zst.part")):
                total += _zst_bytes(f) // 6
                continue
            if not f.endswith(".gz"):
                total += os.path.getsize(f) // 6
                continue
            size = ffi.new("uint64_t *")
            msg = ffi.new("char[]", 512)
            if lib.bach_index_size(_path(f), size, msg, 512) == 0:
                total += size[0] // 6
                continue
            ix = ffi.new("struct bach_index *")
            err = lib.bach_index_build(_path(f), ix, msg, 512)
            if err == -errno.ENOTSUP:  # not blocked: no members to count
                raise TypeError("len() of %s: a gzip file that is not "
                                "blocked (no index): its records cannot "
                                "be counted without reading them" % f)
            if err < 0:
                raise BachError(err, ffi.string(msg).decode(errors="replace"))
            total += ix.uoff[ix.n] // 6
            lib.bach_index_free(ix)
        return total

    def __repr__(self):
        import os
        d = self._capture()
        if d is not None:
            kind = "capture"
        elif self._paths == ["-"]:
            kind = "standard input"
        elif all(p.endswith(".gz") for p in self._paths):
            kind = ".byu.gz"
        elif all(p.endswith(".zst") for p in self._paths):
            kind = ".byu.zst"
        elif not any(p.endswith((".gz", ".zst")) or os.path.isdir(p)
                     for p in self._paths):
            kind = ".byu"
        else:
            kind = "traces"
        try:
            n = "%d records" % len(self)
        except (TypeError, BachError):
            n = "records unknown"
        return "<bach.Trace %s (%s, %s%s%s)>" % (
            " ".join(map(repr, self._paths)), kind, n,
            ", timed" if self.timed else "",
            ", closed" if self._r is None else "")

    def close(self):
        if self._r is not None and self.timed and not self._clock_hz:
            try:
                self.clock_hz    # valid after close too
            except BachError:
                pass
        self._pending = None
        if self._r is not None:
            ffi.release(self._r)
            self._r = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _number(w):
    """w as the tools read a number (lib/options.c): decimal without a
    leading 0, or 0x hex; None when it is not one or above 32 bits."""
    import re
    if re.fullmatch(r"0[xX][0-9a-fA-F]+", w):
        v = int(w, 16)
    elif re.fullmatch(r"0|[1-9][0-9]*", w):
        v = int(w)
    else:
        return None
    return v if v <= 0xFFFFFFFF else None


def _word(w):
    return "line %d" % w["line"] if isinstance(w, dict) else str(w)


def _find(marks, start, want):
    """The index of the first of marks[start:] that want matches
    (tools/bach/between.c: the text, or a marker covering that byte
    address), len(marks) when none does."""
    if isinstance(want, dict):
        for i in range(start, len(marks)):
            if marks[i]["line"] == want.get("line"):
                return i
        return len(marks)
    if isinstance(want, int) and not isinstance(want, bool):
        text, addr = None, want if 0 <= want <= 0xFFFFFFFF else None
    else:
        text = str(want)
        addr = _number(text)
    for i in range(start, len(marks)):
        k = marks[i]
        if text is not None and k["text"] == text:
            return i
        if addr is not None and k.get("source") == "marker":
            be = int(k["be"], 16)
            if (int(k["address"], 16) == addr & ~7
                    and not (be >> (addr & 7)) & 1):
                return i
    return len(marks)


def _zst_bytes(f):
    """The record bytes of .byu.zst file f, from its seek table (zstd's
    seekable format, docs/formats.md section 10): the sum of its frames'
    decompressed sizes. BachError (EBADMSG) when it ends with no table."""
    import struct
    with builtins.open(f, "rb") as fh:
        fh.seek(0, 2)
        size = fh.tell()
        foot = b""
        if size >= 17:
            fh.seek(size - 9)
            foot = fh.read(9)
        if len(foot) != 9 or struct.unpack("<I", foot[5:])[0] != 0x8F92EAB1:
            raise BachError(-errno.EBADMSG, "%s: missing seek table: zstd "
                            "file ends at byte offset %d without it" % (f, size))
        n, desc = struct.unpack("<IB", foot[:5])
        esize = 12 if desc & 0x80 else 8
        tlen = 8 + n * esize + 9
        if tlen > size:
            raise BachError(-errno.EBADMSG, "%s: seek table at the end: %d "
                            "frames do not fit in the file's %d bytes"
                            % (f, n, size))
        fh.seek(size - tlen + 8)
        tab = fh.read(n * esize)
    return sum(struct.unpack_from("<I", tab, i * esize + 4)[0]
               for i in range(n))


def open(*paths, chunk=1 << 20, time=None):
    """Open a trace: a .byu, .byu.gz or .byu.zst file, "-" for standard input, or a
    capture directory (its closed segments in order); several paths read
    as one trace. Iterating gives numpy arrays of dtype RECORD of at most
    `chunk` records (at least 1), or of dtype TIMED (a `time` field more) when the
    trace has timing sidecars: time=None decides by whether every path
    has one, True requires them (a missing one raises BachError naming
    it), False reads none."""
    return Trace(*paths, chunk=chunk, time=time)


def write(path, records, level=0, threads=0):
    """Write records (an array of dtype RECORD, or any array with fields
    address, be, control) to path: blocked gzip when it ends in .gz, zstd
    frames with a seek table when it ends in .zst (level 1 to 19, 0: 3),
    raw .byu otherwise; the file appears whole or not at all, a blocked
    .byu.gz with its .gzi index beside it."""
    recs = np.asarray(records)
    names = recs.dtype.names or ()
    if recs.dtype != RECORD and not {"address", "be", "control"} <= set(names):
        raise TypeError("bach.write: records must be of dtype bach.RECORD "
                        "(address >u4, be u1, control u1) or have fields "
                        "address, be and control, not dtype %s" % recs.dtype)
    if recs.dtype != RECORD:
        conv = np.empty(len(recs), dtype=RECORD)
        for f in ("address", "be", "control"):
            conv[f] = recs[f]
        recs = conv
    recs = np.ascontiguousarray(recs)
    o = ffi.new("struct bach_writer_opts *")
    o.format = (lib.BACH_OUT_BYU_GZ if str(path).endswith(".gz") else
                lib.BACH_OUT_BYU_ZST if str(path).endswith(".zst") else
                lib.BACH_OUT_BYU)
    o.level = level
    o.threads = threads
    wp = ffi.new("struct bach_writer **")
    err = lib.bach_writer_open(wp, _path(path), o)
    w = wp[0]
    try:
        if not err:
            err = lib.bach_writer_write(
                w, ffi.from_buffer("uint8_t[]", recs.view(np.uint8)), len(recs))
        if not err:
            err = lib.bach_writer_close(w)
        if err:
            msg = (ffi.string(lib.bach_writer_strerror(w)).decode(errors="replace")
                   if w != ffi.NULL else "%s: out of memory" % path)
            raise BachError(err, msg)
    finally:
        if w != ffi.NULL:
            lib.bach_writer_free(w)
