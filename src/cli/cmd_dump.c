/* rknn-bench dump: decode a register program (regcmd) into text. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "core/error.h"
#include "npu/regcmd.h"

static const char dump_usage[] =
    "usage: rknn-bench dump [options] [FILE|-]\n"
    "\n"
    "Decode a register program (regcmd) into one line per word:\n"
    "  INDEX WORD BLOCK.REGISTER FIELD=VALUE ...\n"
    "Words the register database does not explain are printed as 'unknown ...' or with\n"
    "a note after '#'.\n"
    "\n"
    "input (FILE, or standard input when FILE is '-' or missing):\n"
    "  one 64-bit word per line as 16 hex digits, '0x' optional (the format of\n"
    "  'rknn-bench regcmd --format hex'); blank lines and '#' comments are ignored\n"
    "options:\n"
    "  --binary     read raw little-endian 64-bit words instead\n"
    "  --strict     exit 1 if any word is unknown or flagged\n"
    "  -h, --help   show this help\n"
    "\n"
    "Exit codes: 0 ok, 1 flagged words with --strict, 2 usage error or unreadable or\n"
    "invalid input.\n";

enum { OPT_BINARY = 256, OPT_STRICT };

static const struct option dump_options[] = {
    {"help", no_argument, NULL, 'h'},
    {"binary", no_argument, NULL, OPT_BINARY},
    {"strict", no_argument, NULL, OPT_STRICT},
    {NULL, 0, NULL, 0},
};

struct words {
	uint64_t *v;
	size_t n, cap;
};

static int words_add(struct words *w, uint64_t word)
{
	uint64_t *v;

	if (w->n == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 256;
		v = realloc(w->v, w->cap * sizeof(*v));
		if (!v)
			return rb_error("out of memory for %zu words", w->cap);
		w->v = v;
	}
	w->v[w->n++] = word;
	return 0;
}

/* Reads a whole stream; returns 0 or -1 with a message naming `label`. */
static int read_all(FILE *f, const char *label, char **data, size_t *len)
{
	size_t cap = 4096, n = 0, got;
	char *buf = malloc(cap + 1), *bigger;

	while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			cap *= 2;
			bigger = realloc(buf, cap + 1);
			if (!bigger)
				free(buf);
			buf = bigger;
		}
	}
	if (!buf)
		return rb_error("out of memory reading '%s'", label);
	if (ferror(f)) {
		free(buf);
		return rb_error("cannot read '%s': %s", label, strerror(errno));
	}
	buf[n] = '\0';
	*data = buf;
	*len = n;
	return 0;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* One line of the hex format: blank, a comment, or "[0x]<16 hex digits> [# comment]".
 * Returns 1 with *word set, 0 for a line without a word, -1 if the line is invalid. */
static int parse_line(const char *line, size_t len, uint64_t *word)
{
	size_t i = 0, digits = 0;
	uint64_t v = 0;

	while (i < len && is_blank(line[i]))
		i++;
	if (i == len || line[i] == '#')
		return 0;
	if (len - i > 2 && line[i] == '0' && (line[i + 1] == 'x' || line[i + 1] == 'X'))
		i += 2;
	for (; i < len && isxdigit((unsigned char)line[i]); i++, digits++) {
		int c = tolower((unsigned char)line[i]);

		v = v << 4 | (uint64_t)(isdigit(c) ? c - '0' : c - 'a' + 10);
	}
	while (i < len && is_blank(line[i]))
		i++;
	if (digits != 16 || (i < len && line[i] != '#'))
		return -1;
	*word = v;
	return 1;
}

static int parse_hex(const char *data, size_t len, const char *label, struct words *w)
{
	size_t line_no = 0;

	for (const char *p = data, *end = data + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		uint64_t word;
		int ret = parse_line(p, n, &word);

		line_no++;
		if (ret < 0)
			return rb_error("%s:%zu: '%.*s' is not a 64-bit word of 16 hex digits",
					label, line_no, (int)(n > 40 ? 40 : n), p);
		if (ret > 0 && words_add(w, word) < 0)
			return -1;
		p += n + 1;
	}
	return 0;
}

static int parse_binary(const unsigned char *data, size_t len, const char *label, struct words *w)
{
	if (len % 8)
		return rb_error("%s: %zu bytes is not a whole number of 8-byte words", label, len);
	for (size_t i = 0; i < len; i += 8) {
		uint64_t v = 0;

		for (int b = 7; b >= 0; b--) /* little-endian (§a.1) */
			v = v << 8 | data[i + (size_t)b];
		if (words_add(w, v) < 0)
			return -1;
	}
	return 0;
}

/* Reads the program of `path` ("-" = standard input) into w. */
static int load_words(const char *path, bool binary, struct words *w)
{
	bool std_in = strcmp(path, "-") == 0;
	const char *label = std_in ? "<stdin>" : path;
	FILE *f = std_in ? stdin : fopen(path, binary ? "rb" : "r");
	char *data = NULL;
	size_t len = 0;
	int ret;

	if (!f)
		return rb_error("cannot open '%s': %s", path, strerror(errno));
	ret = read_all(f, label, &data, &len);
	if (!std_in)
		fclose(f);
	if (ret < 0)
		return ret;
	if (binary)
		ret = parse_binary((const unsigned char *)data, len, label, w);
	else
		ret = parse_hex(data, len, label, w);
	free(data);
	if (ret == 0 && w->n == 0)
		ret = rb_error("'%s' holds no words", label);
	return ret;
}

int cmd_dump(int argc, char **argv)
{
	struct words w = {0};
	bool binary = false, strict = false;
	size_t flagged, n;
	int c;

	while ((c = getopt_long(argc, argv, "h", dump_options, NULL)) != -1) {
		if (c == 'h') {
			fputs(dump_usage, stdout);
			return RB_EXIT_OK;
		} else if (c == OPT_BINARY) {
			binary = true;
		} else if (c == OPT_STRICT) {
			strict = true;
		} else {
			fputs("see 'rknn-bench dump --help'\n", stderr);
			return RB_EXIT_USAGE;
		}
	}
	if (argc - optind > 1)
		return rb_error("dump reads one program; see 'rknn-bench dump --help'"),
		       RB_EXIT_USAGE;
	if (load_words(optind < argc ? argv[optind] : "-", binary, &w) < 0) {
		free(w.v);
		return RB_EXIT_USAGE;
	}
	n = w.n;
	flagged = rb_decode_print(stdout, w.v, w.n);
	free(w.v);
	if (fflush(stdout) != 0)
		return cli_fail(RB_EXIT_USAGE, "cannot write the output: %s", strerror(errno));
	if (flagged && strict)
		return rb_error("%zu of %zu words are unknown or flagged", flagged, n),
		       RB_EXIT_FAIL;
	if (flagged)
		rb_warn("%zu of %zu words are unknown or flagged", flagged, n);
	return RB_EXIT_OK;
}
