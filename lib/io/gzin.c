// SPDX-License-Identifier: MIT
/* Gzip input member after member (gzin.h), for the reader and importers. */
#include <errno.h>
#include <libdeflate.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "bach/bytes.h"
#include "bach/trace.h"
#include "lib/exit.h"
#include "lib/io/gzin.h"

__attribute__((format(printf, 3, 4))) static int gfail(struct gzin *g, int err,
						       const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(g->msg, g->msglen, fmt, ap);
	va_end(ap);
	return err;
}

void gzin_init(struct gzin *g, uint8_t *in, size_t in_cap,
	       ssize_t (*read)(void *ctx, uint8_t *buf, size_t len), void *ctx,
	       const bool *eof, const uint64_t *off, char *msg, size_t msglen)
{
	memset(g, 0, sizeof(*g));
	g->in = in;
	g->in_cap = in_cap;
	g->read = read;
	g->ctx = ctx;
	g->eof = eof;
	g->off = off;
	g->msg = msg;
	g->msglen = msglen;
	g->name = "";
	gzin_restart(g);
}

void gzin_restart(struct gzin *g)
{
	g->members = 0;
	g->blocked = g->eof_block = g->last_bc = false;
	g->in_member = false;
	g->zs.avail_in = 0;
	g->zs.next_in = g->in;
}

void gzin_end(struct gzin *g)
{
	if (g->zinit)
		inflateEnd(&g->zs);
	g->zinit = false;
	if (g->ld)
		libdeflate_free_decompressor(g->ld);
	g->ld = NULL;
}

/* The input's offset of next_in. */
static uint64_t at(const struct gzin *g)
{
	return *g->off - g->zs.avail_in;
}

/*
 * Whether the member at next_in is a blocked one (bach_bgzf_member_size()
 * finds its BC subfield), its header read where it lies: more of the input
 * is read first when it straddles the end of what is at hand, and so is
 * the rest of a blocked member (at most 64 KiB), for inflate_whole().
 */
static int member_blocked(struct gzin *g)
{
	int n;

	while (((n = bach_bgzf_member_size(g->zs.next_in, g->zs.avail_in)) ==
			-EAGAIN ||
		(n > 0 && (size_t)n > g->zs.avail_in)) &&
	       !*g->eof && g->zs.avail_in < g->in_cap) {
		ssize_t got;

		memmove(g->in, g->zs.next_in, g->zs.avail_in);
		g->zs.next_in = g->in;
		got = g->read(g->ctx, g->in + g->zs.avail_in,
			      g->in_cap - g->zs.avail_in);
		if (got < 0)
			return (int)got;
		g->zs.avail_in += (uInt)got;
	}
	g->member_bc = n > 0;
	g->member_len = n;
	return 0;
}

static int start_member(struct gzin *g)
{
	int ret;

	if (g->zinit)
		ret = inflateReset(&g->zs);
	else
		ret = inflateInit2(&g->zs, 15 + 16); /* gzip only */
	if (ret != Z_OK)
		return gfail(g, -ENOMEM, "%s: zlib: %s", g->name,
			     g->zs.msg ? g->zs.msg : zError(ret));
	g->zinit = true;
	ret = member_blocked(g);
	if (ret < 0)
		return ret;
	g->member_start = at(g);
	g->in_member = true;
	return 0;
}

static int truncated(struct gzin *g)
{
	return gfail(
		g, -BACH_EDATA,
		"%s: truncated gzip member at byte offset %llu (file ends at %llu)",
		g->name, (unsigned long long)g->member_start,
		(unsigned long long)*g->off);
}

/* A member inflated whole (Z_STREAM_END, or libdeflate): its bookkeeping. */
static void member_end(struct gzin *g, bool empty, size_t cap)
{
	if (g->members == 0)
		g->blocked = g->member_bc;
	g->members++;
	g->eof_block = g->member_bc && empty;
	g->last_bc = g->member_bc;
	g->good_made = cap - g->zs.avail_out; /* CRC-checked */
	g->in_member = false;
}

