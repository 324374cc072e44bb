// SPDX-License-Identifier: MIT
/*
 * Partial results: their two lines of JSON and the binary section after
 * them (partial.h, docs/formats.md section 11), and the commands' states
 * in them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/analysis/partial.h"

#define LINE_BITS (1u << 27)

static int bad(char *err, size_t errlen, const char *what)
{
	snprintf(err, errlen, "%s", what);
	return -EBADMSG;
}

/* a whole number in 0..max */
static bool get_u64(const json_t *o, const char *key, uint64_t max, uint64_t *v)
{
	const json_t *j = json_object_get(o, key);

	if (!json_is_integer(j) || json_integer_value(j) < 0 ||
	    (uint64_t)json_integer_value(j) > max)
		return false;
	*v = (uint64_t)json_integer_value(j);
	return true;
}

static json_t *parse_line(const char *buf, size_t len, int line, char *err,
			  size_t errlen)
{
	json_error_t je;
	json_t *j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);

	if (!j) {
		snprintf(err, errlen, "line %d: not JSON: %s", line, je.text);
		return NULL;
	}
	if (!json_is_object(j)) {
		json_decref(j);
		snprintf(err, errlen, "line %d: not a JSON object", line);
		return NULL;
	}
	return j;
}

/* the header's "words" (version 3): the binary section is that many */
static int check_words(const char *rest, size_t len, struct bach_partial *p,
		       char *err, size_t errlen)
{
	uint64_t n;

	if (!json_is_integer(json_object_get(p->head, "words")))
		return bad(err, errlen,
			   "line 1: \"words\" missing or not a whole number");
	if (!get_u64(p->head, "words", len / 4, &n) || len != 4 * n) {
		snprintf(
			err, errlen,
			"the binary section after line 2 is %zu bytes, not the header's \"words\" %lld 32-bit words (cut short, or more)",
			len,
			(long long)json_integer_value(
				json_object_get(p->head, "words")));
		return -EBADMSG;
	}
	p->words.w = malloc((n + 1) * sizeof(*p->words.w));
	if (!p->words.w) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		const uint8_t *q = (const uint8_t *)rest + 4 * i;

		p->words.w[i] = (uint32_t)q[0] | (uint32_t)q[1] << 8 |
				(uint32_t)q[2] << 16 | (uint32_t)q[3] << 24;
	}
	p->words.n = p->words.cap = n;
	return 0;
}

int bach_partial_parse(const char *buf, size_t len, struct bach_partial *p,
		       char *err, size_t errlen)
{
	const char *nl = memchr(buf, '\n', len), *nl2;
	const json_t *j;
	uint64_t v;
	int rc;

	memset(p, 0, sizeof(*p));
	if (!nl)
		return bad(err, errlen,
			   "line 1: no end of line (not a partial)");
	p->head = parse_line(buf, (size_t)(nl - buf), 1, err, errlen);
	if (!p->head)
		return -EBADMSG;
	j = json_object_get(p->head, "format");
	if (!json_is_string(j) ||
	    strcmp(json_string_value(j), BACH_PARTIAL_FORMAT)) {
		bach_partial_free(p);
		return bad(err, errlen,
			   "line 1: \"format\" is not \"" BACH_PARTIAL_FORMAT
			   "\" (not a partial)");
	}
	if (!get_u64(p->head, "version", UINT32_MAX, &v) || v < 1 ||
	    v > BACH_PARTIAL_VERSION) {
		bach_partial_free(p);
		snprintf(
			err, errlen,
			"line 1: \"version\": not 1 to %d (a partial of another bach)",
			BACH_PARTIAL_VERSION);
		return -EBADMSG;
	}
	/* then line 2, and the binary section (version 3) or nothing */
	nl2 = memchr(nl + 1, '\n', len - (size_t)(nl + 1 - buf));
	if (!nl2 || (v < 3 && nl2 + 1 != buf + len)) {
		bach_partial_free(p);
		return bad(err, errlen,
			   "not two lines of JSON (cut short, or more)");
	}
	if (v >= 3) {
		rc = check_words(nl2 + 1, len - (size_t)(nl2 + 1 - buf), p, err,
				 errlen);
		if (rc) {
			bach_partial_free(p);
			return rc;
		}
	}
	j = json_object_get(p->head, "command");
	if (!json_is_string(j) ||
	    !json_is_string(json_object_get(p->head, "bach")) ||
	    !json_is_object(json_object_get(p->head, "options")) ||
	    !json_object_get(p->head, "trace")) {
		bach_partial_free(p);
		return bad(
			err, errlen,
			"line 1: \"command\", \"bach\", \"options\" or \"trace\" missing or of the wrong type");
	}
	p->command = json_string_value(j);
	p->end = UINT64_MAX;
	if (!get_u64(p->head, "start", INT64_MAX, &p->start) ||
	    !get_u64(p->head, "records", INT64_MAX, &p->records) ||
	    (!json_is_null(json_object_get(p->head, "end")) &&
	     !get_u64(p->head, "end", INT64_MAX, &p->end)) ||
	    p->end < p->start || p->records > p->end - p->start) {
		bach_partial_free(p);
		return bad(
			err, errlen,
			"line 1: \"start\", \"end\" or \"records\": not a range START <= END holding RECORDS");
	}
	p->data = parse_line(nl + 1, (size_t)(nl2 - nl - 1), 2, err, errlen);
	if (!p->data) {
		bach_partial_free(p);
		return -EBADMSG;
	}
	return 0;
}

