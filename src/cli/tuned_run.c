/* run --tuned FILE: every shape runs with the config the tuned JSON gives it, looked
 * up exactly as a backend does (rknn_bench/tuned.h), so a tuned time can be checked
 * independently of tune. */
#include "cli/tuned_run.h"

#include "cli/cli.h"
#include "core/error.h"

int cli_tuned_load(const char *path, struct rb_tuned_db **db)
{
	if (rb_tuned_load_file(db, path) < 0)
		return rb_error("--tuned: %s", rb_last_error());
	return 0;
}

int cli_tuned_apply(const struct rb_tuned_db *db, const struct rb_shape_entry *entry,
		    const struct rb_engine_opts *base, struct rb_engine_opts *opts)
{
	const struct rb_shape *s = &entry->shape;
	const struct rb_tuned_config *t;
	enum rb_tuned_match how;

	if (!db)
		return 0;
	opts->plan = base->plan;
	opts->launch = base->launch;
	t = rb_tuned_lookup(db, s->m, s->k, s->n, s->dtype, entry->names[0], &how);
	if (!t) {
		if (!cli_quiet)
			rb_warn("%s: no tuned config for %lldx%lldx%lld %s: runs with the default",
				entry->names[0], (long long)s->m, (long long)s->k, (long long)s->n,
				rb_dtype_name(s->dtype));
		return 0;
	}
	if (how == RB_TUNED_BUCKET && !cli_quiet)
		rb_warn("%s: using the config tuned for M = %lld (nearest shape)", entry->names[0],
			(long long)t->shape.m);
	rb_plan_config_init(&opts->plan);
	if (rb_plan_config_parse(&opts->plan, t->config) < 0 ||
	    rb_npu_launch_parse(t->launch, &opts->launch) < 0)
		return rb_error("--tuned: %s: %s", entry->names[0], rb_last_error());
	return 0;
}
