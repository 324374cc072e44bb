// SPDX-License-Identifier: MIT
/*
 * The bus signals and the channel maps (lib/bus/busdecode.h): the
 * signals' names and the levels they take when not captured, map files,
 * a map resolved against a capture's channel names, and the text that
 * says what the decoder assumed and what each missing signal costs. The
 * decoder (busdecode.c) is built from a resolved map; whether it follows
 * cycles is decided here (busdecode_map.h), where it is also said.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/bus/busdecode_map.h"

static const char *const sig_names[BACH_NSIG] = {
	"clk",	   "ads_n",  "a3",     "a4",	"a5",	  "a6",	    "a7",
	"a8",	   "a9",     "a10",    "a11",	"a12",	  "a13",    "a14",
	"a15",	   "a16",    "a17",    "a18",	"a19",	  "a20",    "a21",
	"a22",	   "a23",    "a24",    "a25",	"a26",	  "a27",    "a28",
	"a29",	   "a30",    "a31",    "be0_n", "be1_n",  "be2_n",  "be3_n",
	"be4_n",   "be5_n",  "be6_n",  "be7_n", "mio",	  "dc",	    "wr",
	"cache_n", "brdy_n", "na_n",   "ken_n", "boff_n", "lock_n", "hlda",
	"ahold",   "eads_n", "hitm_n", "scyc",
};

const char *bach_sig_name(int sig)
{
	return sig >= 0 && sig < BACH_NSIG ? sig_names[sig] : "?";
}

int bach_sig_find(const char *name)
{
	for (int i = 0; i < BACH_NSIG; i++)
		if (!strcasecmp(sig_names[i], name))
			return i;
	return -1;
}

static uint8_t default_level(int sig)
{
	switch (sig) {
	case BACH_SIG_MIO:
	case BACH_SIG_DC:
	case BACH_SIG_CACHE:
	case BACH_SIG_ADS:
	case BACH_SIG_BRDY:
	case BACH_SIG_NA:
	case BACH_SIG_BOFF:
	case BACH_SIG_LOCK:
	case BACH_SIG_EADS:
	case BACH_SIG_HITM:
		return 1;
	default:
		return 0; /* address, BE#, W/R#, KEN#, HLDA, AHOLD, SCYC,
			    clk */
	}
}

/* ---- map files --------------------------------------------------------- */

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

void bach_mapspec_free(struct bach_mapspec *spec)
{
	for (size_t i = 0; i < spec->n; i++)
		free(spec->e[i].channel);
	free(spec->e);
	spec->e = NULL;
	spec->n = 0;
}

int bach_mapspec_load(struct bach_mapspec *spec, const char *path, char *err,
		      size_t errlen)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	unsigned lineno = 0;

	spec->path = path;
	spec->e = NULL;
	spec->n = 0;
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof line, f)) {
		char *hash, *eq, *lhs, *rhs;
		struct bach_mapentry *e;
		int sig;

		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			snprintf(err, errlen, "%s:%u: line too long", path,
				 lineno);
			goto fail;
		}
		/* '#' starts a comment at a line's start or after a blank;
		 * inside a name (ADS#) it is part of the name */
		for (hash = line; (hash = strchr(hash, '#')); hash++)
			if (hash == line || isspace((unsigned char)hash[-1])) {
				*hash = '\0';
				break;
			}
		lhs = trim(line);
		if (!*lhs)
			continue;
		eq = strchr(lhs, '=');
		if (!eq) {
			snprintf(err, errlen,
				 "%s:%u: expected 'signal = channel'", path,
				 lineno);
			goto fail;
		}
		*eq = '\0';
		lhs = trim(lhs);
		rhs = trim(eq + 1);
		sig = bach_sig_find(lhs);
		if (sig < 0) {
			snprintf(
				err, errlen,
				"%s:%u: unknown signal '%s' (the names are those of docs/design.md section 5: clk ads_n a3..a31 be0_n..be7_n mio dc wr cache_n brdy_n na_n ken_n boff_n lock_n hlda ahold eads_n hitm_n scyc)",
				path, lineno, lhs);
			goto fail;
		}
		if (!*rhs || strchr(rhs, '=')) {
			snprintf(
				err, errlen,
				"%s:%u: expected a channel name or low/high after '%s ='",
				path, lineno, lhs);
			goto fail;
		}
		for (size_t i = 0; i < spec->n; i++)
			if (spec->e[i].sig == sig) {
				snprintf(err, errlen,
					 "%s:%u: %s already mapped on line %u",
					 path, lineno, lhs, spec->e[i].line);
				goto fail;
			}
		e = realloc(spec->e, (spec->n + 1) * sizeof *e);
		if (!e) {
			snprintf(err, errlen, "%s: out of memory", path);
			goto fail;
		}
		spec->e = e;
		e = &spec->e[spec->n];
		e->sig = sig;
		e->line = lineno;
		e->channel = NULL;
		if (!strcasecmp(rhs, "low") || !strcasecmp(rhs, "high")) {
			e->level = !strcasecmp(rhs, "high");
		} else if (!strcasecmp(rhs, "none")) {
			e->level = BACH_MAP_NONE;
		} else {
			e->level = -1;
			e->channel = strdup(rhs);
			if (!e->channel) {
				snprintf(err, errlen, "%s: out of memory",
					 path);
				goto fail;
			}
		}
		spec->n++;
	}
	if (ferror(f)) {
		snprintf(err, errlen, "%s: read error", path);
		goto fail;
	}
	fclose(f);
	return 0;
