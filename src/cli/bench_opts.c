/* The options run and tune share (struct cli_bench, embedded in both) and the planner's
 * config flags (plan, run): each a table of cli.h. */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "dev/npu_device.h"
#include "hw/board.h"

#define B(field) offsetof(struct cli_bench, field)

void cli_bench_init(struct cli_bench *b)
{
	memset(b, 0, sizeof(*b));
	b->dtype = RB_DTYPE_FP16;
	b->device_name = "auto";
	rb_engine_opts_init(&b->engine);
	rb_measure_opts_init(&b->measure);
	rb_verify_opts_init(&b->verify, RB_DTYPE_FP16);
	b->seed = 1;
}

/* --soc: the emulator keeps a pointer until the engine is open (it copies it then). */
static int set_soc(const struct cli_opt *opt, void *group, const char *arg)
{
	static struct rb_soc_profile soc;
	struct cli_bench *b = group;
	int ret;

	(void)opt;
	b->soc_path = cli_data_path(arg, "soc");
	ret = rb_soc_load_file(&soc, b->soc_path);
	if (ret < 0)
		return rb_error("--soc: %s%s", rb_last_error(), cli_data_hint(b->soc_path, ret));
	snprintf(soc.chosen_by, sizeof(soc.chosen_by), "--soc %.180s", b->soc_path);
	soc.pinned = true; /* its clock, whatever the driver */
	b->engine.sim.soc = &soc;
	return 0;
}

/* Without --soc: the built-in profile of the board's memory type, else the default
 * (rb_soc_choose), at the clock the driver runs the NPU at (a board's kernel's, or
 * mainline's for sim:rocket); named in every report through chosen_by. */
int cli_bench_finish(struct cli_bench *b)
{
	static struct rb_soc_profile soc;
	const char *dev = b->device_name ? b->device_name : "auto";
	const char *sysfs = getenv("RKNN_BENCH_SYSFS");

	if (b->engine.sim.soc)
		return 0;
	if (rb_soc_choose(&soc, rb_board_dt_root()) < 0)
		return rb_error("%s", rb_last_error());
	rb_soc_for_driver(&soc, strstr(dev, "rocket") != NULL,
			  strncmp(dev, "sim", 3) == 0 ? NULL
			  : sysfs                     ? sysfs
						      : "/sys");
	b->engine.sim.soc = &soc;
	return 0;
}

static int set_enum(const struct cli_opt *opt, void *group, const char *arg)
{
	struct cli_bench *b = group;

	if (strcmp(opt->name, "verify") == 0)
		return rb_verify_mode_parse(arg, &b->verify.mode) < 0 ? -1 : 0;
	return rb_data_kind_parse(arg, &b->data) < 0 ? -1 : 0;
}

static int set_flag(const struct cli_opt *opt, void *group, const char *arg)
{
	struct cli_bench *b = group;

	(void)arg;
	if (strcmp(opt->name, "quiet") == 0) {
		cli_quiet = true; /* the same as the global --quiet */
		return 0;
	}
	if (strcmp(opt->name, "wait-device") == 0) {
		rb_npu_device_set_wait(true); /* dev/npu_device.h: the lock on the node */
		return 0;
	}
	b->engine.unsafe_skip_validation = true;
	rb_warn("--unsafe-skip-validation: NPU programs are submitted WITHOUT being checked; "
		"a bad program can hang the NPU or make it write outside its buffers (on a "
		"board: memory corruption, a reboot). Use it for reverse-engineering only; the "
		"report records it");
	return 0;
}

#define DEVICES "auto|sim|sim:rknpu|sim:rocket|rknpu|rocket|cpu"

