// SPDX-License-Identifier: MIT
/*
 * --partial FILE and the checks of bach merge (cmd.h): a partial's header
 * (the command's canonical options, the trace's identity, the range and
 * the CRC-32 of its records), writing one whole or not at all, and reading
 * one back with a message naming the file. The format: partial.h and
 * docs/formats.md section 11.
 */
#include <errno.h>
#include <fcntl.h>
#include <libdeflate.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "lib/io/manifest.h"
#include "lib/io/outfile.h"
#include "lib/options.h"

/* one TRACE argument: a capture's id and segments, or a file's size */
static json_t *identity_of(const char *path)
{
	struct bach_manifest m = { 0 };
	struct stat sb;
	json_t *o, *segs;
	char msg[600];
	int fd;

	if (!strcmp(path, "-"))
		return json_pack("{sn}", "size");
	if (stat(path, &sb))
		return json_pack("{sn}", "size");
	if (!S_ISDIR(sb.st_mode))
		return json_pack("{sI}", "size", (json_int_t)sb.st_size);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || bach_manifest_load(fd, path, &m, msg, sizeof(msg))) {
		if (fd >= 0)
			close(fd);
		return json_pack("{sn}", "capture");
	}
	close(fd);
	segs = json_array();
	for (size_t s = 0; segs && s < m.nsegs; s++)
		if (json_array_append_new(segs,
					  json_pack("[sIb]", m.segs[s].name,
						    (json_int_t)m.segs[s].crc,
						    m.segs[s].retained)))
			break;
	o = json_pack("{ssso}", "capture", m.capture, "segments", segs);
	bach_manifest_free(&m);
	return o;
}

json_t *trace_identity(int argc, char **argv)
{
	json_t *a = json_array();

	for (int i = 0; a && i < argc; i++)
		if (json_array_append_new(a, identity_of(argv[i]))) {
			json_decref(a);
			return NULL;
		}
	return a;
}

json_t *partial_head(const char *cmd, json_t *options, json_t *trace,
		     uint64_t start, uint64_t end, uint64_t records,
		     uint32_t crc)
{
	return json_pack(
		"{sssisssssososIsosIsI}", "format", BACH_PARTIAL_FORMAT,
		"version", BACH_PARTIAL_VERSION, "bach", BACH_VERSION,
		"command", cmd, "options", options, "trace", trace, "start",
		(json_int_t)start, "end",
		end == UINT64_MAX ? json_null() : json_integer((json_int_t)end),
		"records", (json_int_t)records, "range_crc", (json_int_t)crc);
}

int partial_write(const char *out, const char *cmd, json_t *options,
		  json_t *trace, uint64_t start, uint64_t end, uint64_t records,
		  uint32_t crc, json_t *data, struct bach_partial_words *words)
{
	return partial_write_words(
		out,
		partial_head(cmd, options, trace, start, end, records, crc),
		data, words);
}

int partial_write_head(const char *out, json_t *head, json_t *data)
{
	return partial_write_words(out, head, data, NULL);
}

int partial_write_words(const char *out, json_t *head, json_t *data,
			struct bach_partial_words *words)
{
	size_t len = 0, done = 0;
	char *text = bach_partial_format_words(head, data, words, &len);
	struct bach_outfile of;
	int err;

	if (!text) {
		errmsg("out of memory");
		return EXIT_USAGE;
	}
	err = bach_outfile_open(&of, out);
	if (err) {
		errmsg("%s: %s", out, strerror(-err));
		free(text);
		return EXIT_USAGE;
	}
	while (done < len) {
		ssize_t w = write(of.fd, text + done, len - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			errmsg("%s: write error: %s", bach_outfile_name(&of),
			       strerror(w < 0 ? errno : EIO));
			bach_outfile_abort(&of);
			free(text);
			return EXIT_USAGE;
		}
		done += (size_t)w;
	}
	free(text);
	err = bach_outfile_commit(&of);
	if (err) {
		errmsg("%s: %s", out, strerror(-err));
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

int partial_load(const char *path, struct bach_partial *p)
{
	char err[300], ep[600];
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : 0;
	int rc;

	bach_escape_ctl(ep, sizeof(ep), path);
	if (fd < 0) {
		errmsg("%s: %s", ep, strerror(errno));
		return EXIT_USAGE;
	}
	for (;;) {
		ssize_t n;

		if (len == cap) {
			char *b = cap < BACH_PARTIAL_MAX
					  ? realloc(buf, cap ? 2 * cap : 65536)
					  : NULL;

			if (!b) {
				errmsg("%s: %s", ep,
				       cap < BACH_PARTIAL_MAX
					       ? "out of memory"
					       : "too large for a partial");
				free(buf);
				if (fd)
					close(fd);
				return cap < BACH_PARTIAL_MAX ? EXIT_USAGE
							      : EXIT_DATA;
			}
			buf = b;
			cap = cap ? 2 * cap : 65536;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			errmsg("%s: %s", ep, strerror(errno));
			free(buf);
			if (fd)
				close(fd);
			return EXIT_USAGE;
		}
		if (!n)
			break;
		len += (size_t)n;
	}
	if (fd)
		close(fd);
	rc = bach_partial_parse(buf ? buf : "", len, p, err, sizeof(err));
	free(buf);
	if (rc) {
		errmsg("%s: %s", ep, err);
		return bach_exit_status(rc);
	}
	return EXIT_OK;
}

uint32_t partial_crc(uint32_t crc, const uint8_t *p, size_t n)
{
	/* libdeflate's: the same CRC-32 as zlib's crc32() (bach merge
	 * combines them with zlib's crc32_combine()), several times faster */
	return libdeflate_crc32(crc, p, n);
}
