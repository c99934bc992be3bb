/* rknn-bench dump: decode a register program (regcmd) into text. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "core/error.h"
#include "core/fileio.h"
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

/* A register program of the largest plan is a few MiB; more is not a program (e.g.
 * /dev/zero or /dev/urandom given by mistake). */
#define DUMP_MAX_BYTES ((size_t)64 << 20)

/* Reads the program of `path` ("-" = standard input) through the one file reader. */
static int load_words(const char *path, bool binary, uint64_t **words, size_t *n)
{
	bool std_in = strcmp(path, "-") == 0;
	const char *label = std_in ? "<stdin>" : path;
	char *data = NULL;
	size_t len = 0;
	int ret = rb_file_read_max(std_in ? "/dev/stdin" : path, DUMP_MAX_BYTES,
				   "a register program", &data, &len);

	if (ret < 0)
		return rb_error("%s", rb_last_error());
	ret = rb_regcmd_parse(data, len, binary, label, words, n);
	free(data);
	return ret < 0 ? rb_error("%s", rb_last_error()) : 0;
}

int cmd_dump(int argc, char **argv)
{
	uint64_t *words = NULL;
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
	if (load_words(optind < argc ? argv[optind] : "-", binary, &words, &n) < 0)
		return RB_EXIT_USAGE;
	flagged = rb_decode_print(stdout, words, n);
	free(words);
	if (fflush(stdout) != 0)
		return cli_fail(RB_EXIT_USAGE, "cannot write the output: %s", strerror(errno));
	if (flagged && strict)
		return rb_error("%zu of %zu words are unknown or flagged", flagged, n),
		       RB_EXIT_FAIL;
	if (flagged)
		rb_warn("%zu of %zu words are unknown or flagged", flagged, n);
	return RB_EXIT_OK;
}