const struct cli_opt cli_bench_opts[] = {
    {"shape", 0, CLI_LIST, "MxKxN", .offset = B(specs), .section = CLI_SEC_SHAPES,
     .help = "a shape on the command line, e.g. 1x2048x8192 (repeatable)"},
    {"dtype", 0, CLI_ENUM, "fp16|int8", "fp16|int8", B(dtype), .set = cli_set_dtype,
     .section = CLI_SEC_SHAPES, .help = "dtype of --shape shapes (default fp16)"},
    {"filter", 0, CLI_STR, "REGEX", .offset = B(filter), .section = CLI_SEC_SHAPES,
     .help = "only the pairs whose name matches REGEX (POSIX extended,\n"
	     "unanchored), e.g. '^ffn_(up|out)-'"},
    {"device", 0, CLI_STR, "NAME", DEVICES, B(device_name), .section = CLI_SEC_DEVICE,
     .help = "auto (default: the first NPU node found, rknpu or rocket,\n"
	     "else sim), sim (the emulated NPU and kernel driver; times\n"
	     "are modeled; also sim:rknpu), sim:rocket (the same behind\n"
	     "the emulated mainline rocket kernel), rknpu[:PATH] (e.g.\n"
	     "rknpu:/dev/dri/card1), rocket[:PATH] (e.g.\n"
	     "rocket:/dev/accel/accel0), cpu (run only: the CPU reference)"},
    {"soc", 0, CLI_CALL, "FILE", .offset = B(soc_path), .set = set_soc, .path = CLI_IN,
     .section = CLI_SEC_DEVICE,
     .help = "the hardware profile: sim's timing model and the roofline\n"
	     "(default: the built-in profile of the board's memory,\n"
	     "configs/soc/rk3588-lpddr4x.json or rk3588-lpddr5.json, for\n"
	     "a board the device tree names; else configs/soc/rk3588.json)"},
    {"wait-device", 0, CLI_CALL, .set = set_flag, .section = CLI_SEC_DEVICE,
     .help = "NPU: wait while another rknn-bench process holds the device\n"
	     "(default: fail, exit 3; $RKNN_BENCH_SIM_NODE: a sim's node)"},
    {"threads", 0, CLI_INT, "N", .offset = B(engine.threads), .min = 1, .max = 1024,
     .section = CLI_SEC_DEVICE,
     .help = "CPU threads for the reference, and for tune's timing model\n"
	     "(one engine per thread, at most 16; default: one per CPU)"},
    {"unsafe-skip-validation", 0, CLI_CALL, .set = set_flag, .section = CLI_SEC_DEVICE,
     .help = "NPU: submit programs without checking them first\n"
	     "(reverse-engineering only; loud, recorded in the output)"},
    {"warmup", 0, CLI_INT, "N", .offset = B(measure.warmup), .max = 1000000,
     .section = CLI_SEC_MEASURING,
     .help = "runs before sampling (default: run 2, tune 1 per config)"},
    {"iters", 0, CLI_INT, "N", .offset = B(measure.iters), .min = 1, .max = 100000000,
     .section = CLI_SEC_MEASURING, .help = "minimum samples (default: run 10, tune 5 per config)"},
    {"verify", 0, CLI_ENUM, "MODE", "auto|full|sample|none", .set = set_enum,
     .section = CLI_SEC_VERIFICATION,
     .help = "auto (default: full up to M·N·K = 2^30, else sample),\n"
	     "full, sample or none"},
    {"samples", 0, CLI_LONG, "N", .offset = B(verify.samples), .min = 1, .max = 1L << 30,
     .section = CLI_SEC_VERIFICATION, .help = "elements checked in sample mode (default 4096)"},
    {"atol", 0, CLI_DOUBLE, "X", .offset = B(verify.atol), .section = CLI_SEC_VERIFICATION,
     .help = "fp16 tolerance |got-exp| <= atol + rtol·|exp| (default 1e-3)"},
    {"rtol", 0, CLI_DOUBLE, "X", .offset = B(verify.rtol), .section = CLI_SEC_VERIFICATION,
     .help = "the relative part of that tolerance (default 1e-3)"},
    {"seed", 0, CLI_U64, "N", .offset = B(seed), .section = CLI_SEC_VERIFICATION,
     .help = "seed of inputs, of the sample and of random (default 1)"},
    {"data", 0, CLI_ENUM, "KIND", "exact|uniform", .set = set_enum, .section = CLI_SEC_VERIFICATION,
     .help = "exact (default: small integers, order-independent sums)\n"
	     "or uniform"},
    {"output", 'o', CLI_STR, "FILE", .offset = B(out_path), .path = CLI_OUT,
     .section = CLI_SEC_OUTPUT,
     .help = "run: also write the report to FILE, in the format its\n"
	     "extension names (.json, .csv, .md; else json), or in\n"
	     "that of --format when given; tune: the tuned JSON (default\n"
	     "tuned.json); written atomically; - is stdout"},
    {"quiet", 0, CLI_CALL, .set = set_flag, .section = CLI_SEC_OUTPUT,
     .help = "no progress or warnings on stderr (errors stay)"},
    {NULL},
};

