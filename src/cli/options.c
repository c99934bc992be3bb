/* The option tables (cli.h): one table per command, from which the getopt_long table,
 * the parsing into the command's struct, --help, the list the completions and man
 * pages are checked against, "did you mean" and the output guard's paths all come. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "core/json.h"

#define CODE_BASE 0x1000 /* option i of group g: CODE_BASE + 0x100·g + i */

static const char *const section_names[CLI_N_SECTIONS] = {
    "options",
    "model",
    "what to list",
    "shapes",
    "search",
    "device",
    "measuring",
    "verification",
    "output",
    "the ggml-rknn backend (the seed revision's split rule)",
    "plan config (defaults: auto)"};

/* Every option of a command in order, with where its group lives and its getopt code. */
struct opt_ref {
	const struct cli_opt *opt;
	size_t group;
	int code;
};

static bool next_opt(const struct cli_command *cmd, size_t *g, size_t *i, struct opt_ref *r)
{
	while (*g < CLI_MAX_GROUPS && cmd->groups[*g].opts) {
		if (cmd->groups[*g].opts[*i].name) {
			*r = (struct opt_ref){&cmd->groups[*g].opts[*i], *g,
					      CODE_BASE + 0x100 * (int)*g + (int)*i};
			++*i;
			return true;
		}
		(*g)++;
		*i = 0;
	}
	return false;
}
#define FOR_EACH_OPT(cmd, r) for (size_t g_ = 0, i_ = 0; next_opt(cmd, &g_, &i_, &(r));)

static void *group_of(const struct cli_command *cmd, void *o, size_t g)
{
	return (char *)o + cmd->groups[g].base;
}

/* ---- values ---- */

/* "a|b|c" split into names (at most 16, in copy): their count. */
static size_t split_values(const char *values, char *copy, size_t size, const char **names)
{
	size_t n = 0;

	snprintf(copy, size, "%s", values);
	for (char *p = copy, *bar; p && n < 16; p = bar ? bar + 1 : NULL) {
		bar = strchr(p, '|');
		if (bar)
			*bar = '\0';
		names[n++] = p;
	}
	return n;
}

/* The index of arg among the values, or -1 after "--format 'xml' must be table, csv,
 * json or md" (with the nearest value when one is). */
static int value_index(const struct cli_opt *opt, const char *arg)
{
	char copy[256], list[300] = "";
	const char *names[16], *near;
	size_t n = split_values(opt->values, copy, sizeof(copy), names), used = 0;

	for (size_t i = 0; i < n; i++) {
		if (strcmp(names[i], arg) == 0)
			return (int)i;
		used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s",
					 i == 0       ? ""
					 : i + 1 == n ? " or "
						      : ", ",
					 names[i]);
	}
	near = rb_name_nearest(arg, names, n);
	return rb_error("--%s '%s' must be %s%s%s%s", opt->name, arg, list,
			near ? " (did you mean " : "", near ? near : "", near ? "?)" : "");
}

static int set_number(const struct cli_opt *opt, void *field, const char *arg)
{
	char name[64];
	double d;
	long v;

	snprintf(name, sizeof(name), "--%s", opt->name);
	if (opt->kind == CLI_U64)
		return cli_parse_u64(name, arg, field);
	if (opt->kind == CLI_DOUBLE) {
		if (cli_parse_double(name, arg, opt->min, &d) < 0)
			return -1;
		if (opt->max > opt->min && d > opt->max)
			return rb_error("%s '%s' must be at most %g", name, arg, opt->max);
		*(double *)field = d;
		return 0;
	}
	if (cli_parse_int(name, arg, (long)opt->min, (long)opt->max, &v) < 0)
		return -1;
	if (opt->kind == CLI_INT)
		*(int *)field = (int)v;
	else
		*(long *)field = v;
	return 0;
}

static int apply(const struct cli_opt *opt, void *group, const char *arg, int max_items)
{
	void *field = (char *)group + opt->offset;
	struct cli_list *list = field;
	int i;

	switch (opt->kind) {
	case CLI_BOOL:
		*(bool *)field = true;
		return 0;
	case CLI_STR:
		*(const char **)field = arg;
		return 0;
	case CLI_LIST:
		if (!list->items && !(list->items = calloc((size_t)max_items, sizeof(char *))))
			return rb_error("out of memory");
		list->items[list->n++] = arg;
		return 0;
	case CLI_ENUM:
		i = value_index(opt, arg);
		if (i < 0)
			return -1;
		if (opt->set)
			return opt->set(opt, group, arg);
		*(int *)field = i;
		return 0;
	case CLI_CALL:
		return opt->set(opt, group, arg);
	default:
		return set_number(opt, field, arg);
	}
}

/* ---- getopt ---- */

static struct option *getopt_table(const struct cli_command *cmd, char *shorts, size_t size)
{
	struct option *t = calloc(CLI_MAX_GROUPS * 256 + 2, sizeof(*t));
	size_t n = 0, len = (size_t)snprintf(shorts, size, ":h");
	struct opt_ref r;

