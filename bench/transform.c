// SPDX-License-Identifier: MIT
/*
 * bench/transform TRACE.byu [LEVEL...]: record-aware transforms before
 * zstd, measured against plain zstd at the same level on the same blocks
 * (the numbers and the decision: docs/formats.md,
 * section 10.1). A prototype only: bach writes none of these.
 *
 * Every transform works on what a .byu.zst frame holds, one 64 KiB block
 * of 10880 records compressed alone (no state carried from the block
 * before, so a seek still decompresses one frame), and each is checked
 * by decoding every block back and comparing. Figures are one core's
 * (one thread, the block loop in this process), in M records/s:
 *
 *   zstd       the block as it is (what .byu.zst writes today)
 *   planes     the 6 byte columns of the block one after the other
 *   delta      address deltas to the record before (zigzag, 4 byte
 *              planes) then BE# and control planes
 *   vpc        value prediction after VPC3/VPC4 (M. Burtscher, I. Ganusov,
 *              S. J. Jackson, J. Ke, P. Ratanaworabhan, N. B. Sam, "The
 *              VPC Trace-Compression Algorithms", IEEE Transactions on
 *              Computers 54(11):1329-1344, 2005). VPC splits a trace
 *              record into fields and, for each field, asks a bank of
 *              value predictors (last value, stride, finite-context
 *              method of order 1 and 3, each selected by a context: in
 *              VPC the PC) which of them was right; it emits the number
 *              of the first right predictor as a code stream and the
 *              value itself only when all were wrong (the miss stream),
 *              then compresses each stream with a general compressor
 *              (bzip2 in VPC3, gzip in VPC4's faster variant). A bus
 *              trace has no PC, so the context here is the cycle type
 *              (control >> 4), as the issue suggests, for the address;
 *              the BE#/control pair (the "attr") has its own bank over
 *              the attr history. Streams, each contiguous in the buffer
 *              handed to zstd: attr codes, address codes, attr misses,
 *              address misses (as the difference to the type's last
 *              address, zigzag, in 4 byte planes).
 *   best       zstd or vpc, whichever is smaller, block by block (a flag
 *              byte a block counted): what a frame variant could keep
 *   zstd-1M    no transform, 16 blocks (1 MiB) a frame: what a larger
 *              frame gains instead
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zstd.h>

#define BLOCK_RECS  10880
#define BLOCK_BYTES (BLOCK_RECS * 6)

/* predictors of the address, per cycle type (VPC's per-PC tables) */
#define NTYPE	 16
#define FCM_BITS 12
#define FCM_SIZE (1u << FCM_BITS)
#define A_PRED	 6 /* lv, stride, lv2, fcm1, fcm3, previous record's */
#define T_PRED	 4 /* attr: last, fcm1, fcm2, fcm3 */
#define MISS	 0xff

struct vpc {
	uint32_t lv[NTYPE], lv2[NTYPE], h1[NTYPE], h2[NTYPE];
	uint32_t fcm1[NTYPE][FCM_SIZE], fcm3[NTYPE][FCM_SIZE];
	uint32_t prev;	     /* the record before, any type */
	uint16_t t1, t2, t3; /* the attr history */
	uint16_t tf1[1 << 16], tf2[FCM_SIZE], tf3[FCM_SIZE];
};

static inline uint32_t hash3(uint32_t a, uint32_t b, uint32_t c)
{
	return ((a >> 3) * 0x9e3779b1u ^ (b >> 3) * 0x85ebca6bu ^
		(c >> 3) * 0xc2b2ae35u) >>
	       (32 - FCM_BITS);
}

static inline uint32_t hash1(uint32_t a)
{
	return ((a >> 3) * 0x9e3779b1u) >> (32 - FCM_BITS);
}

static inline uint32_t thash(uint32_t a, uint32_t b, uint32_t c)
{
	return ((a * 0x9e3779b1u) ^ (b * 0x85ebca6bu) ^ (c * 0xc2b2ae35u)) >>
	       (32 - FCM_BITS);
}

static void vpc_reset(struct vpc *v)
{
	memset(v, 0, sizeof(*v));
}

static inline void addr_preds(const struct vpc *v, unsigned t, uint32_t *p)
{
	p[0] = v->lv[t];
	p[1] = v->lv[t] + (v->lv[t] - v->lv2[t]);
	p[2] = v->lv2[t];
	p[3] = v->fcm1[t][hash1(v->lv[t])];
	p[4] = v->fcm3[t][hash3(v->lv[t], v->h1[t], v->h2[t])];
	p[5] = v->prev;
}

