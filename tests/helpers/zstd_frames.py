"""zstd frames, read by the format's documents alone (not bach's code):
RFC 8878 section 3.1 (frames and blocks) and zstd's
contrib/seekable_format/zstd_seekable_compression_format.md (the seek
table). Usage:

  zstd_frames.py whole FILE   the end of FILE's last whole frame, counted
                              from its start: "BYTES FRAMES" (frames whose
                              every block and checksum is there; a seek
                              table or a cut frame after them is not one)
  zstd_frames.py table FILE   FILE's seek table: "FRAMES TABLE_BYTES
                              COMPRESSED DECOMPRESSED" (the sums of its
                              entries); exit 1 when FILE does not end in one
"""
import struct
import sys

FRAME_MAGIC = 0xFD2FB528
SKIP_SEEKABLE = 0x184D2A5E
SEEKABLE_MAGIC = 0x8F92EAB1


def frame_end(d, off):
    """the end of the zstd frame at off, or None when d ends first"""
    if off + 5 > len(d) or struct.unpack_from('<I', d, off)[0] != FRAME_MAGIC:
        return None
    fhd = d[off + 4]
    single = fhd >> 5 & 1
    fcs = (1 if single else 0, 2, 4, 8)[fhd >> 6]
    p = off + 5 + (0 if single else 1) + (0, 1, 2, 4)[fhd & 3] + fcs
    while True:
        if p + 3 > len(d):
            return None
        h = d[p] | d[p + 1] << 8 | d[p + 2] << 16
        last, btype, size = h & 1, h >> 1 & 3, h >> 3
        p += 3 + (1 if btype == 1 else size)
        if p > len(d):
            return None
        if last:
            break
    p += 4 if fhd & 4 else 0
    return p if p <= len(d) else None


def whole(d):
    off = n = 0
    while True:
        e = frame_end(d, off)
        if e is None:
            return off, n
        off, n = e, n + 1


def table(d):
    if len(d) < 17:
        return None
    n, desc, magic = struct.unpack('<IBI', d[-9:])
    if magic != SEEKABLE_MAGIC:
        return None
    esz = 12 if desc & 0x80 else 8
    size = 8 + esz * n + 9
    if size > len(d):
        return None
    skip, fsize = struct.unpack_from('<II', d, len(d) - size)
    if skip != SKIP_SEEKABLE or fsize != size - 8:
        return None
    c = u = 0
    for i in range(n):
        ci, ui = struct.unpack_from('<II', d, len(d) - size + 8 + esz * i)
        c += ci
        u += ui
    return n, size, c, u


def main():
    cmd, path = sys.argv[1], sys.argv[2]
    d = open(path, 'rb').read()
    if cmd == 'whole':
        print(*whole(d))
    elif cmd == 'table':
        t = table(d)
        if t is None:
            sys.exit('%s: no seek table at its end' % path)
        print(*t)
    else:
        sys.exit('usage: zstd_frames.py whole|table FILE')


main()
