// SPDX-License-Identifier: MIT
/*
 * truncate_shim.so: LD_PRELOAD'ed into a program to cut a file short
 * while the program reads it, at a point that does not depend on timing.
 *
 *   TRUNCATE_FILE=PATH TRUNCATE_AFTER=N [TRUNCATE_TO=M] \
 *       LD_PRELOAD=.../truncate_shim.so PROGRAM [ARG]...
 *
 * Once the program has read (read, pread) or mapped (mmap) N bytes or
 * more of PATH in all, counted over every open of it, PATH is truncated
 * to M bytes (default 0), once: as if another process had truncated it
 * right after that call returned. A mapping counts as its whole length
 * when it is made, so a program that maps PATH sees the truncation before
 * it touches a page of it.
 *
 * The shim is built without the sanitizers: in the sanitized pass the
 * test sets ASAN_OPTIONS=verify_asan_link_order=0.
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

static const char *file;
static uint64_t after, to, seen;
static bool done, ready;
static dev_t dev;
static ino_t ino;

static void init(void)
{
	const char *a = getenv("TRUNCATE_AFTER"), *t = getenv("TRUNCATE_TO");
	struct stat st;

	ready = true;
	file = getenv("TRUNCATE_FILE");
	if (!file || stat(file, &st) < 0) {
		done = true;
		return;
	}
	dev = st.st_dev;
	ino = st.st_ino;
	after = a ? strtoull(a, NULL, 0) : 1;
	to = t ? strtoull(t, NULL, 0) : 0;
}

/* n more bytes of fd were read or mapped: cut the file when it is time */
static void count(int fd, uint64_t n)
{
	struct stat st;

	if (!ready)
		init();
	if (done || fstat(fd, &st) < 0 || st.st_dev != dev || st.st_ino != ino)
		return;
	seen += n;
	if (seen >= after) {
		done = true;
		if (truncate(file, (off_t)to) < 0)
			abort();
	}
}

/* the next definition of name: libc's, or the sanitizer's */
#define REAL(name)                                                             \
	static __typeof__(&name) real_##name;                                  \
	if (!real_##name)                                                      \
		real_##name = (__typeof__(&name))dlsym(RTLD_NEXT, #name);

/* what a read of fd returned, counted */
static ssize_t got(int fd, ssize_t n)
{
	if (n > 0)
		count(fd, (uint64_t)n);
	return n;
}

/* a mapping of len bytes of fd, counted whole */
static void *mapped(void *p, int fd, int flags, size_t len)
{
	if (p != MAP_FAILED && fd >= 0 && !(flags & MAP_ANONYMOUS))
		count(fd, len);
	return p;
}

ssize_t read(int fd, void *buf, size_t len);
ssize_t read(int fd, void *buf, size_t len)
{
	REAL(read)
	return got(fd, real_read(fd, buf, len));
}

/* read() where _FORTIFY_SOURCE knows the buffer's size */
ssize_t __read_chk(int fd, void *buf, size_t len, size_t cap);
ssize_t __read_chk(int fd, void *buf, size_t len, size_t cap)
{
	REAL(__read_chk)
	return got(fd, real___read_chk(fd, buf, len, cap));
}

ssize_t pread(int fd, void *buf, size_t len, off_t off);
ssize_t pread(int fd, void *buf, size_t len, off_t off)
{
	REAL(pread)
	return got(fd, real_pread(fd, buf, len, off));
}

ssize_t pread64(int fd, void *buf, size_t len, off_t off);
ssize_t pread64(int fd, void *buf, size_t len, off_t off)
{
	REAL(pread64)
	return got(fd, real_pread64(fd, buf, len, off));
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	REAL(mmap)
	return mapped(real_mmap(addr, len, prot, flags, fd, off), fd, flags,
		      len);
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off);
void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	REAL(mmap64)
	return mapped(real_mmap64(addr, len, prot, flags, fd, off), fd, flags,
		      len);
}
