# SPDX-License-Identifier: MIT
"""libbach.so.0 through cffi in ABI mode: the declarations below are those
of the public headers (include/bach/bach.h and what it includes,
docs/api.md) that the module uses, copied as they are there:
python/tests/test_lib_decls.py has the C compiler hold each to the
headers (python/README.md says why a test and not a generated file)."""
import os

import cffi

CDEF = """
#define BACH_REC_SIZE 6
#define BACH_TIME_NONE 0xffffffffffffffff

const char *bach_version(void);
int bach_exit_status(int err);
const char *bach_type_name(unsigned type);

struct bach_reader;
struct bach_reader *bach_reader_new(void);
void bach_reader_free(struct bach_reader *r);
int bach_reader_add(struct bach_reader *r, const char *path);
ssize_t bach_reader_read(struct bach_reader *r, const uint8_t **recs);
int bach_reader_seek(struct bach_reader *r, uint64_t rec);
int bach_reader_range(struct bach_reader *r, uint64_t start, uint64_t end);
const char *bach_reader_strerror(const struct bach_reader *r);
uint64_t bach_reader_records(const struct bach_reader *r);
bool bach_times_present(const char *path);
ssize_t bach_reader_times(struct bach_reader *r, const uint64_t **clk);
uint64_t bach_reader_clock_hz(const struct bach_reader *r);
size_t bach_reader_nfiles(const struct bach_reader *r);

struct bach_gap {
	uint64_t at;
	uint64_t lost;
	char cause[16];
	char segment[64];
};
ssize_t bach_capture_open(const char *dir, char ***paths, size_t *nparts,
			  char *msg, size_t len);
ssize_t bach_capture_gaps(const char *dir, struct bach_gap **gaps,
			  char *msg, size_t len);

enum bach_deflate_backend { BACH_DEFLATE_AUTO, BACH_DEFLATE_LIBDEFLATE,
			    BACH_DEFLATE_ZLIB, BACH_DEFLATE_RECORD,
			    BACH_DEFLATE_ZSTD };
enum bach_out_format { BACH_OUT_BYU, BACH_OUT_BYU_GZ, BACH_OUT_BYU_ZST };
struct bach_writer_opts {
	enum bach_out_format format;
	int level;
	int threads;
	enum bach_deflate_backend backend;
};
struct bach_writer;
int bach_writer_open(struct bach_writer **wp, const char *path,
		     const struct bach_writer_opts *o);
int bach_writer_write(struct bach_writer *w, const uint8_t *recs, size_t n);
int bach_writer_close(struct bach_writer *w);
void bach_writer_free(struct bach_writer *w);
const char *bach_writer_strerror(const struct bach_writer *w);

struct bach_index {
	uint64_t n;
	uint64_t *coff;
	uint64_t *uoff;
};
int bach_index_build(const char *path, struct bach_index *ix, char *msg,
		     size_t len);
int bach_index_size(const char *path, uint64_t *size, char *msg, size_t len);
void bach_index_free(struct bach_index *ix);

void free(void *p);
"""
ffi = cffi.FFI()
ffi.cdef(CDEF)


def _candidates():
    env = os.environ.get("BACH_LIBRARY")
    if env:
        return [env]
    out = []
    try:
        from ._config import LIBRARY  # written by make install
        out.append(LIBRARY)
    except ImportError:
        pass
    out.append("libbach.so.0")
    return out


def _load():
    errors = []
    for name in _candidates():
        try:
            return ffi.dlopen(name)
        except OSError as e:
            errors.append("%s: %s" % (name, e))
    raise ImportError("bach: cannot load libbach.so.0 (make install, or "
                      "set BACH_LIBRARY): " + "; ".join(errors))


lib = _load()
libc = ffi.dlopen(None)