static inline void addr_update(struct vpc *v, unsigned t, uint32_t a)
{
	v->fcm1[t][hash1(v->lv[t])] = a;
	v->fcm3[t][hash3(v->lv[t], v->h1[t], v->h2[t])] = a;
	v->h2[t] = v->h1[t];
	v->h1[t] = v->lv[t];
	v->lv2[t] = v->lv[t];
	v->lv[t] = a;
	v->prev = a;
}

static inline void attr_preds(const struct vpc *v, uint16_t *p)
{
	p[0] = v->t1;
	p[1] = v->tf1[v->t1];
	p[2] = v->tf2[thash(v->t1, v->t2, 0)];
	p[3] = v->tf3[thash(v->t1, v->t2, v->t3)];
}

static inline void attr_update(struct vpc *v, uint16_t x)
{
	v->tf1[v->t1] = x;
	v->tf2[thash(v->t1, v->t2, 0)] = x;
	v->tf3[thash(v->t1, v->t2, v->t3)] = x;
	v->t3 = v->t2;
	v->t2 = v->t1;
	v->t1 = x;
}

static inline uint32_t zz(uint32_t d)
{
	return (d << 1) ^ (uint32_t)((int32_t)d >> 31);
}

static inline uint32_t unzz(uint32_t z)
{
	return (z >> 1) ^ (0u - (z & 1));
}

static inline uint32_t get_addr(const uint8_t *r)
{
	return (uint32_t)r[0] << 24 | (uint32_t)r[1] << 16 |
	       (uint32_t)r[2] << 8 | r[3];
}

static inline void put_addr(uint8_t *r, uint32_t a)
{
	r[0] = a >> 24;
	r[1] = a >> 16;
	r[2] = a >> 8;
	r[3] = a;
}

/*
 * The transforms: fwd(in, n records, out) -> bytes of out; inv(in, bytes,
 * n records, out). out has room for n * 8 + 16 bytes.
 */
static size_t planes_fwd(const uint8_t *in, size_t n, uint8_t *out)
{
	for (size_t i = 0; i < n; i++)
		for (int b = 0; b < 6; b++)
			out[b * n + i] = in[i * 6 + b];
	return n * 6;
}

static void planes_inv(const uint8_t *in, size_t len, size_t n, uint8_t *out)
{
	(void)len;
	for (size_t i = 0; i < n; i++)
		for (int b = 0; b < 6; b++)
			out[i * 6 + b] = in[b * n + i];
}

static size_t delta_fwd(const uint8_t *in, size_t n, uint8_t *out)
{
	uint32_t prev = 0;

	for (size_t i = 0; i < n; i++) {
		uint32_t a = get_addr(in + i * 6), z = zz(a - prev);

		prev = a;
		for (int b = 0; b < 4; b++)
			out[b * n + i] = z >> (8 * b);
		out[4 * n + i] = in[i * 6 + 4];
		out[5 * n + i] = in[i * 6 + 5];
	}
	return n * 6;
}

static void delta_inv(const uint8_t *in, size_t len, size_t n, uint8_t *out)
{
	uint32_t prev = 0;

	(void)len;
	for (size_t i = 0; i < n; i++) {
		uint32_t z = 0;

		for (int b = 0; b < 4; b++)
			z |= (uint32_t)in[b * n + i] << (8 * b);
		prev += unzz(z);
		put_addr(out + i * 6, prev);
		out[i * 6 + 4] = in[4 * n + i];
		out[i * 6 + 5] = in[5 * n + i];
	}
}

static struct vpc *vs;

/*
 * Layout: u32 attr misses, u32 address misses (little-endian), then the
 * attr codes (n), address codes (n), attr misses (2 bytes each), address
 * misses (4 planes of zigzag differences to the type's last address).
 */