/* The ISIZE of the blocked member at next_in when it is whole there, or 0. */
static size_t whole_size(const struct gzin *g)
{
	size_t len = (size_t)g->member_len;

	if (!g->member_bc || len > g->zs.avail_in || len < 18)
		return 0;
	return bach_get_le32(g->zs.next_in + len - 4);
}

/*
 * A blocked member whole in the input, its output room at hand: inflate
 * it in one call with libdeflate, faster than zlib's stream (every
 * segment bachd writes is such members: bach mrc --sample 0.01 over 10 M
 * records of bach convert's .byu.gz, 0.19-0.22 s with zlib, 0.14 s so;
 * docs/analysis.md 3.4). false leaves it to zlib, which also names what
 * is wrong with a damaged member, and checks a header CRC (FHCRC, flag
 * 2), which libdeflate skips.
 */
static bool inflate_whole(struct gzin *g)
{
	const uint8_t *p = g->zs.next_in;
	size_t len = (size_t)g->member_len, in_used, out_used;

	if (!g->member_bc || len < 18 || len > g->zs.avail_in || (p[3] & 2) ||
	    bach_get_le32(p + len - 4) > g->zs.avail_out)
		return false;
	if (!g->ld && !(g->ld = libdeflate_alloc_decompressor()))
		return false;
	if (libdeflate_gzip_decompress_ex(g->ld, p, len, g->zs.next_out,
					  g->zs.avail_out, &in_used,
					  &out_used) != LIBDEFLATE_SUCCESS ||
	    in_used != len)
		return false;
	g->zs.next_in += len;
	g->zs.avail_in -= (uInt)len;
	g->zs.next_out += out_used;
	g->zs.avail_out -= (uInt)out_used;
	return true;
}

ssize_t gzin_inflate(struct gzin *g, uint8_t *dst, size_t cap)
{
	g->zs.next_out = dst;
	g->zs.avail_out = (uInt)cap;
	g->good_made = 0;
	while (g->zs.avail_out > 0) {
		const char *why;
		int ret;

		if (g->zs.avail_in == 0 && !*g->eof) {
			ssize_t n = g->read(g->ctx, g->in, g->in_cap);

			if (n < 0)
				return n;
			g->zs.next_in = g->in;
			g->zs.avail_in = (uInt)n;
		}
		if (!g->in_member) {
			if (g->zs.avail_in == 0)
				break; /* a clean end after a member */
			ret = start_member(g);
			if (ret < 0)
				return ret;
		}
		if (g->zs.avail_in == 0)
			return truncated(g); /* the input ended in a member */
		if (g->zs.total_in == 0 && g->zs.total_out == 0) {
			uint8_t *out = g->zs.next_out;

			if (inflate_whole(g)) {
				member_end(g, g->zs.next_out == out, cap);
				continue;
			}
			/* no room left for all of it: the next call's block */
			if (g->zs.avail_out < cap &&
			    whole_size(g) > g->zs.avail_out)
				break;
		}
		ret = inflate(&g->zs, Z_NO_FLUSH);
		if (ret == Z_STREAM_END) {
			member_end(g, g->zs.total_out == 0, cap);
			continue;
		}
		if (ret == Z_OK || ret == Z_BUF_ERROR) {
			if (ret == Z_BUF_ERROR && g->zs.avail_in == 0 &&
			    *g->eof)
				return truncated(g);
			continue;
		}
		if (ret == Z_MEM_ERROR)
			return gfail(g, -ENOMEM, "%s: out of memory", g->name);
		why = g->zs.msg ? g->zs.msg : zError(ret);
		if (g->members > 0 && g->zs.total_in <= 2 &&
		    !strcmp(why, "incorrect header check"))
			return gfail(
				g, -BACH_EDATA,
				"%s: not a gzip member at byte offset %llu (trailing garbage after member %llu)",
				g->name, (unsigned long long)g->member_start,
				(unsigned long long)g->members);
		return gfail(
			g, -BACH_EDATA,
			"%s: bad gzip member at byte offset %llu: %s (near byte %llu)",
			g->name, (unsigned long long)g->member_start, why,
			(unsigned long long)at(g));
	}
	return (ssize_t)(cap - g->zs.avail_out);
}
