// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: bach_partial_parse() and bach_stats_from_json(), the
 * reader of partial results that bach merge uses (docs/formats.md section
 * 10). The input is the whole partial file.
 *
 * Checks: the result is 0 or -EBADMSG with a reason; on success the range
 * is START <= END holding at most END - START records and the command is a
 * string; a state that loads is written back by bach_stats_to_json() to a
 * partial that parses and loads into the same counters (a round trip), so
 * a merge of it is what it says; the same state read as bach mrc's
 * (bach_mrc_part_from_json()) is refused with a reason or has its lists,
 * and read as --window's pieces it is refused or merges without harm;
 * bach sim's options (bach_sim_config_from_json()) and state
 * (bach_sim_from_json()) are refused with a reason or load into a
 * simulator that holds the same state when written back and read again,
 * and that simulates and copies back without harm; so are each line's of
 * a sweep's partial (bach sim --configs).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/analysis/partial.h"

#include "fuzz_check.h"

static struct bach_stats a, b;

static const uint8_t recs[] = {
	0x00, 0x00, 0x10, 0x00, 0x00, 0x80, /* fetches, reads, writes */
	0x00, 0x00, 0x20, 0x08, 0xf0, 0xc0, 0x00, 0x01, 0x00,
	0x04, 0x00, 0xe0, 0x00, 0x00, 0x10, 0x00, 0x0f, 0xe0,
};

/* bach sim's options and state, as bach merge reads them */
static void sim_one(const json_t *options, const json_t *data)
{
	struct bach_sim_config cfg;
	struct bach_sim *x = NULL, *y = NULL;
	char err[300] = "";
	json_t *j, *k;
	uint64_t lines = 0;
	int rc;

	rc = bach_sim_config_from_json(&cfg, options, err, sizeof(err));
	CHECK(rc == 0 || (rc == -EBADMSG && err[0]), "sim config rc %d", rc);
	if (rc)
		return;
	for (int i = 0; i < BACH_SIM_NCACHES; i++)
		if (cfg.have[i])
			lines += cfg.spec[i].size / cfg.spec[i].line;
	if (lines > (1u << 16) || bach_sim_new(&x, &cfg, err, sizeof(err)) ||
	    bach_sim_new(&y, &cfg, err, sizeof(err))) {
		bach_sim_free(x);
		return;
	}
	rc = bach_sim_from_json(x, data, err, sizeof(err));
	CHECK(rc == 0 || (rc == -EBADMSG && err[0]), "sim state rc %d", rc);
	if (!rc) {
		j = bach_sim_to_json(x);
		CHECK(j, "sim to json");
		rc = bach_sim_from_json(y, j, err, sizeof(err));
		CHECK(!rc, "sim state written back, refused: %s", err);
		CHECK(bach_sim_same_state(x, y), "sim round trip changed it");
		k = bach_sim_to_json(y);
		CHECK(json_equal(j, k), "sim state written twice differs");
		json_decref(j);
		json_decref(k);
		bach_sim_add(x, recs, sizeof(recs) / BACH_REC_SIZE);
		bach_sim_finish(x);
	}
	bach_sim_free(x);
	bach_sim_free(y);
}

/* bach sim's, or a sweep's (--configs): each line's options and state */
static void sim(const struct bach_partial *p)
{
	const json_t *op = json_object_get(p->head, "options");
	const json_t *lines = json_object_get(op, "configs");
	const json_t *states = json_object_get(p->data, "configs");

	if (!lines) {
		sim_one(op, p->data);
		return;
	}
	for (size_t i = 0; i < json_array_size(lines) && i < 8; i++)
		sim_one(json_object_get(json_array_get(lines, i), "options"),
			json_array_get(states, i));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bach_partial p, q;
	char err[300] = "", *text;
	int rc;

	rc = bach_partial_parse((const char *)data, size, &p, err, sizeof(err));
	CHECK(rc == 0 || rc == -EBADMSG, "rc %d", rc);
	if (rc) {
		CHECK(err[0], "refused without a reason");
		return 0;
	}
	CHECK(p.start <= p.end && p.records <= p.end - p.start,
	      "range %llu:%llu records %llu", (unsigned long long)p.start,
	      (unsigned long long)p.end, (unsigned long long)p.records);
	CHECK(p.command && p.head && p.data, "no command");
	{
		struct bach_mrc_part mp;
		size_t nc = json_array_size(json_object_get(p.data, "counts"));

		size_t ns = json_array_size(json_object_get(p.data, "sets"));

		rc = bach_mrc_part_from_json(&mp, nc, ns, p.data, &p.words, err,
					     sizeof(err));
		CHECK(rc == 0 || (rc == -EBADMSG && err[0]), "mrc rc %d", rc);
		CHECK(rc || (mp.first && mp.last && mp.ncnt == nc &&
			     mp.nsa == ns),
		      "mrc state without its lists");
		bach_mrc_part_release(&mp);
	}
	{ /* and as bach mrc --window's pieces, merged */
		struct bach_wss_piece *pc;
		struct bach_wss_merge acc = { 0 };
		size_t np;

		rc = bach_wss_pieces_from_json(&pc, &np, p.data, &p.words, err,
					       sizeof(err));
		CHECK(rc == 0 || ((rc == -EBADMSG || rc == -ENOMEM) && err[0]),
		      "wss rc %d", rc);
		if (!rc) {
			rc = bach_wss_merge_add(&acc, pc, np);
			CHECK(rc == 0 || rc == -EINVAL || rc == -ENOMEM,
			      "merge rc %d", rc);
			bach_wss_pieces_free(pc, np);
			bach_wss_merge_free(&acc);
		}
	}
	sim(&p);
	bach_stats_free(&a);
	bach_stats_free(&b);
	CHECK(!bach_stats_init(&a) && !bach_stats_init(&b), "init");
	if (bach_stats_from_json(&a, p.data, err, sizeof(err))) {
		bach_partial_free(&p);
		return 0;
	}
	text = bach_partial_format(json_deep_copy(p.head),
				   bach_stats_to_json(&a));
	CHECK(text, "format");
	rc = bach_partial_parse(text, strlen(text), &q, err, sizeof(err));
	CHECK(rc == 0, "written back, refused: %s", err);
	CHECK(!bach_stats_from_json(&b, q.data, err, sizeof(err)),
	      "written back, state refused: %s", err);
	json_decref(bach_stats_to_json(&b)); /* folds b as a was */
	CHECK(!memcmp(a.by_ctl_be, b.by_ctl_be, sizeof(a.by_ctl_be)) &&
		      a.lost == b.lost && a.lo == b.lo && a.hi == b.hi &&
		      a.stop_grant == b.stop_grant &&
		      a.addr_low == b.addr_low &&
		      !memcmp(a.lines, b.lines, (1u << 27) / 8),
	      "round trip changed the state");
	free(text);
	bach_partial_free(&p);
	bach_partial_free(&q);
	return 0;
}