void bach_partial_words_free(struct bach_partial_words *w)
{
	if (!w)
		return;
	free(w->w);
	memset(w, 0, sizeof(*w));
}

void bach_partial_free(struct bach_partial *p)
{
	json_decref(p->head);
	json_decref(p->data);
	bach_partial_words_free(&p->words);
	memset(p, 0, sizeof(*p));
}

char *bach_partial_format_words(json_t *head, json_t *data,
				struct bach_partial_words *bin, size_t *len)
{
	size_t flags = JSON_COMPACT | JSON_ENSURE_ASCII | JSON_SORT_KEYS;
	size_t nw = bin ? bin->n : 0, hl, dl;
	char *h = NULL, *d = NULL, *t = NULL;

	if (head && data &&
	    !json_object_set_new(head, "words", json_integer((json_int_t)nw)))
		h = json_dumps(head, flags);
	d = h ? json_dumps(data, flags) : NULL;
	if (d) {
		hl = strlen(h);
		dl = strlen(d);
		t = malloc(hl + dl + 2 + 4 * nw + 1);
	}
	if (t) {
		uint8_t *q = (uint8_t *)t + hl + dl + 2;

		memcpy(t, h, hl);
		t[hl] = '\n';
		memcpy(t + hl + 1, d, dl);
		t[hl + 1 + dl] = '\n';
		for (size_t i = 0; i < nw; i++, q += 4) {
			uint32_t w = bin->w[i];

			q[0] = (uint8_t)w;
			q[1] = (uint8_t)(w >> 8);
			q[2] = (uint8_t)(w >> 16);
			q[3] = (uint8_t)(w >> 24);
		}
		t[hl + dl + 2 + 4 * nw] = 0;
		*len = hl + dl + 2 + 4 * nw;
	}
	free(h);
	free(d);
	json_decref(head);
	json_decref(data);
	bach_partial_words_free(bin);
	return t;
}

char *bach_partial_format(json_t *head, json_t *data)
{
	size_t len;

	return bach_partial_format_words(head, data, NULL, &len);
}

json_t *bach_stats_to_json(struct bach_stats *s)
{
	json_t *o = json_object(), *cnt = json_array(), *lines = json_array();
	bool ok = o && cnt && lines;

	bach_stats_fold(s);
	for (unsigned i = 0; i < 65536 && ok; i++)
		if (s->by_ctl_be[i >> 8][i & 255])
			ok = !json_array_append_new(cnt, json_integer(i)) &&
			     !json_array_append_new(
				     cnt,
				     json_integer(
					     (json_int_t)
						     s->by_ctl_be[i >> 8]
								 [i & 255]));
	for (uint32_t b = 0; b < LINE_BITS && ok;) {
		uint32_t first;

		if (!s->lines[b >> 6]) {
			b = (b | 63) + 1;
			continue;
		}
		if (!(s->lines[b >> 6] >> (b & 63) & 1)) {
			b++;
			continue;
		}
		first = b;
		while (b < LINE_BITS && s->lines[b >> 6] >> (b & 63) & 1)
			b++;
		ok = !json_array_append_new(lines, json_integer(first)) &&
		     !json_array_append_new(lines, json_integer(b - first));
	}
	if (ok && !json_object_set_new(o, "counts", cnt) &&
	    !json_object_set_new(o, "lines", lines) &&
	    !json_object_set_new(o, "stop_grant",
				 json_integer((json_int_t)s->stop_grant)) &&
	    !json_object_set_new(o, "addr_low",
				 json_integer((json_int_t)s->addr_low)) &&
	    !json_object_set_new(o, "lost",
				 json_integer((json_int_t)s->lost)) &&
	    !json_object_set_new(o, "lo", json_integer(s->lo)) &&
	    !json_object_set_new(o, "hi", json_integer(s->hi)))
		return o;
	json_decref(o);
	if (!ok) {
		json_decref(cnt);
		json_decref(lines);
	}
	return NULL;
}

