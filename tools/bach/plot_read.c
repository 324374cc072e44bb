// SPDX-License-Identifier: MIT
/*
 * The passes of bach plot's kinds over their traces (plot_kinds.h): each
 * trace in order, whole blocks to the kind's add(), trace positions
 * counted across them, and the vertical rules gathered on the way: a
 * capture directory's gaps, marks and device events from its manifest,
 * or, for a plain file, its gap markers. plot_canvas.c draws the rules.
 * With --type, --addr or --port the passes see the records kept, at their
 * positions among them, and each rule moves to the position of the first
 * kept record at or after it (gap markers are kept: theirs stay exact).
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bach/bytes.h"
#include "cmd.h"
#include "lib/io/manifest.h"
#include "plot_kinds.h"

static void rule_add(struct rules *rs, uint64_t at, int kind, uint64_t count,
		     const char *l)
{
	if (rs->n == MAX_RULES) {
		rs->dropped++;
		return;
	}
	rs->r[rs->n].at = at;
	rs->r[rs->n].kind = kind;
	rs->r[rs->n].count = count;
	snprintf(rs->r[rs->n].label, sizeof(rs->r[rs->n].label), "%s", l);
	utf8_clean(rs->r[rs->n].label);
	rs->n++;
}

/*
 * The rules of a capture directory's manifest, offset by base; false
 * when path is not a capture (its gap markers then give the gaps).
 */
static bool manifest_rules(const char *path, uint64_t base, struct rules *rs)
{
	struct bach_manifest m;
	char err[256];
	struct stat st;
	int fd;

	if (stat(path, &st) || !S_ISDIR(st.st_mode))
		return false;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (bach_manifest_load(fd, path, &m, err, sizeof(err))) {
		close(fd);
		bach_manifest_free(&m);
		return false;
	}
	close(fd);
	for (size_t i = 0; i < m.nevents; i++) {
		const struct bach_manifest_event *e = &m.events[i];
		char l[64];

		if (!e->has_at)
			continue;
		switch (e->kind) {
		case BACH_EV_GAP:
			snprintf(l, sizeof(l), "%llu records lost%s%.32s%s",
				 (unsigned long long)e->count,
				 e->detail[0] ? " (" : "", e->detail,
				 e->detail[0] ? ")" : "");
			break;
		case BACH_EV_MARK:
			snprintf(l, sizeof(l), "%.63s", e->detail);
			break;
		case BACH_EV_DEVICE_LOST:
			snprintf(l, sizeof(l), "device lost");
			break;
		case BACH_EV_DEVICE_BACK:
			snprintf(l, sizeof(l), "device back");
			break;
		default:
			continue;
		}
		rule_add(rs, base + e->at, (int)e->kind, e->count, l);
	}
	bach_manifest_free(&m);
	return true;
}

struct rec_filter *plot_filter;

/*
 * The rules from first on that lie in [p->upos, p->upos + n) of the
 * trace read, moved to the kept records' positions (off: the places of
 * the k kept ones in the block; NULL: all kept).
 */
static void rules_move(struct pass *p, size_t first, const uint32_t *off,
		       size_t k, size_t n)
{
	for (size_t i = first; p->rules && i < p->rules->n; i++) {
		struct rule *r = &p->rules->r[i];
		uint64_t d = r->at - p->upos;
		size_t lo = 0, hi = k;

		if (r->at < p->upos || d >= n)
			continue;
		if (!off) {
			r->at = p->pos + d;
			continue;
		}
		while (lo < hi) { /* the first kept at or after d */
			size_t mid = lo + (hi - lo) / 2;

			if (off[mid] < d)
				lo = mid + 1;
			else
				hi = mid;
		}
		r->at = p->pos + lo;
	}
}

static void pass_add(void *ctx, const uint8_t *recs, size_t n)
{
	struct pass *p = ctx;
	const uint8_t *kept = recs;
	ssize_t k;

	if (p->markers && p->rules) {
		for (size_t i = 0; i < n; i++) {
			const uint8_t *r = recs + i * BACH_REC_SIZE;
			char l[64];

			if (!bach_rec_is_gap(r))
				continue;
			snprintf(l, sizeof(l), "%u records lost",
				 bach_get_be32(r));
			rule_add(p->rules, p->upos + i, BACH_EV_GAP,
				 bach_get_be32(r), l);
		}
	}
	k = filter_block(plot_filter, &kept, NULL, n);
	if (k < 0) {
		p->nomem = true;
		k = 0;
	}
	rules_move(p, p->first_rule,
		   plot_filter && plot_filter->on ? plot_filter->off : NULL,
		   (size_t)k, n);
	if (k)
		p->add(p, kept, (size_t)k);
	p->pos += (uint64_t)k;
	p->upos += n;
}

/* Every trace in order through p; rules from manifests or markers. */
int read_all(struct pass *p, int ntraces, char **traces, struct rules *rules)
{
	p->pos = p->upos = 0;
	p->nomem = false;
	p->rules = rules;
	if (rules)
		rules->n = rules->dropped = 0;
	for (int i = 0; i < ntraces; i++) {
		uint64_t n;
		int status;

		p->first_rule = rules ? rules->n : 0;
		p->markers =
			!(rules && manifest_rules(traces[i], p->upos, rules));
		status = read_traces(1, &traces[i], NULL, pass_add, p, &n);
		if (status)
			return status;
		if (p->nomem) {
			errmsg("out of memory");
			return EXIT_USAGE;
		}
		/* rules at or past the trace's end: at its end */
		for (size_t j = p->first_rule; rules && j < rules->n; j++)
			if (rules->r[j].at >= p->upos)
				rules->r[j].at = p->pos;
		p->upos = p->pos;
	}
	return EXIT_OK;
}
