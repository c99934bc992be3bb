/* Planner config flags (cli.h): one spelling for plan, run and tune. Each flag is a
 * key of the compact config string (npu/plan.h), so the flags, the reproducer lines
 * and the tuned JSON share one parser. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "core/error.h"
#include "npu/plan.h"

/* value NULL: the flag takes an argument and that is the value. */
static const struct {
	const char *flag;
	const char *key;
	const char *value;
} flags[] = {
    {"core-mask", "mask", NULL},
    {"split", "axis", NULL},
    {"split-weights", "weights", NULL},
    {"align", "align", NULL},
    {"data-banks", "dbanks", NULL},
    {"weight-banks", "wbanks", NULL},
    {"k-slice", "kslice", NULL},
    {"residency", "res", NULL},
    {"chain", "chain", "1"},
    {"no-chain", "chain", "0"},
    {"out", "out", NULL},
    {"mainline", "mainline", "1"},
    {"weight-reuse", "wreuse", "1"},
    {"no-weight-reuse", "wreuse", "0"},
    {"config", NULL, NULL}, /* the whole compact string */
};

#define N_FLAGS (sizeof(flags) / sizeof(flags[0]))

const char cli_plan_usage[] =
    "plan config (defaults: auto):\n"
    "  --core-mask MASK     NPU cores taking part, 0x1 to 0x7 (default 0x7)\n"
    "  --split n|m|auto     axis cut across the cores (auto: m when M > N)\n"
    "  --split-weights W,.. one weight per core, e.g. 2,1,1 (default even)\n"
    "  --align 16|32|64     cut points on multiples of this (default: the kernel\n"
    "                       group, 16 fp16 / 32 int8)\n"
    "  --data-banks D       CBUF banks for features (D + W <= 12; default auto)\n"
    "  --weight-banks W     CBUF banks for weights\n"
    "  --k-slice K          channels per K-slice, a multiple of 32 (default auto)\n"
    "  --residency R        resident (weights of a task fit its banks) or streamed\n"
    "                       (unproven on silicon)\n"
    "  --chain, --no-chain  one submit per core for all its tasks (default), or per task\n"
    "  --out fp32|fp16|int32 output precision (default fp32 for fp16, int32 for int8)\n"
    "  --mainline           the rocket-safe program variant (pads M to a multiple of 4)\n"
    "  --weight-reuse, --no-weight-reuse\n"
    "                       CBUF_CON0 WEIGHT_REUSE on chained tasks that keep the\n"
    "                       weights of the task before (default on; unproven on silicon)\n"
    "  --config STRING      all of the above in the compact form, e.g.\n"
    "                       'mask=0x7 split=n:1,1,1 align=32 banks=4:8 kslice=0\n"
    "                       res=resident chain=1 out=fp32 mainline=0 wreuse=1'\n";

struct option *cli_plan_options_join(const struct option *own)
{
	size_t n_own = 0;
	struct option *all;

	while (own[n_own].name)
		n_own++;
	all = calloc(n_own + N_FLAGS + 1, sizeof(*all));
	if (!all)
		return NULL;
	memcpy(all, own, n_own * sizeof(*all));
	for (size_t i = 0; i < N_FLAGS; i++) {
		all[n_own + i].name = flags[i].flag;
		all[n_own + i].has_arg = flags[i].value ? no_argument : required_argument;
		all[n_own + i].val = CLI_PLAN_OPT_BASE + (int)i;
	}
	return all;
}

int cli_plan_option(struct rb_plan_config *cfg, int code, const char *arg)
{
	size_t i = (size_t)(code - CLI_PLAN_OPT_BASE);
	int ret;

	if (code < CLI_PLAN_OPT_BASE || i >= N_FLAGS)
		return rb_error("option code %d is not a plan option", code);
	if (!flags[i].key)
		ret = rb_plan_config_parse(cfg, arg);
	else
		ret = rb_plan_config_set(cfg, flags[i].key, flags[i].value ? flags[i].value : arg);
	if (ret < 0)
		return rb_error("--%s: %s", flags[i].flag, rb_last_error());
	return 0;
}
