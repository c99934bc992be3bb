/* Option values, messages, and what several commands do alike. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "core/fileio.h"

int cli_parse_int(const char *opt, const char *text, long min, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(text, &end, 10);
	if (errno || end == text || *end || v < min || v > max)
		return rb_error("%s '%s' must be an integer from %ld to %ld", opt, text, min, max);
	*out = v;
	return 0;
}

int cli_parse_u64(const char *opt, const char *text, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(text, &end, 0);
	if (errno || end == text || *end || text[0] == '-')
		return rb_error("%s '%s' must be a non-negative integer", opt, text);
	*out = v;
	return 0;
}

int cli_parse_double(const char *opt, const char *text, double min, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(text, &end);
	if (errno || end == text || *end || !isfinite(v) || v < min)
		return rb_error("%s '%s' must be a number of at least %g", opt, text, min);
	*out = v;
	return 0;
}

int cli_fail(int code, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rb_error("%s", msg);
	return code;
}

const struct rb_engine_ops *cli_find_device(const char *name, struct rb_engine_opts *opts)
{
	static bool noted;
	const struct rb_engine_ops *ops = rb_engine_find(name, opts);

	if (!ops)
		rb_error("%s", rb_last_error());
	else if (opts->note && !noted)
		rb_warn("%s", opts->note);
	noted = noted || (ops && opts->note);
	return ops;
}

int cli_load_shapes(struct rb_shape_list *list, char **files, int n_files, struct rb_text *texts,
		    const struct cli_list *specs, int dtype, const char *command, bool allow_empty)
{
	for (int i = 0; i < n_files; i++) {
		char *data;
		size_t len;
		int ret;

		/* An installed binary also finds the shipped shapes files; what reads files[i]
		 * later (tune's cache and tuned JSON) sees the file actually read. */
		files[i] = (char *)cli_data_path(files[i], NULL);
		ret = rb_file_read(files[i], &data, &len);
		if (ret == 0)
			ret = rb_shape_list_load_string(list, data, len, files[i]);
		if (ret < 0) {
			free(data);
			return rb_error("%s%s", rb_last_error(), cli_data_hint(files[i], ret));
		}
		if (texts)
			texts[i] = (struct rb_text){data, len};
		else
			free(data);
	}
	for (size_t i = 0; specs && i < specs->n; i++)
		if (rb_shape_list_add_spec(list, specs->items[i], (enum rb_dtype)dtype) < 0)
			return rb_error("%s", rb_last_error());
	if (list->count == 0 && !allow_empty)
		return rb_error("no shapes: give a shapes file or --shape MxKxN; see 'rknn-bench "
				"%s --help'",
				command);
	return 0;
}

/* ---- --filter ---- */

static int filter_compile(regex_t *re, const char *regex)
{
	char why[256];
	int err = regcomp(re, regex, REG_EXTENDED | REG_NOSUB);

	if (err == 0)
		return 0;
	regerror(err, re, why, sizeof(why));
	regfree(re);
	return rb_error("--filter '%s' is not a valid regular expression (POSIX extended): %s",
			regex, why);
}

static bool filter_match(const regex_t *re, const char *name)
{
	return !re || regexec(re, name, 0, NULL, 0) == 0;
}

/* Keeps the names of an entry that match; true when one is left. */
static bool filter_entry(struct rb_shape_entry *e, const regex_t *re)
{
	size_t kept = 0;

	for (size_t i = 0; i < e->n_names; i++) {
		if (filter_match(re, e->names[i]))
			e->names[kept++] = e->names[i];
		else
			free(e->names[i]);
	}
	e->n_names = kept;
	return kept > 0;
}

int cli_filter_shapes(struct rb_shape_list *list, const char *regex)
{
	regex_t re;
	size_t kept = 0;

	if (!regex)
		return 0;
	if (filter_compile(&re, regex) < 0)
		return -1;
	for (size_t i = 0; i < list->count; i++) {
		struct rb_shape_entry *e = &list->entries[i];

		if (filter_entry(e, &re)) {
			list->entries[kept++] = *e;
			continue;
		}
		free(e->names);
		free(e->config);
	}
	list->count = kept;
	regfree(&re);
	if (kept == 0)
		return rb_error("--filter '%s' matches no pair name", regex);
	return 0;
}

/* ---- provenance ---- */

void cli_warn_host_settings(const cJSON *settings, bool modeled)
{
	const cJSON *warnings = cJSON_GetObjectItemCaseSensitive(settings, "warnings");
	char line[1536];
	size_t used = 0;

	if (cli_quiet || cJSON_GetArraySize(warnings) == 0)
		return;
	/* each warning's first clause, "DDR governor is 'x', not 'performance'": info has
	 * the rest (why it matters, how to pin it) */
	for (const cJSON *w = warnings->child; w && used < sizeof(line); w = w->next) {
		const char *text = cJSON_IsString(w) ? w->valuestring : "";

		used += (size_t)snprintf(line + used, sizeof(line) - used, "%s%.*s",
					 used ? "; " : "", (int)strcspn(text, ":"), text);
	}
	rb_warn("clocks are not pinned, so times may vary from run to run%s: %s (see "
		"'rknn-bench info' and docs/boards.md)",
		modeled ? " (modeled NPU times do not depend on them; the CPU reference's do)" : "",
		line);
}

int cli_set_dtype(const struct cli_opt *opt, void *group, const char *arg)
{
	return rb_dtype_parse(arg, (enum rb_dtype *)((char *)group + opt->offset));
}