/* *a += v, when the sum stays a JSON integer */
static bool add(uint64_t *a, uint64_t v)
{
	if (v > (uint64_t)INT64_MAX - *a)
		return false;
	*a += v;
	return true;
}

/* bits lo to hi - 1 of w, whole words at a time */
static void set_bits(uint64_t *w, uint64_t lo, uint64_t hi)
{
	while (lo < hi && lo & 63)
		w[lo >> 6] |= 1ull << (lo & 63), lo++;
	while (hi - lo >= 64)
		w[lo >> 6] = ~0ull, lo += 64;
	while (lo < hi)
		w[lo >> 6] |= 1ull << (lo & 63), lo++;
}

int bach_stats_from_json(struct bach_stats *s, const json_t *data, char *err,
			 size_t errlen)
{
	const json_t *cnt = json_object_get(data, "counts");
	const json_t *lines = json_object_get(data, "lines");
	uint64_t sg, al, lost, lo, hi, v;
	size_t n;

	if (!get_u64(data, "stop_grant", INT64_MAX, &sg) ||
	    !get_u64(data, "addr_low", INT64_MAX, &al) ||
	    !get_u64(data, "lost", INT64_MAX, &lost) ||
	    !get_u64(data, "lo", UINT32_MAX, &lo) ||
	    !get_u64(data, "hi", UINT32_MAX, &hi))
		return bad(
			err, errlen,
			"line 2: \"stop_grant\", \"addr_low\", \"lost\", \"lo\" or \"hi\" missing or out of range");
	if (!json_is_array(cnt) || json_array_size(cnt) % 2 ||
	    !json_is_array(lines) || json_array_size(lines) % 2)
		return bad(
			err, errlen,
			"line 2: \"counts\" or \"lines\": not an array of pairs");
	n = json_array_size(cnt);
	for (size_t i = 0; i < n; i += 2) {
		const json_t *k = json_array_get(cnt, i);
		const json_t *c = json_array_get(cnt, i + 1);

		if (!json_is_integer(k) || json_integer_value(k) < 0 ||
		    json_integer_value(k) > 65535 || !json_is_integer(c) ||
		    json_integer_value(c) < 0)
			return bad(
				err, errlen,
				"line 2: \"counts\": not pairs of a control and BE# (0..65535) and a count");
		v = (uint64_t)json_integer_value(k);
		s->by_ctl_be[v >> 8][v & 255] +=
			(uint64_t)json_integer_value(c);
	}
	n = json_array_size(lines);
	for (size_t i = 0; i < n; i += 2) {
		const json_t *f = json_array_get(lines, i);
		const json_t *c = json_array_get(lines, i + 1);
		uint64_t first, len;

		if (!json_is_integer(f) || !json_is_integer(c) ||
		    json_integer_value(f) < 0 || json_integer_value(c) < 0 ||
		    (uint64_t)json_integer_value(f) > LINE_BITS ||
		    (uint64_t)json_integer_value(c) >
			    LINE_BITS - (uint64_t)json_integer_value(f))
			return bad(
				err, errlen,
				"line 2: \"lines\": not runs FIRST, COUNT of lines below 2^27");
		first = (uint64_t)json_integer_value(f);
		len = (uint64_t)json_integer_value(c);
		set_bits(s->lines, first, first + len);
	}
	if (!add(&s->stop_grant, sg) || !add(&s->addr_low, al) ||
	    !add(&s->lost, lost))
		return bad(
			err, errlen,
			"line 2: \"stop_grant\", \"addr_low\" or \"lost\": beyond 2^63 - 1");
	s->lo = (uint32_t)lo < s->lo ? (uint32_t)lo : s->lo;
	s->hi = (uint32_t)hi > s->hi ? (uint32_t)hi : s->hi;
	return 0;
}

static json_t *u64_array(const uint64_t *v, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < n; i++)
		if (json_array_append_new(a, json_integer((json_int_t)v[i]))) {
			json_decref(a);
			return NULL;
		}
	return a;
}

static json_t *words_b64(const uint32_t *w, size_t n);
static int b64_words(const char *t, size_t len, uint32_t **wp, size_t *np);

/*
 * A list of lines: {"at": W, "n": N}, N words of the binary section from
 * word W (version 3: the lines are copied, not written as text and parsed
 * again), or without words base64 of their 32-bit little-endian words
 * (version 2). NULL when memory ran out.
 */
