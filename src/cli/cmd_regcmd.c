/* rknn-bench regcmd: print the register program of a matmul that fits one NPU task. */
#include <inttypes.h>

#include "cli/cli.h"
#include "npu/regcmd.h"

struct regcmd_opts {
	const char *shape;
	enum rb_dtype dtype; /* zeroed: RB_DTYPE_FP16 */
	const char *out;
	uint64_t addr[3]; /* A, B, C */
	int text;         /* --format: hex 0, text 1 */
	bool mainline, weight_reuse;
};

/* The one-task plan of the matmul (npu/regcmd.h), its message printed. */
static int plan_task(const struct regcmd_opts *o, struct rb_npu_task *t)
{
	const uint32_t addr[3] = {(uint32_t)o->addr[0], (uint32_t)o->addr[1], (uint32_t)o->addr[2]};
	struct rb_shape_list list;
	int ret;

	rb_shape_list_init(&list);
	ret = rb_shape_list_add_spec(&list, o->shape, o->dtype);
	if (ret < 0)
		rb_error("--shape: %s", rb_last_error());
	else if ((ret = rb_regcmd_one_task(&list.entries[0].shape, o->out, addr, o->mainline, t)) <
		 0)
		rb_error("%s", rb_last_error());
	rb_shape_list_release(&list);
	t->weight_reuse = o->weight_reuse;
	return ret;
}

static int regcmd_run(void *opts, const struct cli_args *a)
{
	const struct regcmd_opts *o = opts;
	struct rb_npu_task task;
	struct rb_regcmd rc;
	int ret = RB_EXIT_OK;

	(void)a;
	for (int i = 0; i < 3; i++)
		if (o->addr[i] > UINT32_MAX)
			return cli_fail(RB_EXIT_USAGE,
					"--%c-addr 0x%" PRIx64 " must fit 32 bits: NPU addresses "
					"are 32-bit",
					'a' + i, o->addr[i]);
	if (plan_task(o, &task) < 0)
		return RB_EXIT_USAGE;
	rb_regcmd_init(&rc);
	if (rb_regcmd_emit_task(&rc, &task) < 0)
		ret = cli_fail(RB_EXIT_USAGE, "%s does not fit one task: %s", o->shape,
			       rb_last_error());
	else if (o->text)
		rb_decode_print(stdout, rc.words, rc.count);
	for (size_t i = 0; ret == 0 && !o->text && i < rc.count; i++)
		printf("%016" PRIx64 "\n", rc.words[i]);
	rb_regcmd_release(&rc);
	return ret;
}

#define R(field) offsetof(struct regcmd_opts, field)

static const struct cli_opt regcmd_opts[] = {
    {"shape", 0, CLI_STR, "MxKxN", .offset = R(shape), .required = true,
     .help = "the matmul, e.g. 4x64x16"},
    {"dtype", 0, CLI_ENUM, "fp16|int8", "fp16|int8", R(dtype), .set = cli_set_dtype,
     .help = "input type (default fp16)"},
    {"out", 0, CLI_STR, "fp32|fp16|int32", "fp32|fp16|int32", R(out),
     .help = "output type (default fp32 for fp16 input, int32 for int8)"},
    {"a-addr", 0, CLI_U64, "ADDR", .offset = R(addr[0]), .required = true,
     .help = "NPU address of A, B and C (32-bit; 0x... for hex)"},
    {"b-addr", 0, CLI_U64, "ADDR", .offset = R(addr[1]), .required = true, .help = ""},
    {"c-addr", 0, CLI_U64, "ADDR", .offset = R(addr[2]), .required = true, .help = ""},
    {"format", 0, CLI_ENUM, "hex|text", "hex|text", R(text),
     .help = "hex: one 16-hex-digit word per line (default), the input\n"
	     "format of 'rknn-bench dump'; text: decoded words"},
    {"mainline", 0, CLI_BOOL, .offset = R(mainline),
     .help = "the variant for mainline rocket: also programs DPU_RDMA,\n"
	     "and pads M < 4 to 4 rows (SURF_STRIDE 0)"},
    {"weight-reuse", 0, CLI_BOOL, .offset = R(weight_reuse),
     .help = "the program of a chained task that keeps the weights of the\n"
	     "task before in the CBUF (CBUF_CON0.WEIGHT_REUSE = 1), as\n"
	     "'rknn-bench plan' marks them"},
    {NULL},
};

const struct cli_command cli_cmd_regcmd = {
    .name = "regcmd",
    .summary = "print the register program (regcmd) of a one-task matmul",
    .synopsis = "--shape MxKxN --a-addr ADDR --b-addr ADDR --c-addr ADDR [options]",
    .about = "Print the register program (regcmd) of C[M×N] = A[M×K]·B[K×N] run as one NPU\n"
	     "task. K is padded to 32 and N to 16 (fp16) or 32 (int8), as the data layouts\n"
	     "need. The feature data takes ceil(M·K·bytes / 32 KiB) CBUF banks (at most 11),\n"
	     "the weights the rest of the 12.\n",
    .notes = "Exit codes: 0 ok, 2 usage error or a matmul that does not fit one task.\n",
    .groups = {CLI_GROUP(regcmd_opts, 0)},
    .size = sizeof(struct regcmd_opts),
    .run = regcmd_run,
};
