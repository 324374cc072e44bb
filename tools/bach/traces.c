// SPDX-License-Identifier: MIT
/*
 * The TRACE arguments of the commands that read records: opened into one
 * bach_reader (open_traces), or read through as one trace, a block at a
 * time and through the --type, --addr and --port filter (read_traces),
 * with the reader's message and exit status when something is wrong.
 */
#include <sys/types.h>

#include "cmd.h"

int open_traces(struct bach_reader **rp, int argc, char **argv)
{
	struct bach_reader *r = bach_reader_new();

	*rp = r;
	if (!r) {
		errmsg("out of memory");
		return EXIT_USAGE;
	}
	if (argc == 0)
		return usage_error("no TRACE given");
	for (int i = 0; i < argc; i++) {
		int err = bach_reader_add(r, argv[i]);

		if (err) {
			errmsg("%s", bach_reader_strerror(r));
			return bach_exit_status(err);
		}
	}
	return EXIT_OK;
}

int read_traces(int argc, char **argv, struct rec_filter *f,
		void (*add)(void *ctx, const uint8_t *recs, size_t n),
		void *ctx, uint64_t *records)
{
	return read_traces_range(argc, argv, f, 0, UINT64_MAX, add, ctx,
				 records, NULL);
}

int read_traces_range(int argc, char **argv, struct rec_filter *f,
		      uint64_t start, uint64_t end,
		      void (*add)(void *ctx, const uint8_t *recs, size_t n),
		      void *ctx, uint64_t *records, uint32_t *crc)
{
	struct bach_reader *r;
	int status = open_traces(&r, argc, argv);
	ssize_t n = 0, k;

	if (!status)
		status = apply_range(r, start, end);
	while (!status) {
		const uint8_t *p;

		n = bach_reader_read(r, &p);
		if (n <= 0)
			break;
		if (crc)
			*crc = partial_crc(*crc, p, (size_t)n * BACH_REC_SIZE);
		k = filter_block(f, &p, NULL, (size_t)n);
		if (k < 0) {
			errmsg("out of memory");
			status = EXIT_USAGE;
		} else if (k) {
			add(ctx, p, (size_t)k);
		}
	}
	if (!status && n < 0) {
		errmsg("%s", bach_reader_strerror(r));
		status = bach_exit_status((int)n);
	}
	if (records)
		*records = r ? bach_reader_records(r) : 0;
	bach_reader_free(r);
	return status;
}