static json_t *u32_array(struct bach_partial_words *words, const uint32_t *v,
			 size_t n)
{
	size_t at;

	if (!words)
		return words_b64(v, n);
	at = words->n;
	if (n > words->cap - at) {
		size_t c = words->cap ? words->cap : 4096;
		uint32_t *w;

		while (c - at < n)
			c *= 2;
		w = realloc(words->w, c * sizeof(*w));
		if (!w)
			return NULL;
		words->w = w;
		words->cap = c;
	}
	if (n)
		memcpy(words->w + at, v, n * sizeof(*v));
	words->n += n;
	return json_pack("{sIsI}", "at", (json_int_t)at, "n", (json_int_t)n);
}

json_t *bach_mrc_part_to_json(const struct bach_mrc_part *p,
			      struct bach_partial_words *words)
{
	json_t *o = json_pack(
		"{sIsIsIsososbsoso}", "refs", (json_int_t)p->refs, "flushes",
		(json_int_t)p->flushes, "cold", (json_int_t)p->cold, "counts",
		u64_array(p->cnt, p->ncnt), "hist",
		u64_array(p->hist, BACH_MRC_HIST_BUCKETS), "gap", p->gap,
		"first", u32_array(words, p->first, p->nfirst), "last",
		u32_array(words, p->last, p->nlast));
	json_t *sets = p->nsa ? json_array() : NULL;