/* ---- plan flags: each a key of the compact config string (npu/plan.h), so the flags,
 * the reproducer lines and the tuned JSON share one parser ---- */

bool cli_plan_flags_given;

/* key "k": the argument is the value; "k=v": a flag setting v; none: --config. */
static int set_plan(const struct cli_opt *opt, void *group, const char *arg)
{
	char key[32];
	const char *eq = opt->key ? strchr(opt->key, '=') : NULL;
	int ret;

	cli_plan_flags_given = true; /* no model-guided default then */
	snprintf(key, sizeof(key), "%.*s", eq ? (int)(eq - opt->key) : 31,
		 opt->key ? opt->key : "");
	if (!opt->key)
		ret = rb_plan_config_parse(group, arg);
	else
		ret = rb_plan_config_set(group, key, eq ? eq + 1 : arg);
	return ret < 0 ? rb_error("--%s: %s", opt->name, rb_last_error()) : 0;
}

#define PLAN(name_, arg_, values_, key_, help_)                                                    \
	{                                                                                          \
		name_, 0, CLI_CALL, arg_, values_, .set = set_plan, .key = key_,                   \
						   .section = CLI_SEC_PLAN, .help = help_          \
	}

const struct cli_opt cli_plan_opts[] = {
    PLAN("core-mask", "MASK", NULL, "mask", "NPU cores taking part, 0x1 to 0x7 (default 0x7)"),
    PLAN("split", "AXIS", "n|m|auto", "axis", "axis cut across the cores (auto: m when M > N)"),
    PLAN("split-weights", "W,..", NULL, "weights",
	 "one weight per core, e.g. 2,1,1 (default even)"),
    PLAN("align", "A", "16|32|64", "align",
	 "cut points on multiples of this (default: the kernel\n"
	 "group, 16 fp16 / 32 int8)"),
    PLAN("data-banks", "D", NULL, "dbanks", "CBUF banks for features (D + W <= 12; default auto)"),
    PLAN("weight-banks", "W", NULL, "wbanks", "CBUF banks for weights"),
    PLAN("k-slice", "K", NULL, "kslice", "channels per K-slice, a multiple of 32 (default auto)"),
    PLAN("residency", "R", "resident|streamed", "res",
	 "resident (weights of a task fit its banks) or streamed\n"
	 "(unproven on silicon)"),
    PLAN("chain", NULL, NULL, "chain=1", "one submit per core for all its tasks (default)"),
    PLAN("no-chain", NULL, NULL, "chain=0", "one submit per task"),
    PLAN("out", "PREC", "fp32|fp16|int32", "out",
	 "output precision (default fp32 for fp16, int32 for int8)"),
    PLAN("mainline", NULL, NULL, "mainline=1",
	 "the rocket-safe program variant (pads M to a multiple of 4)"),
    PLAN("weight-reuse", NULL, NULL, "wreuse=1",
	 "CBUF_CON0 WEIGHT_REUSE on chained tasks that keep the\n"
	 "weights of the task before (default on; unproven on silicon)"),
    PLAN("no-weight-reuse", NULL, NULL, "wreuse=0", "no WEIGHT_REUSE"),
    PLAN("config", "STRING", NULL, NULL,
	 "all of the above in the compact form, e.g.\n"
	 "'mask=0x7 split=n:1,1,1 align=32 banks=4:8 kslice=0\n"
	 "res=resident chain=1 out=fp32 mainline=0 wreuse=1'"),
    {NULL},
};
