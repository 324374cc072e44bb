// SPDX-License-Identifier: MIT
/*
 * Appending to a segment (core/segio.h), through io_uring and through
 * pwrite: the file holds exactly the bytes appended, in order, whatever
 * the sizes of the pieces and the pushes between them; the running
 * CRC-32 is the file's; a failed write is reported and stays reported.
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

#include "segio.h"

#define TOTAL (9u << 20) /* over eight 1 MiB buffers: they are reused */

static uint64_t rng = 88172645463325252ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void roundtrip(bool uring)
{
	char path[] = "/tmp/bach-segio.XXXXXX";
	uint8_t *data = malloc(TOTAL), *back = malloc(TOTAL + 1);
	struct segio io;
	int fd, uerr;
	size_t off = 0;

	assert_non_null(data);
	assert_non_null(back);
	for (size_t i = 0; i < TOTAL; i++)
		data[i] = (uint8_t)next();
	fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(segio_init(&io, 4, uring, &uerr), 0);
	if (uring && !io.uring) {
		segio_free(&io);
		close(fd);
		free(data);
		free(back);
		skip(); /* io_uring refused here: the pwrite run covers the rest
			 */
	}
	segio_attach(&io, fd);
	while (off < TOTAL) {
		/* pieces from 1 byte to 1.5 buffers, pushed now and then */
		size_t n = 1 + next() % (SEGIO_BUF + SEGIO_BUF / 2);

		if (n > TOTAL - off)
			n = TOTAL - off;
		assert_int_equal(segio_append(&io, data + off, n), 0);
		off += n;
		if (next() % 3 == 0)
			assert_int_equal(segio_push(&io), 0);
	}
	assert_int_equal(segio_flush(&io), 0);
	assert_int_equal(io.off, TOTAL);
	assert_int_equal(io.crc, libdeflate_crc32(0, data, TOTAL));
	assert_int_equal(pread(fd, back, TOTAL + 1, 0), TOTAL);
	assert_memory_equal(back, data, TOTAL);
	segio_free(&io);
	close(fd);
	free(data);
	free(back);
}

static void with_uring(void **state)
{
	(void)state;
	roundtrip(true);
}

static void with_pwrite(void **state)
{
	(void)state;
	roundtrip(false);
}

/* /dev/full refuses every write: -ENOSPC, and it stays. */
static void full_disk(void **state)
{
	static uint8_t buf[SEGIO_BUF];
	struct segio io;
	int fd, uerr;

	(void)state;
	for (int uring = 0; uring < 2; uring++) {
		fd = open("/dev/full", O_WRONLY);
		if (fd < 0)
			skip();
		assert_int_equal(segio_init(&io, 2, uring, &uerr), 0);
		segio_attach(&io, fd);
		for (int i = 0; i < 4; i++)
			segio_append(&io, buf, sizeof(buf));
		assert_int_equal(segio_flush(&io), -ENOSPC);
		assert_int_equal(segio_append(&io, buf, 1), -ENOSPC);
		assert_int_equal(segio_push(&io), -ENOSPC);
		segio_free(&io);
		close(fd);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(with_uring),
		cmocka_unit_test(with_pwrite),
		cmocka_unit_test(full_disk),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
