/* A tuned config as engine options (tuned_run.h). The config string is the
 * authoritative field of a tuned pair (docs/tuned-json.md): it goes through the
 * planner's own parser, so what runs cannot disagree with what was tuned. */
#include "run/tuned_run.h"

#include <errno.h>

#include "core/error.h"

int rb_engine_opts_apply_tuned(struct rb_engine_opts *opts, const struct rb_tuned_config *t)
{
	rb_plan_config_init(&opts->plan);
	if (rb_plan_config_parse(&opts->plan, t->config) < 0)
		return rb_set_error(-EINVAL, "%s: tuned config '%s': %s", t->name, t->config,
				    rb_last_error());
	if (rb_npu_launch_parse(t->launch, &opts->launch) < 0)
		opts->launch = RB_LAUNCH_FENCES;
	return 0;
}