	for (size_t i = 0; o && sets && i < p->nsa; i++)
		if (json_array_append_new(
			    sets,
			    json_pack("{sIsoso}", "misses",
				      (json_int_t)p->sa[i].misses, "first",
				      u32_array(words, p->sa[i].first,
						p->sa[i].nfirst),
				      "last",
				      u32_array(words, p->sa[i].last,
						p->sa[i].nlast)))) {
			json_decref(sets);
			sets = NULL;
		}
	if (p->nsa && (!sets || json_object_set_new(o, "sets", sets))) {
		json_decref(o);
		return NULL;
	}
	if (o && p->nnear_cnt &&
	    json_object_update_new(
		    o,
		    json_pack("{sososo}", "near_counts",
			      u64_array(p->near_cnt, p->nnear_cnt),
			      "near_first",
			      u32_array(words, p->near_first, p->nnear_first),
			      "near_last",
			      u32_array(words, p->near_last, p->nnear_last)))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* an array of n (any n when n is 0) whole numbers up to max, into v */
static bool get_array(const json_t *a, size_t n, uint64_t max, uint64_t *v)
{
	if (!json_is_array(a) || (n && json_array_size(a) != n))
		return false;
	for (size_t i = 0; i < json_array_size(a); i++) {
		const json_t *j = json_array_get(a, i);

		if (!json_is_integer(j) || json_integer_value(j) < 0 ||
		    (uint64_t)json_integer_value(j) > max)
			return false;
		if (v)
			v[i] = (uint64_t)json_integer_value(j);
	}
	return true;
}

static uint32_t *get_lines(const json_t *a,
			   const struct bach_partial_words *words, size_t *n)
{
	uint32_t *v;

	if (json_is_object(a)) { /* version 3: words of the binary section */
		uint64_t at, k;

		if (!words || json_object_size(a) != 2 ||
		    !get_u64(a, "at", words->n, &at) ||
		    !get_u64(a, "n", words->n - at, &k))
			return NULL;
		for (size_t i = 0; i < k; i++)
			if (words->w[at + i] == UINT32_MAX)
				return NULL;
		v = malloc((k + 1) * sizeof(*v));
		if (v && k)
			memcpy(v, words->w + at, k * sizeof(*v));
		if (v)
			*n = k;
		return v;
	}
	if (json_is_string(a)) { /* version 2: base64 of the words */
		uint32_t *w;
		size_t k;

		if (b64_words(json_string_value(a), json_string_length(a), &w,
			      &k))
			return NULL;
		for (size_t i = 0; i < k; i++)
			if (w[i] == UINT32_MAX) {
				free(w);
				return NULL;
			}
		v = realloc(w, (k + 1) * sizeof(*v));
		if (!v)
			free(w);
		else
			*n = k;
		return v;
	}
	/* version 1: an array of numbers */
	if (!get_array(a, 0, UINT32_MAX - 1, NULL))
		return NULL;
	*n = json_array_size(a);
	v = malloc((*n + 1) * sizeof(*v));
	for (size_t i = 0; v && i < *n; i++)
		v[i] = (uint32_t)json_integer_value(json_array_get(a, i));
	return v;
}

void bach_mrc_part_release(struct bach_mrc_part *p)
{
	free((void *)p->first);
	free(p->last);
	free((void *)p->near_first);
	free(p->near_last);
	for (size_t i = 0; i < p->nsa; i++) {
		free((void *)p->sa[i].first);
		free(p->sa[i].last);
	}
	memset(p, 0, sizeof(*p));
}

int bach_mrc_part_from_json(struct bach_mrc_part *p, size_t ncnt, size_t nsa,
			    const json_t *data,
			    const struct bach_partial_words *words, char *err,
			    size_t errlen)
{
	const json_t *gap = json_object_get(data, "gap");
	const json_t *sets = json_object_get(data, "sets"), *near;

	memset(p, 0, sizeof(*p));
	if (ncnt > BACH_MRC_MAX_SIZES + 1 || nsa > BACH_MRC_MAX_SIZES ||
	    !get_u64(data, "refs", INT64_MAX, &p->refs) ||
	    !get_u64(data, "flushes", INT64_MAX, &p->flushes) ||
	    !get_u64(data, "cold", INT64_MAX, &p->cold) ||
	    !get_array(json_object_get(data, "counts"), ncnt, INT64_MAX,
		       p->cnt) ||
	    !get_array(json_object_get(data, "hist"), BACH_MRC_HIST_BUCKETS,
		       INT64_MAX, p->hist) ||
	    !json_is_boolean(gap))
		return bad(
			err, errlen,
			"line 2: \"refs\", \"flushes\", \"cold\", \"counts\" (one per size and one), \"hist\" or \"gap\" missing or out of range");
	if (nsa ? !json_is_array(sets) || json_array_size(sets) != nsa
		: sets != NULL)
		return bad(
			err, errlen,
			"line 2: \"sets\": not one per size of a set-associative curve");
	p->ncnt = ncnt;
	p->gap = json_is_true(gap);
	p->first = get_lines(json_object_get(data, "first"), words, &p->nfirst);
	p->last = get_lines(json_object_get(data, "last"), words, &p->nlast);
	p->nsa = nsa;
	for (size_t i = 0; i < nsa; i++) {
		const json_t *q = json_array_get(sets, i);

		p->sa[i].first = get_lines(json_object_get(q, "first"), words,
					   &p->sa[i].nfirst);
		p->sa[i].last = get_lines(json_object_get(q, "last"), words,
					  &p->sa[i].nlast);
		if (!p->sa[i].first || !p->sa[i].last ||
		    !get_u64(q, "misses", INT64_MAX, &p->sa[i].misses)) {
			bach_mrc_part_release(p);
			return bad(
				err, errlen,
				"line 2: \"sets\": not \"misses\", \"first\" and \"last\" lists of lines");
		}
	}
	if (!p->first || !p->last) {
		bach_mrc_part_release(p);
		return bad(
			err, errlen,
			"line 2: \"first\" or \"last\": not a list of lines");
	}
	near = json_object_get(data, "near_counts");
	if (!near)
		return 0;
	p->nnear_cnt = json_array_size(near);
	p->near_first = get_lines(json_object_get(data, "near_first"), words,
				  &p->nnear_first);
	p->near_last = get_lines(json_object_get(data, "near_last"), words,
				 &p->nnear_last);
	if (!p->nnear_cnt || p->nnear_cnt > BACH_MRC_MAX_SIZES + 1 ||
	    !get_array(near, p->nnear_cnt, INT64_MAX, p->near_cnt) ||
	    !p->near_first || !p->near_last) {
		bach_mrc_part_release(p);
		return bad(
			err, errlen,
			"line 2: \"near_counts\", \"near_first\" or \"near_last\": not counts and lists of lines");
	}
	return 0;
}

json_t *bach_wss_pieces_to_json(const struct bach_wss_piece *p, size_t n,
				struct bach_partial_words *words)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < n; i++) {
		const struct bach_wss_piece *q = &p[i];
		json_t *o = json_pack(
			"{sIsIsI}", "wstart", (json_int_t)q->wstart, "records",
			(json_int_t)q->records, "refs", (json_int_t)q->refs);

		if (o && q->full)
			json_object_update_new(
				o, json_pack("{sIsI}", "lines",
					     (json_int_t)q->lines, "pages",
					     (json_int_t)q->pages));
		else if (o)
			json_object_update_new(
				o,
				json_pack("{soso}", "line",
					  u32_array(words, q->line, q->nline),
					  "page",
					  u32_array(words, q->page, q->npage)));
		if (!o || json_array_append_new(a, o)) {
			json_decref(a);
			return NULL;
		}
	}
	return a ? json_pack("{so}", "pieces", a) : NULL;
}

