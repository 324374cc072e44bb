// SPDX-License-Identifier: MIT
/*
 * csv: one line per record as bach_fmt_csv() (lib/io/text.c) writes it,
 * after BACH_CSV_HEADER; the BYU record fields of the BYU Address Trace
 * Specification V1.0 (../shared/references: 000). Export only. Its gap
 * markers are written as any INVALID record here; bach convert writes
 * them as dump does, with their cause (tools/bach/convert.c to_text()).
 */
#include "lib/formats/format_kit.h"

/* ---- csv --------------------------------------------------------------- */

/* bach_fmt_csv() (lib/io/text.c), every record, after BACH_CSV_HEADER */
static size_t csv_write(char *dst, const uint8_t *recs, size_t n,
			uint64_t index, const uint64_t *time, uint64_t *skipped,
			struct bach_export_carry *carry)
{
	char *d = dst;

	(void)time;
	(void)skipped;
	(void)carry;
	for (size_t i = 0; i < n; i++)
		d += bach_fmt_csv(d, recs + i * BACH_REC_SIZE, index + i);
	return (size_t)(d - dst);
}

const struct bach_format fmt_csv = {
	.name = "csv",
	.kind = BACH_FORMAT_FOREIGN,
	.help = "index,address,be,control,type",
	.ext = ".csv",
	.write = csv_write,
	.header = BACH_CSV_HEADER,
};