static size_t vpc_fwd(const uint8_t *in, size_t n, uint8_t *out)
{
	uint8_t *tc = out + 8, *ac = tc + n;
	uint16_t tmiss[BLOCK_RECS];
	uint32_t amiss[BLOCK_RECS];
	size_t nt = 0, na = 0;

	vpc_reset(vs);
	for (size_t i = 0; i < n; i++) {
		const uint8_t *r = in + i * 6;
		uint16_t x = (uint16_t)(r[4] << 8 | r[5]), tp[T_PRED];
		uint32_t a = get_addr(r), ap[A_PRED];
		unsigned t = r[5] >> 4, k;

		attr_preds(vs, tp);
		for (k = 0; k < T_PRED && tp[k] != x; k++)
			;
		tc[i] = k < T_PRED ? k : MISS;
		if (k == T_PRED)
			tmiss[nt++] = x;
		attr_update(vs, x);
		addr_preds(vs, t, ap);
		for (k = 0; k < A_PRED && ap[k] != a; k++)
			;
		ac[i] = k < A_PRED ? k : MISS;
		if (k == A_PRED)
			amiss[na++] = zz(a - vs->lv[t]);
		addr_update(vs, t, a);
	}
	uint8_t *p = ac + n;
	for (size_t j = 0; j < nt; j++) {
		*p++ = tmiss[j] >> 8;
		*p++ = (uint8_t)tmiss[j];
	}
	for (int b = 0; b < 4; b++)
		for (size_t j = 0; j < na; j++)
			*p++ = amiss[j] >> (8 * b);
	memcpy(out, &(uint32_t){ (uint32_t)nt }, 4);
	memcpy(out + 4, &(uint32_t){ (uint32_t)na }, 4);
	return (size_t)(p - out);
}

static void vpc_inv(const uint8_t *in, size_t len, size_t n, uint8_t *out)
{
	uint32_t nt, na;
	const uint8_t *tc = in + 8, *ac = tc + n, *tm, *am;
	size_t it = 0, ia = 0;

	(void)len;
	memcpy(&nt, in, 4);
	memcpy(&na, in + 4, 4);
	tm = ac + n;
	am = tm + 2 * nt;
	vpc_reset(vs);
	for (size_t i = 0; i < n; i++) {
		uint8_t *r = out + i * 6;
		uint16_t x, tp[T_PRED];
		uint32_t a, ap[A_PRED];
		unsigned t;

		attr_preds(vs, tp);
		if (tc[i] == MISS) {
			x = (uint16_t)(tm[2 * it] << 8 | tm[2 * it + 1]);
			it++;
		} else {
			x = tp[tc[i]];
		}
		attr_update(vs, x);
		t = (x & 0xff) >> 4;
		addr_preds(vs, t, ap);
		if (ac[i] == MISS) {
			uint32_t z = 0;

			for (int b = 0; b < 4; b++)
				z |= (uint32_t)am[b * na + ia] << (8 * b);
			ia++;
			a = vs->lv[t] + unzz(z);
		} else {
			a = ap[ac[i]];
		}
		addr_update(vs, t, a);
		put_addr(r, a);
		r[4] = x >> 8;
		r[5] = (uint8_t)x;
	}
}

static size_t none_fwd(const uint8_t *in, size_t n, uint8_t *out)
{
	memcpy(out, in, n * 6);
	return n * 6;
}

static void none_inv(const uint8_t *in, size_t len, size_t n, uint8_t *out)
{
	(void)len;
	memcpy(out, in, n * 6);
}

/*
 * blocks: records per frame, in 64 KiB blocks (zstd-1M: 16 blocks a frame,
 * what a larger frame would gain: not a transform); alt: a second
 * transform tried on each block, the smaller kept (one flag byte a block
 * counted): "best" is zstd or vpc, whichever is smaller, block by block.
 */
struct transform {
	const char *name;
	size_t (*fwd)(const uint8_t *, size_t, uint8_t *);
	void (*inv)(const uint8_t *, size_t, size_t, uint8_t *);
	int blocks;
	const struct transform *alt;
};

static const struct transform t_vpc = { "vpc", vpc_fwd, vpc_inv, 1, NULL };

static const struct transform transforms[] = {
	{ "zstd", none_fwd, none_inv, 1, NULL },
	{ "planes", planes_fwd, planes_inv, 1, NULL },
	{ "delta", delta_fwd, delta_inv, 1, NULL },
	{ "vpc", vpc_fwd, vpc_inv, 1, NULL },
	{ "best", none_fwd, none_inv, 1, &t_vpc },
	{ "zstd-1M", none_fwd, none_inv, 16, NULL },
};

#define MAX_RECS (16 * BLOCK_RECS)
#define TBUF	 (MAX_RECS * 8 + 16)

