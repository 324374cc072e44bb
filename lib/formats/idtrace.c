// SPDX-License-Identifier: MIT
/*
 * idtrace: the cache trace of IDtrace, Pierce and Mudge, "IDtrace -- A
 * Tracing Tool for i486 Simulation", CSE-TR-203-94, appendix A.1
 * (../shared/references: 003).
 */
#include "lib/formats/format_kit.h"

/* ---- IDtrace ------------------------------------------------------------ */

/* IDtrace's tags (CSE-TR-203-94, appendix A.1, "Cache Trace") */
enum {
	IDT_RDTAG = 0x10,
	IDT_WRTAG = 0x20,
	IDT_RRDTAG = 0x30,
	IDT_RWRTAG = 0x40,
	IDT_RENDTAG = 0x50,
	IDT_CLTAG = 0x60,
};
#define IDT_LINE 16 /* IDtrace's default cache line */

/*
 * A cache trace entry: a tag byte and a 4-byte address, little-endian
 * (the i486's own order: the instrumented program wrote its buffer out as
 * it held it; the report does not say). A data reference's tag is the
 * direction plus a size code: 1 byte, 2 word, 3 lword, 4 64 bits, 5 80
 * bits. CLTAG names the start of an instruction cache line.
 */
static int idtrace_line(const char *line, size_t len, unsigned flags,
			uint8_t *out, uint64_t *skipped, const char **why)
{
	static const uint8_t bytes[6] = { 0, 1, 2, 4, 8, 10 };
	const uint8_t *p = (const uint8_t *)line;
	unsigned tag, code;
	uint32_t addr;

	if (len != BACH_IDTRACE_SIZE)
		return bad(why, "IDtrace entry of %zu bytes, not 5", len);
	tag = p[0];
	addr = bach_get_le32(p + 1);
	code = tag & 0x0f;
	switch (tag & 0xf0) {
	case IDT_RDTAG:
	case IDT_WRTAG:
	case IDT_RRDTAG:
	case IDT_RWRTAG:
		if (code < 1 || code > 5)
			return bad(why, "bad size code in tag 0x%02x (1 to 5)",
				   tag);
		return split(out, addr, bytes[code],
			     (tag & 0xf0) == IDT_RDTAG ||
					     (tag & 0xf0) == IDT_RRDTAG
				     ? CTL_NC_D_READ
				     : CTL_D_WRITE,
			     flags, BACH_IMPORT_MAX_RECS, why);
	case IDT_RENDTAG:
		if (tag != IDT_RENDTAG || addr)
			return bad(
				why,
				"bad repeat-end entry (tag 0x%02x, address %08x; 0x50 and 0 expected)",
				tag, addr);
		(*skipped)++;
		return 0;
	case IDT_CLTAG:
		if (tag != IDT_CLTAG)
			break;
		return split(out, addr & ~(uint32_t)(IDT_LINE - 1), IDT_LINE,
			     CTL_NC_I_FETCH, flags, BACH_IMPORT_MAX_RECS, why);
	}
	return bad(why, "tag 0x%02x is not a cache trace entry", tag);
}

/* IDtrace's size codes (CSE-TR-203-94, A.1): 1 byte, 2 word, 3 lword,
 * 4 64 bits; a span without its own code takes the next wider one. */
static const uint8_t idt_code[9] = { 0, 1, 2, 3, 3, 4, 4, 4, 4 };

/*
 * Tag + LE32: a data reference, or the 16-byte instruction cache line a
 * fetch falls in; with a carry, a fetch in the line of the entry just
 * written adds none (docs/formats.md section 7.6).
 */
static size_t idtrace_write(char *dst, const uint8_t *recs, size_t n,
			    uint64_t index, const uint64_t *time,
			    uint64_t *skipped, struct bach_export_carry *carry)
{
	uint8_t *b = (uint8_t *)dst;
	uint64_t skip = 0, line = carry ? carry->line : 0, folded = 0;

	(void)index;
	(void)time;
	for (size_t i = 0; i < n; i++) {
		const uint8_t *rec = recs + i * BACH_REC_SIZE;
		char c = direction[rec[5] >> 4];
		unsigned size;
		uint64_t addr;

		if (!c) {
			skip++;
			continue;
		}
		addr = span(rec, &size);
		if (c == 'i') {
			uint64_t l = (addr & ~15u) + 1;

			if (carry && l == line) {
				folded++;
				continue;
			}
			line = l;
			b[0] = 0x60;
			bach_put_le32(b + 1, (uint32_t)addr & ~15u);
		} else {
			line = 0;
			b[0] = (uint8_t)((c == 'r' ? 0x10 : 0x20) +
					 idt_code[size]);
			bach_put_le32(b + 1, (uint32_t)addr);
		}
		b += BACH_IDTRACE_SIZE;
	}
	*skipped += skip;
	if (carry) {
		carry->line = line;
		carry->folded += folded;
	}
	return (size_t)((char *)b - dst);
}

const struct bach_format fmt_idtrace = {
	.name = "idtrace",
	.kind = BACH_FORMAT_FOREIGN,
	.help = "IDtrace cache trace (tag + address, 5 bytes)",
	.line = idtrace_line,
	.write = idtrace_write,
	.unit = BACH_IDTRACE_SIZE,
};
