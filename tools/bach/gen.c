// SPDX-License-Identifier: MIT
/* bach gen: the synthetic Pentium workload, as a trace file. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bach/record.h"
#include "cmd.h"
#include "lib/bus/busdecode.h"
#include "lib/bus/busmodel.h"
#include "lib/bus/gen.h"
#include "lib/io/outfile.h"

#define CHUNK 65536 /* records per write */

/* Output format from the name: .byu.gz or .gz is blocked gzip, .byu.zst
 * or .zst zstd frames with their seek table (docs/formats.md 10). */
enum bach_out_format out_format_for(const char *path)
{
	return ends_with(path, ".gz")	 ? BACH_OUT_BYU_GZ
	       : ends_with(path, ".zst") ? BACH_OUT_BYU_ZST
					 : BACH_OUT_BYU;
}

/* ---- --pins: the workload as a logic analyzer would capture it ---------- */

/* --pins's formats */
static const char *const pin_formats[] = { "bin", "vcd", "csv", NULL };

struct pins {
	const char *format;  /* bin, vcd, csv */
	unsigned oversample; /* 0: state mode; else samples per clock */
	bool basic;	     /* no brdy_n na_n ken_n boff_n lock_n */
	bool bus_given;
	struct bach_busmodel_opts bus;
};

static int parse_bus(const char *spec, struct bach_busmodel_opts *o)
{
	char *copy = strdup(spec), *save = NULL, *tok;
	int rc = 0;

	if (!copy)
		return -1;
	for (tok = strtok_r(copy, ",", &save); tok && !rc;
	     tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		uint64_t v;

		if (!eq || !parse_u64(eq + 1, &v) || v > 100000) {
			rc = -1;
			break;
		}
		*eq = '\0';
		if (!strcmp(tok, "wait"))
			o->max_wait = (unsigned)v;
		else if (!strcmp(tok, "pipeline") && v <= 100)
			o->pipeline_pct = (unsigned)v;
		else if (!strcmp(tok, "boff"))
			o->boff_every = (unsigned)v;
		else if (!strcmp(tok, "ken") && v <= 100)
			o->ken_pct = (unsigned)v;
		else if (!strcmp(tok, "bofflen") && v >= 1 && v <= 64)
			o->boff_max = (unsigned)v;
		else if (!strcmp(tok, "hold"))
			o->hold_every = (unsigned)v;
		else if (!strcmp(tok, "snoop"))
			o->snoop_every = (unsigned)v;
		else if (!strcmp(tok, "lock") && v != 1)
			o->lock_every = (unsigned)v;
		else
			rc = -1;
	}
	free(copy);
	return rc;
}

/*
 * The channels written, in order: signals of enum bach_sig. hlda only
 * when the bus has HOLD, ahold, eads_n and hitm_n only when it has
 * inquires, scyc only when it has locked sequences.
 */
static unsigned pin_channels(const struct pins *p, int *sig)
{
	unsigned n = 0;

	for (int s = 0; s < BACH_NSIG; s++) {
		if (s == BACH_SIG_CLK && !p->oversample)
			continue;
		if (p->basic && s >= BACH_SIG_BRDY)
			continue;
		if (s == BACH_SIG_HLDA && !p->bus.hold_every)
			continue;
		if (s == BACH_SIG_SCYC
			    ? !p->bus.lock_every
			    : s > BACH_SIG_HLDA && !p->bus.snoop_every)
			continue;
		sig[n++] = s;
	}
	return n;
}