static double secs(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static const int deflevels[] = { 1, 3 };
	const int *levels = deflevels;
	int nlevels = 2, *argl = NULL;
	FILE *f;
	uint8_t *data, *tbuf, *zbuf, *back, *tback;
	size_t size, nrec, cap;
	long sz;

	if (argc < 2) {
		fprintf(stderr, "usage: transform TRACE.byu [LEVEL...]\n");
		return 2;
	}
	if (argc > 2) {
		nlevels = argc - 2;
		argl = malloc(sizeof(int) * (size_t)nlevels);
		for (int i = 0; i < nlevels; i++)
			argl[i] = atoi(argv[i + 2]);
		levels = argl;
	}
	if (!(f = fopen(argv[1], "rb")) || fseek(f, 0, SEEK_END) ||
	    (sz = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		perror(argv[1]);
		return 2;
	}
	size = (size_t)sz;
	nrec = size / 6;
	data = malloc(size ? size : 1);
	if (!data || fread(data, 1, size, f) != size) {
		perror(argv[1]);
		return 2;
	}
	fclose(f);
	cap = ZSTD_compressBound(TBUF);
	tbuf = malloc(TBUF);
	tback = malloc(TBUF);
	zbuf = malloc(2 * cap);
	back = malloc(MAX_RECS * 6);
	vs = malloc(sizeof(*vs));
	ZSTD_CCtx *cc = ZSTD_createCCtx();
	ZSTD_DCtx *dc = ZSTD_createDCtx();
	if (!tbuf || !tback || !zbuf || !back || !vs || !cc || !dc)
		return 2;

	printf("%s: %zu records; one core, 64 KiB blocks compressed alone\n",
	       argv[1], nrec);
	printf("%-8s %5s %8s %8s %12s %12s\n", "method", "level", "ratio",
	       "vs zstd", "comp Mrec/s", "dec Mrec/s");
	for (int li = 0; li < nlevels; li++) {
		double base = 0;

		for (size_t ti = 0;
		     ti < sizeof(transforms) / sizeof(*transforms); ti++) {
			const struct transform *tr = &transforms[ti];
			size_t out = 0;
			double tc = 0, td = 0, t0;
			int bad = 0;

			ZSTD_CCtx_reset(cc, ZSTD_reset_session_and_parameters);
			ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel,
					       levels[li]);
			ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1);
			ZSTD_CCtx_setParameter(cc, ZSTD_c_contentSizeFlag, 1);
			size_t step = (size_t)tr->blocks * BLOCK_RECS;
			for (size_t off = 0; off < nrec; off += step) {
				size_t n =
					nrec - off < step ? nrec - off : step;
				const uint8_t *in = data + off * 6;
				const struct transform *use = tr;
				uint8_t *z = zbuf;
				size_t tl, zl, dl;

				t0 = secs();
				tl = tr->fwd(in, n, tbuf);
				zl = ZSTD_compress2(cc, zbuf, cap, tbuf, tl);
				if (tr->alt && !ZSTD_isError(zl)) {
					size_t tl2 = tr->alt->fwd(in, n, tbuf);
					size_t zl2 = ZSTD_compress2(
						cc, zbuf + cap, cap, tbuf, tl2);

					if (!ZSTD_isError(zl2) && zl2 < zl) {
						use = tr->alt;
						z = zbuf + cap;
						zl = zl2;
						tl = tl2;
					}
					out++; /* which of the two */
				}
				tc += secs() - t0;
				if (ZSTD_isError(zl)) {
					fprintf(stderr, "%s\n",
						ZSTD_getErrorName(zl));
					return 1;
				}
				out += zl;
				t0 = secs();
				dl = ZSTD_decompressDCtx(dc, tback, TBUF, z,
							 zl);
				if (!ZSTD_isError(dl))
					use->inv(tback, dl, n, back);
				td += secs() - t0;
				if (ZSTD_isError(dl) || dl != tl ||
				    memcmp(back, in, n * 6))
					bad = 1;
			}
			double ratio = out ? (double)size / (double)out : 0;
			if (ti == 0)
				base = ratio;
			printf("%-8s %5d %8.2f %7.3fx %12.1f %12.1f%s\n",
			       tr->name, levels[li], ratio,
			       base ? ratio / base : 0,
			       tc > 0 ? (double)nrec / tc / 1e6 : 0,
			       td > 0 ? (double)nrec / td / 1e6 : 0,
			       bad ? "  ROUND TRIP FAILED" : "");
			if (bad)
				return 1;
		}
	}
	ZSTD_freeCCtx(cc);
	ZSTD_freeDCtx(dc);
	free(argl);
	free(data);
	free(tbuf);
	free(tback);
	free(zbuf);
	free(back);
	free(vs);
	return 0;
}
