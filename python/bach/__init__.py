# SPDX-License-Identifier: MIT
"""BYU address traces of Intel Pentium machines, as numpy arrays.

    import bach
    with bach.open("capture/20261121T223000Z") as t:   # .byu, .byu.gz, dir, "-"
        for chunk in t:                 # numpy structured arrays, in chunks
            print(chunk["address"][:4], chunk["control"] >> 4)
        t.seek(1_000_000_000)           # through the segments' .gzi indexes
        ten = t.read(10)
        t.gaps()                        # the capture's gaps and their causes

A record is the 6-byte BYU record: dtype RECORD, fields address (uint32,
big-endian as on disk), be (BE#, uint8) and control (uint8); its type is
control >> 4 (TYPE_NAMES). When the trace has timing sidecars (NAME.time.gz,
docs/formats.md 3.2), records are of dtype TIMED: the same and time
(uint64 clocks, TIME_NONE where unknown; seconds = time / t.clock_hz). The module is libbach.so.0 through cffi;
errors raise BachError with the library's message, which names the file
and the byte offset.
"""
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

    @property
    def clock_hz(self):
        """The clock rate of the timing sidecar read, in Hz: the bus
        clock of a capture, the sample rate of bach decode's output; 0
        when unknown, or before the first read."""
        return lib.bach_reader_clock_hz(self._r) if self._r is not None else 0

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
        """Go to record rec of the whole trace (from 0); through the .gzi
        index of blocked .byu.gz files, checked before it is trusted.
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
        (native integers), type (the name)."""
        import pandas as pd
        r = self.read()
        a = r[["address", "be", "control"]].astype(NATIVE)
        names = np.array(TYPE_NAMES, dtype=object)
        cols = {"address": a["address"], "be": a["be"],
                "control": a["control"], "type": names[a["control"] >> 4]}
        if self.timed:
            cols["time"] = r["time"]
        return pd.DataFrame(cols)

    def close(self):
        self._pending = None
        if self._r is not None:
            ffi.release(self._r)
            self._r = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def open(*paths, chunk=1 << 20, time=None):
    """Open a trace: a .byu or .byu.gz file, "-" for standard input, or a
    capture directory (its closed segments in order); several paths read
    as one trace. Iterating gives numpy arrays of dtype RECORD of at most
    `chunk` records (at least 1), or of dtype TIMED (a `time` field more) when the
    trace has timing sidecars: time=None decides by whether every path
    has one, True requires them (a missing one raises BachError naming
    it), False reads none."""
    return Trace(*paths, chunk=chunk, time=time)


def write(path, records, level=0, threads=0):
    """Write records (an array of dtype RECORD, or any array with fields
    address, be, control) to path: blocked gzip when it ends in .gz, raw
    .byu otherwise; the file appears whole or not at all, a blocked one
    with its .gzi index beside it."""
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
    o.format = lib.BACH_OUT_BYU_GZ if str(path).endswith(".gz") else lib.BACH_OUT_BYU
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