fail:
	fclose(f);
	bach_mapspec_free(spec);
	return -1;
}

static int find_channel(const char *const *names, size_t n, const char *name,
			bool nocase)
{
	for (size_t i = 0; i < n; i++)
		if (names[i] && (nocase ? !strcasecmp(names[i], name)
					: !strcmp(names[i], name)))
			return (int)i;
	return -1;
}

int bach_busmap_resolve(struct bach_busmap *map,
			const struct bach_mapspec *spec,
			const char *const *names, size_t nnames, char *err,
			size_t errlen)
{
	const char *path = spec && spec->path ? spec->path : "map";

	for (int s = 0; s < BACH_NSIG; s++) {
		map->chan[s] = -1;
		map->level[s] = default_level(s);
		map->mapped[s] = false;
		map->fixed[s] = false;
	}
	map->ads_edge = false;
	for (size_t i = 0; spec && i < spec->n; i++) {
		const struct bach_mapentry *e = &spec->e[i];

		map->mapped[e->sig] = true;
		if (e->level == BACH_MAP_NONE)
			continue;
		if (e->level >= 0) {
			map->level[e->sig] = (uint8_t)e->level;
			map->fixed[e->sig] = true;
			continue;
		}
		map->chan[e->sig] =
			find_channel(names, nnames, e->channel, false);
		if (map->chan[e->sig] < 0) {
			size_t off;

			off = (size_t)snprintf(
				err, errlen,
				"%s:%u: %s = %s: the capture has no channel '%s' (it has:",
				path, e->line, bach_sig_name(e->sig),
				e->channel, e->channel);
			for (size_t c = 0; c < nnames && off < errlen; c++)
				if (names[c])
					off += (size_t)snprintf(
						err + off, errlen - off, " %s",
						names[c]);
			if (off < errlen)
				snprintf(err + off, errlen - off, ")");
			return -1;
		}
	}
	for (int s = 0; s < BACH_NSIG; s++)
		if (!map->mapped[s])
			map->chan[s] =
				find_channel(names, nnames, sig_names[s], true);
	if (map->chan[BACH_SIG_ADS] < 0) {
		snprintf(
			err, errlen,
			"ads_n is not captured: no channel named ads_n%s; name the channel that carries ADS# in a map file (ads_n = CHANNEL)",
			spec && spec->n ? " and the map does not name one"
					: "");
		return -1;
	}
	return 0;
}

/* "a3-a10=0 " for runs of not-captured signals at one level. */
static size_t describe_missing(const struct bach_busmap *map, int from, int to,
			       char *buf, size_t len, size_t off)
{
	for (int s = from; s < to; s++) {
		int e = s;

		if (map->chan[s] >= 0)
			continue;
		while (e + 1 < to && map->chan[e + 1] < 0 &&
		       map->level[e + 1] == map->level[s])
			e++;
		if (off < len && e > s)
			off += (size_t)snprintf(buf + off, len - off,
						" %s-%s=%u", sig_names[s],
						sig_names[e], map->level[s]);
		else if (off < len)
			off += (size_t)snprintf(buf + off, len - off, " %s=%u",
						sig_names[s], map->level[s]);
		s = e;
	}
	return off;
}