	if (!t)
		return NULL;
	t[n++] = (struct option){"help", no_argument, NULL, 'h'};
	FOR_EACH_OPT(cmd, r)
	{
		t[n++] = (struct option){r.opt->name, r.opt->arg ? required_argument : no_argument,
					 NULL, r.code};
		if (r.opt->short_name && len + 3 < size)
			len += (size_t)snprintf(shorts + len, size - len, "%c%s", r.opt->short_name,
						r.opt->arg ? ":" : "");
	}
	return t;
}

static bool find_code(const struct cli_command *cmd, int code, struct opt_ref *out)
{
	struct opt_ref r;

	FOR_EACH_OPT(cmd, r)
	{
		if (code == r.code || (code < CODE_BASE && code == r.opt->short_name)) {
			*out = r;
			return true;
		}
	}
	return false;
}

/* An unknown option, with the nearest known one. */
static int unknown_option(const struct cli_command *cmd, const char *typed)
{
	const char *names[CLI_MAX_GROUPS * 256 + 1], *near;
	const char *bare = typed + strspn(typed, "-");
	char word[64];
	size_t n = 0;
	struct opt_ref r;

	size_t prefixed = 0;

	snprintf(word, sizeof(word), "%.*s", (int)strcspn(bare, "="), bare);
	names[n++] = "help";
	FOR_EACH_OPT(cmd, r)
	{
		names[n++] = r.opt->name; /* getopt takes a prefix of one name only */
		prefixed += typed[1] == '-' && strncmp(r.opt->name, word, strlen(word)) == 0;
	}
	near = rb_name_nearest(word, names, n);
	return rb_error("%s option '%s' for %s; %s%s%s", prefixed > 1 ? "ambiguous" : "unknown",
			typed, cmd->name, near ? "did you mean --" : "see 'rknn-bench ",
			near ? near : cmd->name, near ? "?" : " --help'");
}

static int getopt_error(const struct cli_command *cmd, int c, char **argv)
{
	const char *typed = argv[optind - 1];
	struct opt_ref r;

	if (c == ':' && find_code(cmd, optopt, &r) && r.opt->values)
		return rb_error("%s needs a value: %s", typed, r.opt->values);
	if (c == ':')
		return rb_error("%s needs a value; see 'rknn-bench %s --help'", typed, cmd->name);
	if (optopt && optopt < CODE_BASE && optopt != '?')
		return unknown_option(cmd, (char[]){'-', (char)optopt, '\0'});
	return unknown_option(cmd, typed);
}

/* ---- help ---- */

static void print_opt(FILE *out, const struct cli_opt *o)
{
	char usage[80];
	const char *line = o->help;
	int len;

	len = snprintf(usage, sizeof(usage), "%s%c%s--%s%s%s", o->short_name ? "-" : "",
		       o->short_name ? o->short_name : ' ', o->short_name ? ", " : "", o->name,
		       o->arg ? " " : "", o->arg ? o->arg : "");
	fprintf(out, "  %-20s", o->short_name ? usage : usage + 1);
	if (len - (o->short_name ? 0 : 1) > 20)
		fprintf(out, "\n  %-20s", "");
	while (line) {
		const char *nl = strchr(line, '\n');

		fprintf(out, " %.*s\n", nl ? (int)(nl - line) : (int)strlen(line), line);
		line = nl ? nl + 1 : NULL;
		if (line)
			fprintf(out, "  %-20s", "");
	}
}

static void print_help(const struct cli_command *cmd)
{
	struct opt_ref r;

	printf("usage: rknn-bench %s %s\n\n%s\n", cmd->name, cmd->synopsis, cmd->about);
	for (int s = 0; s < CLI_N_SECTIONS; s++) {
		bool any = false;

		FOR_EACH_OPT(cmd, r)
		{
			if (r.opt->section != (enum cli_section)s)
				continue;
			if (!any)
				printf("%s:\n", section_names[s]);
			any = true;
			print_opt(stdout, r.opt);
		}
	}
	printf("  -h, --help           show this help\n");
	if (cmd->notes)
		printf("\n%s", cmd->notes);
}

void cli_list_options(FILE *out)
{
	for (size_t c = 0; c < cli_n_commands; c++) {
		const struct cli_command *cmd = cli_commands[c];
		struct opt_ref r;

		fprintf(out, "%s\t--help\t-h\t-\t-\t-\n", cmd->name);
		FOR_EACH_OPT(cmd, r)
		{
			static const char *const paths[] = {"-", "in", "out"};
			const struct cli_opt *o = r.opt;

			fprintf(out, "%s\t--%s\t%s%c\t%s\t%s\t%s\n", cmd->name, o->name,
				o->short_name ? "-" : "", o->short_name ? o->short_name : '-',
				o->arg ? o->arg : "-", o->values ? o->values : "-", paths[o->path]);
		}
	}
}

/* ---- parsing ---- */

/* "-o" for an option with a short name, else "--name": how messages name it. */
static const char *label_of(const struct cli_opt *o, char *buf /* 64 bytes */)
{
	if (o->short_name)
		snprintf(buf, 64, "-%c", o->short_name);
	else
		snprintf(buf, 64, "--%.60s", o->name);
	return buf;
}

