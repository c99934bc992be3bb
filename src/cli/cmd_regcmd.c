/* rknn-bench regcmd: print the register program of a matmul that fits one NPU task. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "numeric/layout.h"
#include "cli/cli.h"
#include "core/error.h"
#include "npu/regcmd.h"
#include "hw/task.h"
#include "rknn_bench/shape.h"

static const char regcmd_usage[] =
    "usage: rknn-bench regcmd --shape MxKxN --a-addr ADDR --b-addr ADDR --c-addr ADDR\n"
    "                         [options]\n"
    "\n"
    "Print the register program (regcmd) of C[M×N] = A[M×K]·B[K×N] run as one NPU task.\n"
    "K is padded to 32 and N to 16 (fp16) or 32 (int8), as the data layouts need. The\n"
    "feature data takes ceil(M·K·bytes / 32 KiB) CBUF banks (at most 11), the weights the\n"
    "rest of the 12.\n"
    "\n"
    "options:\n"
    "  --shape MxKxN        the matmul, e.g. 4x64x16\n"
    "  --dtype fp16|int8    input type (default fp16)\n"
    "  --out fp32|fp16|int32\n"
    "                       output type (default fp32 for fp16 input, int32 for int8)\n"
    "  --a-addr ADDR        NPU address of A, B and C (32-bit; 0x... for hex)\n"
    "  --b-addr ADDR\n"
    "  --c-addr ADDR\n"
    "  --format hex|text    hex: one 16-hex-digit word per line (default), the input\n"
    "                       format of 'rknn-bench dump'; text: decoded words\n"
    "  --mainline           the variant for mainline rocket: also programs DPU_RDMA,\n"
    "                       and pads M < 4 to 4 rows (SURF_STRIDE 0)\n"
    "  --weight-reuse       the program of a chained task that keeps the weights of the\n"
    "                       task before in the CBUF (CBUF_CON0.WEIGHT_REUSE = 1), as\n"
    "                       'rknn-bench plan' marks them\n"
    "  -h, --help           show this help\n"
    "\n"
    "Exit codes: 0 ok, 2 usage error or a matmul that does not fit one task.\n";

enum {
	OPT_SHAPE = 256,
	OPT_DTYPE,
	OPT_OUT,
	OPT_A,
	OPT_B,
	OPT_C,
	OPT_FORMAT,
	OPT_MAINLINE,
	OPT_WEIGHT_REUSE
};

static const struct option regcmd_options[] = {
    {"help", no_argument, NULL, 'h'},
    {"shape", required_argument, NULL, OPT_SHAPE},
    {"dtype", required_argument, NULL, OPT_DTYPE},
    {"out", required_argument, NULL, OPT_OUT},
    {"a-addr", required_argument, NULL, OPT_A},
    {"b-addr", required_argument, NULL, OPT_B},
    {"c-addr", required_argument, NULL, OPT_C},
    {"format", required_argument, NULL, OPT_FORMAT},
    {"mainline", no_argument, NULL, OPT_MAINLINE},
    {"weight-reuse", no_argument, NULL, OPT_WEIGHT_REUSE},
    {NULL, 0, NULL, 0},
};

struct regcmd_opts {
	const char *shape;
	enum rb_dtype dtype;
	const char *out;
	uint64_t addr[3]; /* A, B, C */
	bool have_addr[3];
	bool text;
	bool mainline;
	bool weight_reuse;
};

static int parse_addr(struct regcmd_opts *o, int which, const char *opt, const char *arg)
{
	if (cli_parse_u64(opt, arg, &o->addr[which]) < 0)
		return -1;
	if (o->addr[which] > UINT32_MAX)
		return rb_error("%s '%s' must fit 32 bits: NPU addresses are 32-bit", opt, arg);
	o->have_addr[which] = true;
	return 0;
}

static int parse_format(struct regcmd_opts *o, const char *arg)
{
	if (strcmp(arg, "hex") != 0 && strcmp(arg, "text") != 0)
		return rb_error("--format '%s' must be hex or text", arg);
	o->text = strcmp(arg, "text") == 0;
	return 0;
}

