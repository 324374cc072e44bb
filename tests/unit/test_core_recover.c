// SPDX-License-Identifier: MIT
/*
 * Recovery (core/recover.h) on capture directories built here as a crash
 * leaves them: an unfinished segment is cut to its last whole member and
 * closed, a closed segment the manifest never named is named, a cut last
 * manifest line is cut off, the capture gets its ended event once, and
 * nothing is followed through a symbolic link.
 */
#include <errno.h>
#include <fcntl.h>
#include <libdeflate.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "bach/record.h"
#include "bach/trace.h"
#include "lib/bus/gen.h"
#include "lib/io/manifest.h"
#include "log.h"
#include "recover.h"

#define STARTED "{\"time\":\"t\",\"event\":\"started\",\"version\":1}\n"

struct fixture {
	char out[64];  /* the output directory */
	char cap[128]; /* one capture directory in it */
	int outfd;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	snprintf(f->out, sizeof(f->out), "/tmp/bach-recover.XXXXXX");
	if (!mkdtemp(f->out))
		return -1;
	snprintf(f->cap, sizeof(f->cap), "%s/20261121T223000Z", f->out);
	if (mkdir(f->cap, 0755))
		return -1;
	f->outfd = open(f->out, O_RDONLY | O_DIRECTORY);
	*state = f;
	log_init("test", true, LOG_P_ERR - 1); /* quiet */
	return f->outfd < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[256];

	close(f->outfd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->out);
	if (system(cmd))
		return -1;
	free(f);
	return 0;
}

static void put_file(const char *dir, const char *name, const void *p, size_t n)
{
	char path[256];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fp = fopen(path, "w");
	assert_non_null(fp);
	assert_int_equal(fwrite(p, 1, n, fp), n);
	fclose(fp);
}

static size_t file_size(const char *dir, const char *name)
{
	char path[256];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return stat(path, &st) ? (size_t)-1 : (size_t)st.st_size;
}

/*
 * nmem members of recs records each (from bach gen), then a member cut in
 * half, as a crash leaves a .part; *whole: bytes of the whole members.
 */
static uint8_t *crashed_gz(unsigned nmem, size_t recs, size_t *len,
			   size_t *whole)
{
	struct bach_deflater *d = bach_deflater_new(BACH_DEFLATE_LIBDEFLATE, 1);
	struct bach_gen g;
	uint8_t *out = malloc((nmem + 1) * BACH_BGZF_MAX_BLOCK);
	uint8_t *in = malloc(recs * BACH_REC_SIZE);
	size_t n = 0, m = 0;

	assert_non_null(d);
	bach_gen_init(&g, 7);
	for (unsigned i = 0; i <= nmem; i++) {
		bach_gen_fill(&g, in, recs);
		m = bach_bgzf_block(d, out + n, in, recs * BACH_REC_SIZE);
		n += m;
	}
	*whole = n - m;
	*len = n - m / 2;
	bach_deflater_free(d);
	free(in);
	return out;
}

static void load(const char *dir, struct bach_manifest *m)
{
	char why[512];
	int fd = open(dir, O_RDONLY | O_DIRECTORY);

	assert_int_equal(bach_manifest_load(fd, dir, m, why, sizeof(why)), 0);
	close(fd);
}

static void part_cut_and_closed(void **state)
{
	struct fixture *f = *state;
	struct bach_manifest m;
	size_t len, whole;
	uint8_t *gz = crashed_gz(3, 1000, &len, &whole);
	const struct bach_manifest_seg *s;

	put_file(f->cap, BACH_MANIFEST_NAME, STARTED, strlen(STARTED));
	put_file(f->cap, "seg-000001.byu.gz.part", gz, len);
	assert_int_equal(
		recover_capture(f->outfd, f->out, "20261121T223000Z", NULL),
		2); /* the segment, and the ended event */
	assert_int_equal(file_size(f->cap, "seg-000001.byu.gz.part"),
			 (size_t)-1);
	assert_int_equal(file_size(f->cap, "seg-000001.byu.gz"),
			 whole + BACH_BGZF_EOF_SIZE);
	load(f->cap, &m);
	assert_int_equal(m.nsegs, 1);
	s = &m.segs[0];
	assert_string_equal(s->name, "seg-000001.byu.gz");
	assert_int_equal(s->records, 3000);
	assert_int_equal(s->bytes, whole + BACH_BGZF_EOF_SIZE);
	assert_true(s->recovered);
	assert_false(s->orphan);
	memcpy(gz + whole, bach_bgzf_eof, BACH_BGZF_EOF_SIZE);
	assert_int_equal(s->crc,
			 libdeflate_crc32(0, gz, whole + BACH_BGZF_EOF_SIZE));
	assert_true(m.ended);
	assert_string_equal(m.state, "recovered");
	assert_int_equal(m.written, 3000);
	assert_int_equal(m.segments, 1);
	bach_manifest_free(&m);
	/* once is enough */
	assert_int_equal(
		recover_capture(f->outfd, f->out, "20261121T223000Z", NULL), 0);
	free(gz);
}

