// SPDX-License-Identifier: MIT
/*
 * dump_times: each record of a trace with its time from the timing
 * sidecar (NAME.time.gz), as `bach dump --time` prints the first four
 * fields: address, BE#, type, clock ('-' where none is known); the clock
 * rate on standard error.
 *
 *   cc dump_times.c $(pkg-config --cflags --libs bach)
 *   ./dump_times TRACE [START:END]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <bach/bach.h>

int main(int argc, char **argv)
{
	struct bach_reader *r;
	const uint8_t *recs;
	const uint64_t *clk;
	uint64_t start = 0, end = UINT64_MAX;
	ssize_t n = 0, m;
	int err;

	if (argc < 2 || argc > 3 ||
	    (argc == 3 &&
	     sscanf(argv[2], "%" SCNu64 ":%" SCNu64, &start, &end) != 2)) {
		fprintf(stderr, "usage: dump_times TRACE [START:END]\n");
		return 2;
	}
	if (!bach_times_present(argv[1])) {
		fprintf(stderr, "%s: no timing sidecar\n", argv[1]);
		return 2;
	}
	r = bach_reader_new();
	if (!r)
		return 2;
	err = bach_reader_add(r, argv[1]);
	if (!err && argc == 3)
		err = bach_reader_range(r, start, end);
	while (!err && (n = bach_reader_read(r, &recs)) >= 0) {
		/* the entries of this block, one per record */
		m = bach_reader_times(r, &clk);
		if (m < 0 || n == 0) {
			err = (int)m;
			break;
		}
		for (ssize_t i = 0; i < n; i++) {
			struct bach_rec rec;

			bach_rec_unpack(recs + i * BACH_REC_SIZE, &rec);
			printf("%08" PRIx32 " %02x %s ", rec.addr, rec.be,
			       bach_type_name(bach_type_of(rec.ctl)));
			if (clk[i] == BACH_TIME_NONE)
				printf("-\n");
			else
				printf("%" PRIu64 "\n", clk[i]);
		}
	}
	if (!err && n < 0)
		err = (int)n;
	if (err)
		fprintf(stderr, "%s\n", bach_reader_strerror(r));
	else
		fprintf(stderr, "clock rate %" PRIu64 " Hz\n",
			bach_reader_clock_hz(r));
	bach_reader_free(r);
	return bach_exit_status(err);
}
