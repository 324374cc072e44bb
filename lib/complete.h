/* SPDX-License-Identifier: MIT */
/*
 * Shell completion from the programs' own option tables (the getopt
 * tables they parse with), for the hidden `bach __complete WORD...` and
 * `bachd __complete WORD...` that tools/completion/bach.bash calls. The
 * answer is one candidate per line, those starting with the word being
 * completed, and these directives to the shell: @files (complete file
 * names too), @dirs (directory names), @nospace (no space after: a
 * KEY= was offered).
 */
#ifndef BACH_LIB_COMPLETE_H
#define BACH_LIB_COMPLETE_H

#include <getopt.h>
#include <stdbool.h>

/*
 * What an option's value, or an operand, completes to. opt: a long
 * option's name, or "" for the operands (the first only when first).
 * words: NULL-terminated; or list() prints them with complete_word().
 * Without a row an option's value and an operand complete file names.
 */
struct complete_values {
	const char *opt;
	const char *const *words;
	void (*list)(int n, char **words, const char *cur);
	bool first;   /* operands: the first operand only */
	bool dirs;    /* @dirs rather than words */
	bool none;    /* nothing: free text (a mark's TEXT) */
	bool nospace; /* words end in = or : */
};

/* Print w when it starts with cur. */
void complete_word(const char *w, const char *cur);

/*
 * Complete words[n - 1] (words: the command line after the program and
 * command names) for a command parsed by getopt_long(shortopts, longopts)
 * (a "+" first: options end at the first operand); values: rows ended by
 * one whose opt is NULL (values NULL: none).
 */
void complete_getopt(const char *shortopts, const struct option *longopts,
		     const struct complete_values *values, int n, char **words);

#endif
