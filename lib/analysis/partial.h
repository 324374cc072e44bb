/* SPDX-License-Identifier: MIT */
/*
 * Partial results (docs/formats.md section 11): what `bach CMD --range A:B
 * --partial FILE` writes for `bach merge` to combine into what the unsplit
 * command prints. A partial is two lines of JSON: a header saying what made
 * it (the format's version, bach's version, the command, its canonical
 * options, the trace's identity, the range) and the command's state, then
 * (version 3) a binary section: the state's lists of lines as 32-bit
 * little-endian words, which line 2 points into ({"at": W, "n": N}).
 *
 * Error convention as in bach/trace.h: 0 or -errno, -EBADMSG for a file
 * that is not a partial, with a message naming the line and the member.
 */
#ifndef BACH_PARTIAL_H
#define BACH_PARTIAL_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "lib/analysis/cachesim.h"
#include "lib/analysis/mrc.h"
#include "lib/analysis/stats.h"

#define BACH_PARTIAL_FORMAT  "bach-partial"
#define BACH_PARTIAL_VERSION 3 /* 1 and 2 are read too */
/* the largest partial read (its state lines for 2^27 lines of stat) */
#define BACH_PARTIAL_MAX (1ull << 31)

/* The words of a partial's binary section: those read (bach_partial.words)
 * or those a state's lists put there while written (NULL: none). */
struct bach_partial_words {
	uint32_t *w; /* malloc'd */
	size_t n, cap;
};

struct bach_partial {
	json_t *head;			 /* the header object (owned) */
	json_t *data;			 /* the state object (owned) */
	struct bach_partial_words words; /* the binary section (owned) */
	const char *command;
	uint64_t start, end; /* the range; end UINT64_MAX: to the end */
	uint64_t records;    /* records read in it */
};

/*
 * Parse a partial (len bytes at buf): two lines, each one JSON object; the
 * header's members of the right types and its range start <= end; from
 * version 3 the binary section after them, its "words" words, else
 * nothing. On an error nothing is left to free.
 */
int bach_partial_parse(const char *buf, size_t len, struct bach_partial *p,
		       char *err, size_t errlen);
void bach_partial_free(struct bach_partial *p);

/* A partial, malloc'd: its two lines and the words of bin (none when NULL;
 * the header's "words" set to their count), *len bytes; NULL when memory
 * ran out. Steals head and data, frees bin's words.
 * bach_partial_format(): without words, a string. */
char *bach_partial_format_words(json_t *head, json_t *data,
				struct bach_partial_words *bin, size_t *len);
char *bach_partial_format(json_t *head, json_t *data);
void bach_partial_words_free(struct bach_partial_words *w);

/*
 * bach stat's state: its counters, the lines touched as runs
 * [first, count, ...], the address range. from_json adds the state into
 * s (which bach_stats_init() made): the merge of two chunks is the sum of
 * their counters, the union of their lines, the min and max of their
 * ranges. -EBADMSG, saying which member, when data is not one.
 */
json_t *bach_stats_to_json(struct bach_stats *s);
int bach_stats_from_json(struct bach_stats *s, const json_t *data, char *err,
			 size_t errlen);

/*
 * bach mrc's state (exact, bach_mrc_part): its counts, whether it saw a
 * gap marker, its first references before one and its stack at its end,
 * as lists of lines; set-associative, those per size ("sets"). to_json
 * puts the lists into words (the binary section; NULL: base64 strings in
 * the JSON, version 2's layout), or returns NULL when memory ran out.
 * from_json fills p, its lists malloc'd (bach_mrc_part_release() frees
 * them), the lists of any version (words: the partial's binary section,
 * NULL for none); ncnt is the count the configuration wants (sizes + 1),
 * nsa its sizes when set-associative, else 0. -EBADMSG saying which
 * member.
 */
json_t *bach_mrc_part_to_json(const struct bach_mrc_part *p,
			      struct bach_partial_words *words);
int bach_mrc_part_from_json(struct bach_mrc_part *p, size_t ncnt, size_t nsa,
			    const json_t *data,
			    const struct bach_partial_words *words, char *err,
			    size_t errlen);
void bach_mrc_part_release(struct bach_mrc_part *p);

/*
 * bach mrc --window's state: its pieces (bach_wss_piece), {"pieces":
 * [{"wstart", "records", "refs", and "lines" and "pages" counted, or
 * "line" and "page" the sets}]}, the sets as lists of lines the way
 * bach_mrc_part_to_json() and from_json take them. from_json: *p malloc'd
 * (bach_wss_pieces_free()).
 */
json_t *bach_wss_pieces_to_json(const struct bach_wss_piece *p, size_t n,
				struct bach_partial_words *words);
int bach_wss_pieces_from_json(struct bach_wss_piece **p, size_t *n,
			      const json_t *data,
			      const struct bach_partial_words *words, char *err,
			      size_t errlen);

/*
 * bach sim's options and state (docs/formats.md section 11). The
 * configuration: {"caches": {NAME: {"size", "line", "assoc", "full",
 * "replacement", "write", "allocate"}, ...}, "seed": N (null when no
 * cache is random)}; from_json fills cfg as the options would, -EBADMSG
 * with the reason. The state: the counts and, per cache, its
 * bach_sim_state_get() words as base64 of little-endian 32-bit words;
 * from_json loads it into s, made from the same configuration.
 */
json_t *bach_sim_config_to_json(const struct bach_sim_config *cfg);
int bach_sim_config_from_json(struct bach_sim_config *cfg, const json_t *o,
			      char *err, size_t errlen);
json_t *bach_sim_to_json(const struct bach_sim *s);
int bach_sim_from_json(struct bach_sim *s, const json_t *data, char *err,
		       size_t errlen);

#endif