static int check_positionals(const struct cli_command *cmd, const struct cli_args *a)
{
	int min = 0, max = 0;

	for (int i = 0; i < CLI_MAX_POS && cmd->pos[i].name; i++) {
		min += cmd->pos[i].min;
		max = max < 0 || cmd->pos[i].max < 0 ? -1 : max + cmd->pos[i].max;
	}
	if (a->n >= min && (max < 0 || a->n <= max))
		return 0;
	if (max == 0)
		return rb_error("%s takes no arguments ('%s'); see 'rknn-bench %s --help'",
				cmd->name, a->v[0], cmd->name);
	if (max >= 0 && a->n > max) /* the first one too many */
		return rb_error("%s takes %s%d argument%s ('%s' is one too many); see 'rknn-bench "
				"%s --help'",
				cmd->name, "at most ", max, max == 1 ? "" : "s", a->v[max],
				cmd->name);
	return rb_error("%s needs %s%s%s; see 'rknn-bench %s --help'", cmd->name, cmd->pos[0].name,
			cmd->pos[1].name ? " and " : "", cmd->pos[1].name ? cmd->pos[1].name : "",
			cmd->name);
}

static int check_required(const struct cli_command *cmd, const bool *seen)
{
	struct opt_ref r;
	char label[64];

	FOR_EACH_OPT(cmd, r)
	if (r.opt->required && !seen[r.code - CODE_BASE])
		return rb_error("%s is required: %s needs %s %s", label_of(r.opt, label), cmd->name,
				label, r.opt->arg);
	return 0;
}

/* 0, 1 after --help, or -1 with a message. */
static int parse(const struct cli_command *cmd, void *o, int argc, char **argv, struct cli_args *a)
{
	bool seen[CLI_MAX_GROUPS * 256] = {false};
	char shorts[64];
	struct option *table = getopt_table(cmd, shorts, sizeof(shorts));
	struct opt_ref r;
	int c, ret = table ? 0 : rb_error("out of memory");

	opterr = 0;
	while (ret == 0 && (c = getopt_long(argc, argv, shorts, table, NULL)) != -1) {
		if (c == 'h') {
			print_help(cmd);
			ret = 1;
		} else if (!find_code(cmd, c, &r)) {
			ret = getopt_error(cmd, c, argv);
		} else {
			ret = apply(r.opt, group_of(cmd, o, r.group), optarg, argc);
			seen[r.code - CODE_BASE] = true;
		}
	}
	free(table);
	*a = (struct cli_args){argv + optind, argc - optind};
	if (ret == 0)
		ret = check_positionals(cmd, a);
	return ret == 0 ? check_required(cmd, seen) : ret;
}

/* Every path of the table and the positionals, after the derived ones. */
static int collect_paths(const struct cli_command *cmd, void *o, const struct cli_args *a,
			 struct cli_paths *p)
{
	static char labels[CLI_MAX_GROUPS * 256][64];
	struct opt_ref r;
	size_t k = 0;

	FOR_EACH_OPT(cmd, r)
	{
		const char *path;

		if (!r.opt->path) /* only a path option's offset holds a string */
			continue;
		path = *(const char **)((char *)group_of(cmd, o, r.group) + r.opt->offset);
		if (!path)
			continue;
		if (cli_paths_add(p, label_of(r.opt, labels[k++]), path, r.opt->path) < 0)
			return -1;
	}
	for (int i = 0, pos = 0; i < a->n; i++) {
		if (pos + 1 < CLI_MAX_POS && cmd->pos[pos + 1].name && i >= cmd->pos[pos].max &&
		    cmd->pos[pos].max >= 0)
			pos++;
		if (cli_paths_add(p, cmd->pos[pos].name, a->v[i], cmd->pos[pos].path) < 0)
			return -1;
	}
	return 0;
}

int cli_command_main(const struct cli_command *cmd, int argc, char **argv)
{
	void *o = calloc(1, cmd->size);
	struct cli_paths *paths = calloc(1, sizeof(*paths));
	struct cli_args a = {NULL, 0};
	int ret = o && paths ? 0 : cli_fail(RB_EXIT_USAGE, "out of memory");

	if (ret == 0 && cmd->init)
		cmd->init(o);
	if (ret == 0)
		ret = parse(cmd, o, argc, argv, &a);
	if (ret == 1) {
		ret = RB_EXIT_OK; /* --help */
		goto out;
	}
	if (ret < 0)
		ret = RB_EXIT_USAGE;
	if (ret == 0 && cmd->prepare)
		ret = cmd->prepare(o, &a, paths);
	if (ret == 0) {
		ret = collect_paths(cmd, o, &a, paths) < 0 || cli_guard(paths) < 0 ? RB_EXIT_USAGE
										   : 0;
	}
	if (ret == 0)
		ret = cmd->run(o, &a);
out:
	if (o && cmd->release)
		cmd->release(o);
	if (paths)
		free(paths->items);
	free(paths);
	free(o);
	return ret;
}
