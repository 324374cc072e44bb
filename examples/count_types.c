/* Count the records of a trace by bus-cycle type, with the installed libbach:
 *   cc count_types.c $(pkg-config --cflags --libs bach) -o count_types
 *   ./count_types TRACE [START:END]   (a .byu, .byu.gz, capture dir or -) */
#include <bach/bach.h>
#include <inttypes.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	uint64_t count[BACH_NTYPES] = { 0 }, start = 0, end = UINT64_MAX;
	struct bach_reader *r = bach_reader_new();
	const uint8_t *recs;
	ssize_t n;
	int err;

	if (argc < 2 || !r ||
	    (argc > 2 &&
	     sscanf(argv[2], "%" SCNu64 ":%" SCNu64, &start, &end) != 2)) {
		fprintf(stderr, "usage: count_types TRACE [START:END]\n");
		return 2;
	}
	if ((err = bach_reader_add(r, argv[1])) == 0 &&
	    (err = bach_reader_range(r, start, end)) == 0) {
		while ((n = bach_reader_read(r, &recs)) >
		       0) /* blocks of records */
			for (ssize_t i = 0; i < n; i++)
				count[bach_type_of(
					recs[i * BACH_REC_SIZE + 5])]++;
		err = (int)n;
	}
	if (err) { /* the message names the file and the byte offset */
		fprintf(stderr, "count_types: %s\n", bach_reader_strerror(r));
		bach_reader_free(r);
		return bach_exit_status(err);
	}
	for (unsigned t = 0; t < BACH_NTYPES; t++)
		if (count[t])
			printf("%-11s %" PRIu64 "\n", bach_type_name(t),
			       count[t]);
	bach_reader_free(r);
	return 0;
}