int bach_wss_pieces_from_json(struct bach_wss_piece **pp, size_t *n,
			      const json_t *data,
			      const struct bach_partial_words *words, char *err,
			      size_t errlen)
{
	const json_t *a = json_object_get(data, "pieces");
	struct bach_wss_piece *p;

	*pp = NULL;
	*n = 0;
	if (!json_is_array(a) || !json_array_size(a))
		return bad(err, errlen,
			   "line 2: \"pieces\": not a list of windows");
	p = calloc(json_array_size(a), sizeof(*p));
	if (!p) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < json_array_size(a); i++) {
		const json_t *o = json_array_get(a, i);
		struct bach_wss_piece *q = &p[i];

		q->full = json_object_get(o, "lines") != NULL;
		if (!get_u64(o, "wstart", INT64_MAX, &q->wstart) ||
		    !get_u64(o, "records", INT64_MAX, &q->records) ||
		    !get_u64(o, "refs", INT64_MAX, &q->refs) ||
		    (q->full ? !get_u64(o, "lines", INT64_MAX, &q->lines) ||
				       !get_u64(o, "pages", INT64_MAX,
						&q->pages)
			     : !(q->line = get_lines(json_object_get(o, "line"),
						     words, &q->nline)) ||
				       !(q->page = get_lines(
						 json_object_get(o, "page"),
						 words, &q->npage)))) {
			bach_wss_pieces_free(p, i + 1);
			return bad(
				err, errlen,
				"line 2: \"pieces\": a window without \"wstart\", \"records\", \"refs\" and its counts or sets");
		}
		for (size_t k = 1; k < q->nline || k < q->npage; k++)
			if ((k < q->nline && q->line[k] <= q->line[k - 1]) ||
			    (k < q->npage && q->page[k] <= q->page[k - 1])) {
				bach_wss_pieces_free(p, i + 1);
				return bad(
					err, errlen,
					"line 2: \"pieces\": a set not ascending");
			}
		*n = i + 1;
	}
	*pp = p;
	return 0;
}

/* ---- bach sim ----------------------------------------------------------- */

static const char *const repl_names[] = { "lru", "fifo", "random" };

json_t *bach_sim_config_to_json(const struct bach_sim_config *cfg)
{
	json_t *caches = json_object();
	bool random = false;

	for (int i = 0; caches && i < BACH_SIM_NCACHES; i++) {
		const struct bach_cache_spec *c = &cfg->spec[i];

		if (!cfg->have[i])
			continue;
		random |= c->repl == BACH_REPL_RANDOM;
		if (json_object_set_new(
			    caches, bach_sim_cache_names[i],
			    json_pack("{sIsisisbsssssb}", "size",
				      (json_int_t)c->size, "line", (int)c->line,
				      "assoc", (int)c->assoc, "full", c->full,
				      "replacement", repl_names[c->repl],
				      "write",
				      c->write_through ? "through" : "back",
				      "allocate", !c->no_allocate))) {
			json_decref(caches);
			return NULL;
		}
	}
	return json_pack("{soso}", "caches", caches, "seed",
			 random ? json_integer((json_int_t)cfg->seed)
				: json_null());
}

int bach_sim_config_from_json(struct bach_sim_config *cfg, const json_t *o,
			      char *err, size_t errlen)
{
	const json_t *caches = json_object_get(o, "caches");
	const json_t *seed = json_object_get(o, "seed");
	char text[160], why[200], ways[24];

	memset(cfg, 0, sizeof(*cfg));
	cfg->seed = 1;
	if (!json_is_object(caches) ||
	    (!json_is_null(seed) && !get_u64(o, "seed", INT64_MAX, &cfg->seed)))
		return bad(
			err, errlen,
			"line 1: \"options\": \"caches\" or \"seed\" missing or of the wrong type");
	for (int i = 0; i < BACH_SIM_NCACHES; i++) {
		const json_t *c =
			json_object_get(caches, bach_sim_cache_names[i]);
		struct bach_cache_spec *sp = &cfg->spec[i];
		const char *r, *w;
		json_int_t size, line, assoc;
		int full, alloc, rc;

		if (!c)
			continue;
		if (json_unpack((json_t *)c, "{sIsIsIsbsssssb!}", "size", &size,
				"line", &line, "assoc", &assoc, "full", &full,
				"replacement", &r, "write", &w, "allocate",
				&alloc) ||
		    size < 0 || line < 0 || assoc < 0) {
			snprintf(
				err, errlen,
				"line 1: \"options\": cache \"%s\" is not one bach sim describes",
				bach_sim_cache_names[i]);
			return -EBADMSG;
		}
		/* as the options would say it, and through their checks */
		snprintf(ways, sizeof(ways), "%llu", (unsigned long long)assoc);
		if (i == BACH_SIM_TLB) {
			snprintf(text, sizeof(text), "%llu:%s",
				 (unsigned long long)size / BACH_TLB_PAGE,
				 full ? "full" : ways);
			rc = bach_tlb_spec_parse(text, sp, why, sizeof(why));
		} else {
			snprintf(text, sizeof(text), "%llu:%llu:%s:%s:w%c:%s",
				 (unsigned long long)size,
				 (unsigned long long)line, full ? "full" : ways,
				 r, !strcmp(w, "through") ? 't' : 'b',
				 alloc ? "wa" : "nwa");
			rc = bach_cache_spec_parse(text, sp, why, sizeof(why));
		}
		if (rc || sp->size != (uint64_t)size ||
		    sp->line != (uint64_t)line ||
		    sp->assoc != (uint64_t)assoc || sp->full != !!full ||
		    strcmp(r, repl_names[sp->repl]) ||
		    strcmp(w, sp->write_through ? "through" : "back") ||
		    sp->no_allocate == !!alloc) {
			snprintf(
				err, errlen,
				"line 1: \"options\": cache \"%s\" is not one bach sim describes",
				bach_sim_cache_names[i]);
			return -EBADMSG;
		}
		cfg->have[i] = true;
	}
	return 0;
}

