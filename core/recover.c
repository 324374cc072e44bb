// SPDX-License-Identifier: MIT
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libdeflate.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bach/record.h"
#include "bach/trace.h"
#define LOG_PREFIX "recover"
#include "log.h"
#include "manifest.h"
#include "recover.h"

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

/* Bytes of p[0..size) made of complete, good members; records in them. */
/* Gap marker records in p[0..len). */
static uint64_t count_markers(const uint8_t *p, size_t len)
{
	uint64_t n = 0;

	for (size_t i = 0; i + BACH_REC_SIZE <= len; i += BACH_REC_SIZE)
		n += bach_rec_is_gap(p + i);
	return n;
}

static uint64_t good_members(const uint8_t *p, uint64_t size, uint64_t *recs,
			     uint64_t *markers, bool *has_eof)
{
	struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
	static uint8_t out[BACH_BGZF_MAX_BLOCK];
	uint64_t off = 0;

	*recs = *markers = 0;
	*has_eof = false;
	while (d && size - off >= BACH_BGZF_EOF_SIZE) {
		const uint8_t *m = p + off;
		int n = bach_bgzf_member_size(m, size - off);
		size_t bsize = n > 0 ? (size_t)n : 0, got;

		if (n < 0 || bsize > size - off)
			break;
		if (libdeflate_gzip_decompress(d, m, bsize, out, sizeof(out),
					       &got) != LIBDEFLATE_SUCCESS ||
		    got % BACH_REC_SIZE)
			break;
		*recs += got / BACH_REC_SIZE;
		*markers += count_markers(out, got);
		off += bsize;
		if (!got) { /* the EOF block: nothing may follow */
			*has_eof = true;
			break;
		}
	}
	libdeflate_free_decompressor(d);
	return off;
}

int segment_finish_part(int dirfd, const char *part, struct seg_result *res)
{
	char final[256];
	struct stat st;
	uint8_t *map = NULL;
	uint64_t keep;
	bool gz = ends_with(part, ".gz.part"), has_eof = false;
	int fd, err = 0;

	memset(res, 0, sizeof(*res));
	if (!ends_with(part, ".part") || strlen(part) >= sizeof(final))
		return -EINVAL;
	snprintf(final, sizeof(final), "%.*s", (int)(strlen(part) - 5), part);
	fd = openat(dirfd, part, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		err = -errno;
		goto out_close;
	}
	if (st.st_size > 0) {
		map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
		if (map == MAP_FAILED) {
			err = -errno;
			goto out_close;
		}
	}
	if (gz) {
		keep = map ? good_members(map, (uint64_t)st.st_size,
					  &res->records, &res->markers,
					  &has_eof) :
			     0;
	} else {
		keep = (uint64_t)st.st_size - (uint64_t)st.st_size % BACH_REC_SIZE;
		res->records = keep / BACH_REC_SIZE;
		res->markers = map ? count_markers(map, keep) : 0;
	}
	res->crc = map ? libdeflate_crc32(0, map, keep) : 0;
	if (map)
		munmap(map, (size_t)st.st_size);
	res->cut = (uint64_t)st.st_size - keep;
	if (!res->records) {
		/* nothing whole survived: no segment is better than an empty one */
		res->removed = true;
		if (unlinkat(dirfd, part, 0) < 0 || fsync(dirfd) < 0)
			err = -errno;
		goto out_close;
	}
	/* cutting first frees the space the EOF block needs */
	if (ftruncate(fd, (off_t)keep) < 0) {
		err = -errno;
		goto out_close;
	}
	if (gz && !has_eof) {
		if (pwrite(fd, bach_bgzf_eof, BACH_BGZF_EOF_SIZE, (off_t)keep) !=
		    BACH_BGZF_EOF_SIZE) {
			err = errno ? -errno : -EIO;
			goto out_close;
		}
		res->crc = libdeflate_crc32(res->crc, bach_bgzf_eof,
					    BACH_BGZF_EOF_SIZE);
		keep += BACH_BGZF_EOF_SIZE;
	}
	res->bytes = keep;
	if (fsync(fd) < 0) {
		err = -errno;
		goto out_close;
	}
	if (renameat(dirfd, part, dirfd, final) < 0 || fsync(dirfd) < 0)
		err = -errno;
out_close:
	close(fd);
	return err;
}

static int recover_capture(int outfd, const char *name)
{
	struct manifest m = { -1 };
	struct dirent *de;
	int dfd, n = 0;
	DIR *d;

	dfd = openat(outfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	d = fdopendir(dup(dfd));
	if (!d) {
		close(dfd);
		return -errno;
	}
	while ((de = readdir(d))) {
		struct seg_result r;
		char seg[256];
		int err;

		if (strncmp(de->d_name, "seg-", 4) ||
		    !ends_with(de->d_name, ".part"))
			continue;
		if (m.fd < 0 && manifest_open(&m, dfd) < 0)
			log_warn("%s: cannot open manifest: %s", name,
				 strerror(errno));
		err = segment_finish_part(dfd, de->d_name, &r);
		snprintf(seg, sizeof(seg), "%.*s",
			 (int)(strlen(de->d_name) - 5), de->d_name);
		if (err) {
			log_err("%s/%s: cannot recover: %s", name, de->d_name,
				strerror(-err));
			continue;
		}
		log_notice("%s/%s: recovered %llu records, cut %llu bytes of an unfinished block%s",
			   name, seg, (unsigned long long)r.records,
			   (unsigned long long)r.cut,
			   r.removed ? " (nothing whole: removed)" : "");
		if (m.fd >= 0)
			manifest_segment(&m, &(struct manifest_segment){
				.name = seg, .records = r.records,
				.gap_markers = r.markers, .bytes = r.bytes,
				.crc = r.crc, .recovered = true,
				.removed = r.removed, .cut_bytes = r.cut });
		n++;
	}
	closedir(d);
	if (n && m.fd >= 0) {
		manifest_ended_recovered(&m, (unsigned)n);
		manifest_sync(&m);
	}
	manifest_close(&m);
	close(dfd);
	return n;
}

int recover_outdir(const char *outdir)
{
	struct dirent *de;
	int outfd, total = 0;
	DIR *d;

	d = opendir(outdir);
	if (!d)
		return -errno;
	outfd = dirfd(d);
	while ((de = readdir(d))) {
		int n;

		if (de->d_name[0] == '.')
			continue;
		n = recover_capture(outfd, de->d_name);
		if (n > 0)
			total += n;
	}
	closedir(d);
	return total;
}
