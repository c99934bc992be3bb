/* rknn-bench dump: decode a register program (regcmd) into text. */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "core/fileio.h"
#include "npu/regcmd.h"

/* A register program of the largest plan is a few MiB; more is not a program (e.g.
 * /dev/zero or /dev/urandom given by mistake). */
#define DUMP_MAX_BYTES ((size_t)64 << 20)

struct dump_opts {
	bool binary, strict;
};

/* Reads the program of `path` ("-" = standard input) through the one file reader. */
static int load_words(const char *path, bool binary, uint64_t **words, size_t *n)
{
	bool std_in = strcmp(path, "-") == 0;
	char *data = NULL;
	size_t len = 0;
	int ret = rb_file_read_max(std_in ? "/dev/stdin" : path, DUMP_MAX_BYTES,
				   "a register program", &data, &len);

	if (ret < 0)
		return rb_error("%s", rb_last_error());
	ret = rb_regcmd_parse(data, len, binary, std_in ? "<stdin>" : path, words, n);
	free(data);
	return ret < 0 ? rb_error("%s", rb_last_error()) : 0;
}

static int dump_run(void *opts, const struct cli_args *a)
{
	const struct dump_opts *o = opts;
	uint64_t *words = NULL;
	size_t flagged, n;

	if (load_words(a->n ? a->v[0] : "-", o->binary, &words, &n) < 0)
		return RB_EXIT_USAGE;
	flagged = rb_decode_print(stdout, words, n);
	free(words);
	if (fflush(stdout) != 0)
		return cli_stdout_failed();
	if (flagged && o->strict)
		return cli_fail(RB_EXIT_FAIL, "%zu of %zu words are unknown or flagged", flagged,
				n);
	if (flagged)
		rb_warn("%zu of %zu words are unknown or flagged", flagged, n);
	return RB_EXIT_OK;
}

static const struct cli_opt dump_opts[] = {
    {"binary", 0, CLI_BOOL, .offset = offsetof(struct dump_opts, binary),
     .help = "read raw little-endian 64-bit words instead"},
    {"strict", 0, CLI_BOOL, .offset = offsetof(struct dump_opts, strict),
     .help = "exit 1 if any word is unknown or flagged"},
    {NULL},
};

const struct cli_command cli_cmd_dump = {
    .name = "dump",
    .summary = "decode a register program (regcmd) into text",
    .synopsis = "[options] [FILE|-]",
    .about = "Decode a register program (regcmd) into one line per word:\n"
	     "  INDEX WORD BLOCK.REGISTER FIELD=VALUE ...\n"
	     "Words the register database does not explain are printed as 'unknown ...' or\n"
	     "with a note after '#'. FILE (standard input when '-' or missing) holds one\n"
	     "64-bit word per line as 16 hex digits, '0x' optional (the format of\n"
	     "'rknn-bench regcmd --format hex'); blank lines and '#' comments are ignored.\n",
    .notes = "Exit codes: 0 ok, 1 flagged words with --strict, 2 usage error or unreadable or\n"
	     "invalid input.\n",
    .groups = {CLI_GROUP(dump_opts, 0)},
    .pos = {{"FILE", CLI_IN, 0, 1}},
    .size = sizeof(struct dump_opts),
    .run = dump_run,
};
