/* A tuned config looked up for a shape, as engine options (tuned_opts.h). */
#include "tune/tuned_opts.h"

int rb_engine_opts_lookup_tuned(struct rb_engine_opts *opts, const struct rb_engine_opts *base,
				const struct rb_tuned_db *db, const struct rb_shape_entry *entry,
				const struct rb_tuned_config **t, enum rb_tuned_match *how)
{
	const struct rb_shape *s = &entry->shape;

	*t = NULL;
	*how = RB_TUNED_NONE;
	if (!db)
		return 0;
	opts->plan = base->plan;
	opts->launch = base->launch;
	*t = rb_tuned_lookup(db, s->m, s->k, s->n, s->dtype, entry->names[0], how);
	return *t ? rb_engine_opts_apply_tuned(opts, *t) : 0;
}