static int write_pins(const char *out, uint64_t records, uint64_t seed,
		      const struct pins *p)
{
	int sig[BACH_NSIG];
	unsigned nch = pin_channels(p, sig), unit = (nch + 7) / 8;
	unsigned per = p->oversample ? p->oversample : 1;
	struct bach_busmodel_opts bo = p->bus;
	struct bach_outfile of;
	struct bach_gen g;
	uint8_t *recs;
	uint64_t *clk = NULL, last = 0;
	size_t nclk;
	FILE *f;
	int rc = EXIT_OK, err, fd;

	if (records > (1u << 24)) {
		errmsg("--pins: at most %u records", 1u << 24);
		return EXIT_USAGE;
	}
	/* whole or not at all, as every output (lib/io/outfile.h) */
	err = bach_outfile_open(&of, out);
	if (err) {
		errmsg("%s: cannot create: %s", out, strerror(-err));
		return EXIT_USAGE;
	}
	fd = dup(of.fd);
	f = fd < 0 ? NULL : fdopen(fd, "w");
	recs = malloc((size_t)(records ? records : 1) * BACH_REC_SIZE);
	if (!f || !recs) {
		errmsg("%s: %s", out, strerror(errno));
		free(recs);
		if (f)
			fclose(f);
		else if (fd >= 0)
			close(fd);
		bach_outfile_abort(&of);
		return EXIT_USAGE;
	}
	bach_gen_init(&g, seed);
	bach_gen_fill(&g, recs, (size_t)records);
	bo.seed = seed;
	nclk = bach_busmodel_run(recs, (size_t)records, &bo, &clk);
	free(recs);
	if (!nclk) {
		errmsg("out of memory");
		fclose(f);
		bach_outfile_abort(&of);
		return EXIT_USAGE;
	}
	if (!strcmp(p->format, "vcd")) {
		fprintf(f,
			"$date bach gen --records %llu --seed %llu $end\n"
			"$timescale 1 ns $end\n$scope module bus $end\n",
			(unsigned long long)records, (unsigned long long)seed);
		for (unsigned c = 0; c < nch; c++)
			fprintf(f, "$var wire 1 %c %s $end\n", '!' + c,
				bach_sig_name(sig[c]));
		fputs("$upscope $end\n$enddefinitions $end\n", f);
	} else if (!strcmp(p->format, "csv")) {
		for (unsigned c = 0; c < nch; c++)
			fprintf(f, "%s%s", c ? "," : "", bach_sig_name(sig[c]));
		fputc('\n', f);
	}
	for (size_t c = 0, t = 0; c < nclk; c++) {
		for (unsigned k = 0; k < per; k++, t++) {
			/* pins change at the rising edge (mid-clock) */
			bool high = p->oversample && k >= per / 2;
			uint64_t w = high && c + 1 < nclk ? clk[c + 1] : clk[c];
			uint64_t v = 0; /* bit i = channel i */
			uint8_t b[8];

			w = (w & ~1ull) | (high ? 1u : 0u);
			for (unsigned i = 0; i < nch; i++)
				v |= (w >> sig[i] & 1) << i;
			if (!strcmp(p->format, "bin")) {
				for (unsigned i = 0; i < unit; i++)
					b[i] = (uint8_t)(v >> (8 * i));
				fwrite(b, 1, unit, f);
			} else if (!strcmp(p->format, "csv")) {
				char line[2 * BACH_NSIG + 2];

				for (unsigned i = 0; i < nch; i++) {
					line[2 * i] =
						(char)('0' + (v >> i & 1));
					line[2 * i + 1] = ',';
				}
				line[2 * nch - 1] = '\n';
				fwrite(line, 1, 2 * nch, f);
			} else if (t == 0 || v != last) {
				fprintf(f, "#%zu\n", t);
				for (unsigned i = 0; i < nch; i++)
					if (t == 0 || ((v ^ last) >> i & 1))
						fprintf(f, "%c%c\n",
							(int)('0' +
							      (v >> i & 1)),
							'!' + i);
			}
			last = v;
		}
	}
	if (!strcmp(p->format, "vcd"))
		fprintf(f, "#%zu\n", nclk * per);
	errno = 0;
	if (fflush(f) | ferror(f) | fclose(f)) { /* all three, always */
		errmsg("%s: write error: %s", out,
		       errno ? strerror(errno) : "unknown");
		rc = EXIT_USAGE;
	}
	err = rc ? 0 : bach_outfile_commit(&of);
	if (err) {
		errmsg("%s: cannot finish: %s", out, strerror(-err));
		rc = EXIT_USAGE;
	}
	if (rc)
		bach_outfile_abort(&of);
	free(clk);
	return rc;
}

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "records", required_argument, NULL, 'n' },
		{ "seed", required_argument, NULL, 's' },
		{ "output", required_argument, NULL, 'o' },
		{ "pins", required_argument, NULL, 'P' },
		{ "oversample", required_argument, NULL, 'V' },
		{ "bus", required_argument, NULL, 'B' },
		{ "basic", no_argument, NULL, 'b' },
		{ NULL, 0, NULL, 0 },
	};
	struct pins pins = { 0 };
	uint64_t v;
	struct bach_writer_opts wo = { 0 };
	uint64_t records = 0, seed = 1;
	bool have_n = false;
	const char *out = "-";
	struct bach_writer *w;
	struct bach_gen g;
	uint8_t *buf;
	int c, err;

	while ((c = getopt_long(argc, argv, "n:s:o:", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (!parse_u64(optarg, &records))
				return usage_error(
					"--records: not a count: '%s'", optarg);
			have_n = true;
			break;
		case 's':
			if (!parse_u64(optarg, &seed))
				return usage_error("--seed: not a number: '%s'",
						   optarg);
			break;
		case 'o':
			out = optarg;
			break;
		case 'P':
			if (word_find(pin_formats, optarg) < 0)
				return usage_error(
					"--pins: bin, vcd or csv, not '%s'",
					optarg);
			pins.format = optarg;
			break;
		case 'V':
			if (!parse_u64(optarg, &v) || v < 2 || v % 2 || v > 64)
				return usage_error(
					"--oversample: an even number of samples per clock (2..64), not '%s'",
					optarg);
			pins.oversample = (unsigned)v;
			break;
		case 'B':
			pins.bus_given = true;
			if (parse_bus(optarg, &pins.bus))
				return usage_error(
					"--bus: expected wait=N,pipeline=PCT,boff=N,bofflen=N,ken=PCT,hold=N,snoop=N,lock=N, not '%s'",
					optarg);
			break;
		case 'b':
			pins.basic = true;
			break;
		default:
			return usage_error("bad option");
		}
	}
	if (!have_n)
		return usage_error("--records N is required");
	if (optind != argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	catch_signals();
	if (pins.format)
		return write_pins(out, records, seed, &pins);
	if (pins.oversample || pins.basic || pins.bus_given)
		return usage_error(
			"--oversample, --bus and --basic go with --pins");
	wo.format = out_format_for(out);
	err = bach_writer_open(&w, out, &wo);
	if (err) {
		errmsg("%s", bach_writer_strerror(w));
		bach_writer_free(w);
		return EXIT_USAGE;
	}
	buf = malloc(CHUNK * BACH_REC_SIZE);
	if (!buf) {
		bach_writer_free(w);
		errmsg("out of memory");
		return EXIT_USAGE;
	}
	bach_gen_init(&g, seed);
	while (records && !err) {
		size_t k = records < CHUNK ? (size_t)records : CHUNK;

		bach_gen_fill(&g, buf, k);
		err = bach_writer_write(w, buf, k);
		records -= k;
	}
	if (!err)
		err = bach_writer_close(w);
	if (err)
		errmsg("%s", bach_writer_strerror(w));
	free(buf);
	bach_writer_free(w);
	return err ? EXIT_USAGE : EXIT_OK;
}

const struct bach_cmd cmd_gen = {
	.name = "gen",
	.run = run,
	.values =
		(const struct complete_values[]){
			{ .opt = "pins", .words = pin_formats },
			{ NULL },
		},
	.summary = "write a synthetic Pentium workload",
	.help = "usage: bach gen --records N [--seed S] [-o FILE]\n"
		"       bach gen --records N [--seed S] --pins bin|vcd|csv [--oversample K]\n"
		"                [--bus SPEC] [--basic] -o FILE\n"
		"\n"
		"A deterministic synthetic workload: sequential code runs with loops\n"
		"and branches, stack pushes and pops, strided arrays, random heap\n"
		"traffic, line writebacks, I/O, interrupt-acknowledge pairs and special\n"
		"cycles. The same seed always gives the same records, and the fake\n"
		"capture board plays exactly this stream.\n"
		"\n"
		"  -n, --records N   how many records (required)\n"
		"  -s, --seed S      seed (default 1)\n"
		"  -o, --output F    output file (default - for standard output);\n"
		"                    a name ending in .gz is written as blocked gzip,\n"
		"                    one in .zst as zstd frames with a seek table\n"
		"\n"
		"The same workload as a logic analyzer would capture it on a Pentium bus\n"
		"(to try bach decode and a channel map; bach decode gives the records\n"
		"back exactly):\n"
		"  --pins bin|vcd|csv  write pin samples instead of records: channels\n"
		"                    named as in the design (bin: channel i = bit i, in\n"
		"                    the order ads_n a3..a31 be0_n..be7_n mio dc wr\n"
		"                    cache_n brdy_n na_n ken_n boff_n lock_n, clk first\n"
		"                    when oversampled, hlda ahold eads_n hitm_n scyc last\n"
		"                    when --bus asks for HOLD, inquires or locks)\n"
		"  --oversample K    K samples per bus clock with a clk channel (clock\n"
		"                    mode); default one sample per clock (state mode)\n"
		"  --bus wait=N,pipeline=PCT,boff=N,bofflen=N,ken=PCT,hold=N,snoop=N,lock=N\n"
		"                    timing: up to N wait states, PCT% of cycles\n"
		"                    pipelined with NA#, every Nth cycle backed off with\n"
		"                    BOFF# (for 1 to bofflen clocks, default 3), PCT% of\n"
		"                    noncacheable reads refused by KEN#, another master\n"
		"                    under HOLD/HLDA before every Nth cycle (adds hlda),\n"
		"                    inquires under AHOLD before every Nth cycle, most\n"
		"                    hitting a modified line, and under HLDA (adds ahold\n"
		"                    eads_n hitm_n; a writeback is a record bach gen did\n"
		"                    not write), a locked read-modify-write from every\n"
		"                    Nth record (N >= 2) that starts one, split with\n"
		"                    SCYC when it is four cycles (adds scyc; its read\n"
		"                    is recorded noncacheable)\n"
		"  --basic           only ads_n, address, BE#, mio dc wr cache_n (no\n"
		"                    brdy_n na_n ken_n boff_n lock_n)\n"
		"\n"
		"examples: bach gen --records 1000000 --seed 7 -o work.byu.gz\n"
		"          bach gen --records 1000 --pins vcd --oversample 4 \\\n"
		"              --bus wait=2,pipeline=30,boff=50,ken=20 -o bus.vcd\n",
};