/* A signal the decoder may rely on: captured, or fixed by a map line. */
static bool known(const struct bach_busmap *map, int sig)
{
	return map->chan[sig] >= 0 || map->fixed[sig];
}

bool busmap_tracking(const struct bach_busmap *map)
{
	return map->chan[BACH_SIG_BRDY] >= 0 && known(map, BACH_SIG_KEN) &&
	       known(map, BACH_SIG_NA);
}

size_t bach_busmap_describe(const struct bach_busmap *map, char *buf,
			    size_t len)
{
	size_t off = 0;
	bool brdy = map->chan[BACH_SIG_BRDY] >= 0;
	bool ken = known(map, BACH_SIG_KEN), na = known(map, BACH_SIG_NA);

#define PUT(...)                                                               \
	do {                                                                   \
		if (off < len)                                                 \
			off += (size_t)snprintf(buf + off, len - off,          \
						__VA_ARGS__);                  \
	} while (0)
#define ON(sig) (map->chan[BACH_SIG_##sig] >= 0)
	if (len)
		buf[0] = '\0';
	if (ON(CLK))
		PUT("clock mode: pins taken at each rising edge of clk\n");
	else
		PUT("state mode: each sample is one bus clock\n");
	if (map->ads_edge)
		PUT("a cycle opens where ads_n falls (one record per strobe)\n");
	PUT("not captured, taken as constant levels:");
	size_t before = off;

	off = describe_missing(map, BACH_SIG_A3, BACH_SIG_BE0, buf, len, off);
	off = describe_missing(map, BACH_SIG_BE0, BACH_SIG_MIO, buf, len, off);
	off = describe_missing(map, BACH_SIG_MIO, BACH_SIG_CACHE + 1, buf, len,
			       off);
	/* the strobes only where a map line fixed them */
	for (int s = BACH_SIG_BRDY; s < BACH_NSIG; s++)
		if (map->chan[s] < 0 && map->fixed[s])
			PUT(" %s=%u", sig_names[s], map->level[s]);
	if (off == before)
		PUT(" none");
	PUT("\n");
	if (!brdy)
		PUT("brdy_n not captured: every ADS# is one record, no cycle tracking\n");
	else if (!ken || !na)
		PUT("one record per ADS#, no cycle tracking: %s not captured (or give a level in the map: 'ken_n = low' if all memory is cacheable, 'na_n = high' if nothing pipelines)\n",
		    !ken && !na ? "ken_n and na_n"
		    : !ken	? "ken_n"
				: "na_n");
	else
		PUT("brdy_n: cycles followed to their last BRDY#, pipelined ones in order; KEN# at the first BRDY# or NA# decides cacheability\n");
	/* only where a read can ask to cache at all */
	if (!busmap_tracking(map) && (ON(CACHE) || !map->level[BACH_SIG_CACHE]))
		PUT("CACHE# recorded as driven: a read KEN# refused shows as cacheable\n");
	/* a level a map line fixed is the user's word: no warning */
	if (ON(BOFF))
		PUT("boff_n: nothing read from the BOFF# clock to the first after it (outputs float); aborted cycles recorded %s\n",
		    busmap_tracking(map)
			    ? "once, at their restart"
			    : "again at their restart (those perhaps open are counted)");
	else if (!map->fixed[BACH_SIG_BOFF])
		PUT("boff_n not captured: a back-off goes unseen (its cycles recorded twice, floating pins read)\n");
	if (ON(HLDA))
		PUT("hlda: cycles while HLDA is high are another master's (counted, not recorded)\n");
	else if (!map->fixed[BACH_SIG_HLDA])
		PUT("hlda not captured: another master's cycles (HOLD/HLDA) would be recorded as the CPU's\n");
	if (ON(AHOLD) && ON(EADS) && ON(HITM))
		PUT("ahold, eads_n, hitm_n: a writeback under AHOLD takes the address of the inquire that hit (an EADS# while HITM# is asserted is ignored)\n");
	else if (ON(AHOLD) && ON(EADS))
		PUT("ahold, eads_n: a writeback under AHOLD takes the inquire's address; hitm_n not captured: after several inquires in one AHOLD episode, the last one's (counted)\n");
	else if (!map->fixed[BACH_SIG_AHOLD])
		PUT("ahold, eads_n not captured: a writeback under AHOLD keeps the address pins as they stand\n");
#undef ON
#undef PUT
	return off < len ? off : (len ? len - 1 : 0);
}