static const char b64[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* n words as base64 (RFC 4648, padded) of their little-endian bytes */
static json_t *words_b64(const uint32_t *w, size_t n)
{
	size_t len = 4 * n, i, o = 0;
	char *t = malloc((len + 2) / 3 * 4 + 1);
	json_t *j;

#define BYTE(k) ((unsigned)(w[(k) / 4] >> 8 * ((k) % 4)) & 255)
	if (!t)
		return NULL;
	for (i = 0; i + 3 <= len; i += 3) {
		unsigned v = BYTE(i) << 16 | BYTE(i + 1) << 8 | BYTE(i + 2);

		t[o++] = b64[v >> 18];
		t[o++] = b64[v >> 12 & 63];
		t[o++] = b64[v >> 6 & 63];
		t[o++] = b64[v & 63];
	}
	if (i < len) {
		unsigned v =
			BYTE(i) << 16 | (i + 1 < len ? BYTE(i + 1) << 8 : 0);

		t[o++] = b64[v >> 18];
		t[o++] = b64[v >> 12 & 63];
		t[o++] = i + 1 < len ? b64[v >> 6 & 63] : '=';
		t[o++] = '=';
	}
#undef BYTE
	t[o] = 0;
	j = json_stringn(t, o);
	free(t);
	return j;
}

/* base64 of whole little-endian words back into *w (malloc'd), or -1 */
static int b64_words(const char *t, size_t len, uint32_t **wp, size_t *np)
{
	static signed char val[256];
	size_t nb, o = 0;
	uint8_t *b;

	if (!val['B'])
		for (int i = 0; i < 256; i++)
			val[i] = (signed char)(strchr(b64, i) && i
						       ? strchr(b64, i) - b64
						       : -1);
	*wp = NULL;
	*np = 0;
	if (len % 4)
		return -1;
	nb = len / 4 * 3 - (len && t[len - 1] == '=') -
	     (len && t[len - 2] == '=');
	if (nb % 4)
		return -1;
	b = malloc(nb + 3);
	if (!b)
		return -1;
	for (size_t i = 0; i < len; i += 4) {
		int v[4];
		bool last = i + 4 == len;

		for (int k = 0; k < 4; k++) {
			v[k] = val[(unsigned char)t[i + k]];
			if (v[k] < 0 && !(last && k >= 2 && t[i + k] == '=' &&
					  (k == 3 || t[i + 3] == '='))) {
				free(b);
				return -1;
			}
		}
		b[o++] = (uint8_t)(v[0] << 2 | v[1] >> 4);
		if (v[2] >= 0)
			b[o++] = (uint8_t)(v[1] << 4 | v[2] >> 2);
		if (v[3] >= 0)
			b[o++] = (uint8_t)(v[2] << 6 | v[3]);
	}
	if (o != nb) {
		free(b);
		return -1;
	}
	*wp = (uint32_t *)(void *)b; /* in place: bytes to words */
	for (size_t i = 0; i < nb / 4; i++) {
		const uint8_t *q = b + 4 * i;

		(*wp)[i] = (uint32_t)q[0] | (uint32_t)q[1] << 8 |
			   (uint32_t)q[2] << 16 | (uint32_t)q[3] << 24;
	}
	*np = nb / 4;
	return 0;
}

static json_t *kinds3(const uint64_t *v)
{
	return u64_array(v, BACH_REF_NKINDS);
}

json_t *bach_sim_to_json(const struct bach_sim *s)
{
	struct bach_sim_counts c;
	json_t *caches = json_object(), *o;
	uint64_t draws[BACH_SIM_NCACHES];
	uint64_t last = bach_sim_last_get(s, draws);

	bach_sim_get_counts(s, &c);
	for (int i = 0; caches && i < BACH_SIM_NCACHES; i++) {
		const struct bach_cache_stats *st = bach_sim_stats(s, i);
		uint32_t *w;
		size_t n;

		if (!st)
			continue;
		if (bach_sim_state_get(s, i, &w, &n) ||
		    json_object_set_new(
			    caches, bach_sim_cache_names[i],
			    json_pack("{sososIsIsIso}", "fetches",
				      kinds3(st->fetch), "misses",
				      kinds3(st->miss), "multiblock",
				      (json_int_t)st->multiblock, "bytes_read",
				      (json_int_t)st->bytes_read,
				      "bytes_written",
				      (json_int_t)st->bytes_written, "state",
				      words_b64(w, n)))) {
			free(w);
			json_decref(caches);
			return NULL;
		}
		free(w);
		if (draws[i] &&
		    json_object_set_new(
			    json_object_get(caches, bach_sim_cache_names[i]),
			    "draws", json_integer((json_int_t)draws[i]))) {
			json_decref(caches);
			return NULL;
		}
	}
	o = json_pack("{sIsIsIsIsosI}", "records", (json_int_t)c.t.records,
		      "references", (json_int_t)c.t.refs, "skipped",
		      (json_int_t)c.t.skipped, "flushes",
		      (json_int_t)c.t.flushes, "caches", caches, "last",
		      (json_int_t)last);
	return o;
}

int bach_sim_from_json(struct bach_sim *s, const json_t *data, char *err,
		       size_t errlen)
{
	const json_t *caches = json_object_get(data, "caches");
	struct bach_sim_counts c;
	uint64_t last = 0, draws[BACH_SIM_NCACHES] = { 0 };
	char why[200];

	memset(&c, 0, sizeof(c));
	if ((json_object_get(data, "last") &&
	     !get_u64(data, "last", INT64_MAX, &last)) ||
	    !get_u64(data, "records", INT64_MAX, &c.t.records) ||
	    !get_u64(data, "references", INT64_MAX, &c.t.refs) ||
	    !get_u64(data, "skipped", INT64_MAX, &c.t.skipped) ||
	    !get_u64(data, "flushes", INT64_MAX, &c.t.flushes) ||
	    !json_is_object(caches) ||
	    json_object_size(caches) > BACH_SIM_NCACHES)
		return bad(
			err, errlen,
			"line 2: \"records\", \"references\", \"skipped\", \"flushes\" or \"caches\" missing or out of range");
	for (int i = 0; i < BACH_SIM_NCACHES; i++) {
		const json_t *o =
			json_object_get(caches, bach_sim_cache_names[i]);
		struct bach_cache_stats *st = &c.st[i];
		const json_t *state = json_object_get(o, "state");
		uint32_t *w;
		size_t n;
		int rc;

		if (!o != !bach_sim_stats(s, i)) {
			snprintf(err, errlen, "line 2: cache \"%s\" %s",
				 bach_sim_cache_names[i],
				 o ? "not in the options" : "missing");
			return -EBADMSG;
		}
		if (!o)
			continue;
		if (json_object_size(o) != 6 + !!json_object_get(o, "draws") ||
		    (json_object_get(o, "draws") &&
		     !get_u64(o, "draws", INT64_MAX, &draws[i])) ||
		    !get_array(json_object_get(o, "fetches"), BACH_REF_NKINDS,
			       INT64_MAX, st->fetch) ||
		    !get_array(json_object_get(o, "misses"), BACH_REF_NKINDS,
			       INT64_MAX, st->miss) ||
		    !get_u64(o, "multiblock", INT64_MAX, &st->multiblock) ||
		    !get_u64(o, "bytes_read", INT64_MAX, &st->bytes_read) ||
		    !get_u64(o, "bytes_written", INT64_MAX,
			     &st->bytes_written) ||
		    !json_is_string(state) ||
		    b64_words(json_string_value(state),
			      json_string_length(state), &w, &n)) {
			snprintf(
				err, errlen,
				"line 2: cache \"%s\": its counts or \"state\" (base64 of 32-bit words) missing or out of range",
				bach_sim_cache_names[i]);
			return -EBADMSG;
		}
		rc = bach_sim_state_set(s, i, w, n, why, sizeof(why));
		free(w);
		if (rc) {
			snprintf(err, errlen,
				 "line 2: cache \"%s\": \"state\" %s",
				 bach_sim_cache_names[i], why);
			return -EBADMSG;
		}
	}
	bach_sim_set_counts(s, &c);
	bach_sim_last_set(s, last, draws);
	return 0;
}