static void raw_part_whole_records(void **state)
{
	struct fixture *f = *state;
	static uint8_t raw[6 * 500 + 4];

	put_file(f->cap, BACH_MANIFEST_NAME, STARTED, strlen(STARTED));
	memset(raw, 0x90, sizeof(raw));
	put_file(f->cap, "seg-000001.byu.part", raw, sizeof(raw));
	assert_true(recover_capture(f->outfd, f->out, "20261121T223000Z",
				    NULL) > 0);
	assert_int_equal(file_size(f->cap, "seg-000001.byu"), 6 * 500);
}

/* a .part that is not a regular file is left alone, and counted: the
 * capture is only partly recovered (bach recover exits 1) */
static void fifo_part_counted(void **state)
{
	struct fixture *f = *state;
	static uint8_t raw[6 * 10];
	char path[4400];
	unsigned failed = 0;

	put_file(f->cap, BACH_MANIFEST_NAME, STARTED, strlen(STARTED));
	put_file(f->cap, "seg-000001.byu.part", raw, sizeof(raw));
	snprintf(path, sizeof(path), "%s/seg-000002.byu.part", f->cap);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_true(recover_capture(f->outfd, f->out, "20261121T223000Z",
				    &failed) > 0);
	assert_int_equal(failed, 1);
	assert_int_equal(file_size(f->cap, "seg-000001.byu"), sizeof(raw));
	/* again: the FIFO is still there, still counted */
	failed = 0;
	assert_int_equal(recover_outdir(f->outfd, f->out, &failed), 0);
	assert_int_equal(failed, 1);
}

static void orphan_named_and_tail_cut(void **state)
{
	struct fixture *f = *state;
	static const char partial[] = "{\"time\":\"t\",\"event\":\"ga";
	struct bach_manifest m;
	size_t len, whole;
	uint8_t *gz = crashed_gz(2, 100, &len, &whole);
	char man[256];

	memcpy(gz + whole, bach_bgzf_eof, BACH_BGZF_EOF_SIZE);
	put_file(f->cap, "seg-000001.byu.gz", gz, whole + BACH_BGZF_EOF_SIZE);
	snprintf(man, sizeof(man), "%s%s", STARTED, partial);
	put_file(f->cap, BACH_MANIFEST_NAME, man, strlen(man));
	assert_true(recover_capture(f->outfd, f->out, "20261121T223000Z",
				    NULL) > 0);
	load(f->cap, &m);
	assert_false(m.partial_tail);
	assert_int_equal(m.lines, 3);
	assert_int_equal(m.nsegs, 1);
	assert_true(m.segs[0].orphan);
	assert_int_equal(m.segs[0].records, 200);
	assert_int_equal(m.segs[0].crc,
			 libdeflate_crc32(0, gz, whole + BACH_BGZF_EOF_SIZE));
	/* the segment itself is not touched */
	assert_int_equal(file_size(f->cap, "seg-000001.byu.gz"),
			 whole + BACH_BGZF_EOF_SIZE);
	bach_manifest_free(&m);
	free(gz);
}

static void links_left_alone(void **state)
{
	struct fixture *f = *state;
	char outside[128], link[256], man[256];
	size_t len, whole;
	uint8_t *gz = crashed_gz(2, 100, &len, &whole);

	snprintf(outside, sizeof(outside), "%s/victim.gz", f->out);
	put_file(f->out, "victim.gz", gz, len);
	put_file(f->out, "victim.txt", "keep\n", 5);
	put_file(f->cap, BACH_MANIFEST_NAME, STARTED, strlen(STARTED));
	snprintf(link, sizeof(link), "%s/seg-000001.byu.gz.part", f->cap);
	assert_int_equal(symlink(outside, link), 0);
	assert_int_equal(
		recover_capture(f->outfd, f->out, "20261121T223000Z", NULL), 1);
	assert_int_equal(file_size(f->out, "victim.gz"), len);
	/* a manifest that is a link: the capture is not recovered at all */
	snprintf(man, sizeof(man), "%s/%s", f->cap, BACH_MANIFEST_NAME);
	unlink(man);
	snprintf(outside, sizeof(outside), "%s/victim.txt", f->out);
	assert_int_equal(symlink(outside, man), 0);
	assert_true(recover_capture(f->outfd, f->out, "20261121T223000Z",
				    NULL) < 0);
	assert_int_equal(file_size(f->out, "victim.txt"), 5);
	free(gz);
}

static void not_a_capture(void **state)
{
	struct fixture *f = *state;
	static uint8_t raw[600];

	/* no manifest: not ours, whatever it holds */
	put_file(f->cap, "seg-000001.byu.part", raw, sizeof(raw));
	assert_int_equal(
		recover_capture(f->outfd, f->out, "20261121T223000Z", NULL), 0);
	assert_int_equal(file_size(f->cap, "seg-000001.byu.part"), sizeof(raw));
	assert_int_equal(recover_outdir(f->outfd, f->out, NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(part_cut_and_closed, setup,
						teardown),
		cmocka_unit_test_setup_teardown(raw_part_whole_records, setup,
						teardown),
		cmocka_unit_test_setup_teardown(fifo_part_counted, setup,
						teardown),
		cmocka_unit_test_setup_teardown(orphan_named_and_tail_cut,
						setup, teardown),
		cmocka_unit_test_setup_teardown(links_left_alone, setup,
						teardown),
		cmocka_unit_test_setup_teardown(not_a_capture, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