static int parse_option(struct regcmd_opts *o, int c, const char *arg)
{
	switch (c) {
	case OPT_SHAPE:
		o->shape = arg;
		return 0;
	case OPT_DTYPE:
		if (rb_dtype_parse(arg, &o->dtype) < 0)
			return rb_error("--dtype '%s' must be fp16 or int8", arg);
		return 0;
	case OPT_OUT:
		o->out = arg;
		return 0;
	case OPT_A:
		return parse_addr(o, 0, "--a-addr", arg);
	case OPT_B:
		return parse_addr(o, 1, "--b-addr", arg);
	case OPT_C:
		return parse_addr(o, 2, "--c-addr", arg);
	case OPT_FORMAT:
		return parse_format(o, arg);
	case OPT_WEIGHT_REUSE:
		o->weight_reuse = true;
		return 0;
	default: /* OPT_MAINLINE */
		o->mainline = true;
		return 0;
	}
}

/* Returns 0, -1 on a usage error, or 1 when help was printed. */
static int parse_args(struct regcmd_opts *o, int argc, char **argv)
{
	static const char *const addr_opt[] = {"--a-addr", "--b-addr", "--c-addr"};
	int c;

	while ((c = getopt_long(argc, argv, "h", regcmd_options, NULL)) != -1) {
		if (c == 'h') {
			fputs(regcmd_usage, stdout);
			return 1;
		}
		if (c == '?' || parse_option(o, c, optarg) < 0) {
			if (c == '?')
				fputs("see 'rknn-bench regcmd --help'\n", stderr);
			return -1;
		}
	}
	if (optind < argc)
		return rb_error("regcmd takes no arguments ('%s'); see 'rknn-bench regcmd --help'",
				argv[optind]);
	if (!o->shape)
		return rb_error("--shape MxKxN is required; see 'rknn-bench regcmd --help'");
	for (int i = 0; i < 3; i++)
		if (!o->have_addr[i])
			return rb_error("%s is required; see 'rknn-bench regcmd --help'",
					addr_opt[i]);
	return 0;
}

static int parse_shape(const char *spec, enum rb_dtype dtype, struct rb_shape *s)
{
	struct rb_shape_list list;
	int ret;

	rb_shape_list_init(&list);
	ret = rb_shape_list_add_spec(&list, spec, dtype);
	if (ret == 0)
		*s = list.entries[0].shape;
	rb_shape_list_release(&list);
	return ret < 0 ? rb_error("--shape: %s", rb_last_error()) : 0;
}

/* The one-task plan of the matmul (npu/regcmd.h), its message printed. */
static int plan_task(const struct regcmd_opts *o, const struct rb_shape *s, struct rb_npu_task *t)
{
	const uint32_t addr[3] = {(uint32_t)o->addr[0], (uint32_t)o->addr[1], (uint32_t)o->addr[2]};

	if (rb_regcmd_one_task(s, o->out, addr, o->mainline, t) < 0)
		return rb_error("%s", rb_last_error());
	t->weight_reuse = o->weight_reuse;
	return 0;
}

static void print_hex(const struct rb_regcmd *rc)
{
	for (size_t i = 0; i < rc->count; i++)
		printf("%016" PRIx64 "\n", rc->words[i]);
}

int cmd_regcmd(int argc, char **argv)
{
	struct regcmd_opts o = {.dtype = RB_DTYPE_FP16};
	struct rb_shape shape = {0};
	struct rb_npu_task task;
	struct rb_regcmd rc;
	int ret = parse_args(&o, argc, argv);

	if (ret != 0)
		return ret > 0 ? RB_EXIT_OK : RB_EXIT_USAGE;
	if (parse_shape(o.shape, o.dtype, &shape) < 0 || plan_task(&o, &shape, &task) < 0)
		return RB_EXIT_USAGE;
	rb_regcmd_init(&rc);
	if (rb_regcmd_emit_task(&rc, &task) < 0) {
		rb_error("%s does not fit one task: %s", o.shape, rb_last_error());
		rb_regcmd_release(&rc);
		return RB_EXIT_USAGE;
	}
	if (o.text)
		rb_decode_print(stdout, rc.words, rc.count);
	else
		print_hex(&rc);
	rb_regcmd_release(&rc);
	if (fflush(stdout) != 0)
		return cli_fail(RB_EXIT_USAGE, "cannot write the output: %s", strerror(errno));
	return RB_EXIT_OK;
}
