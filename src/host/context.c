/* The host context of a report (report.h): tool version, host, CPU model, kernel,
 * date. Read once per report from /proc and the device tree. */
#include "host/context.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "core/util.h"
#include "core/version.h"
#include "host/devtree.h"

/* ---- context ----------------------------------------------------------------- */

/* Arm's "CPU part" numbers (implementer 0x41) of cores found in SoCs we may meet. */
static const struct {
	unsigned part;
	const char *name;
} arm_parts[] = {
    {0xd03, "Cortex-A53"},  {0xd04, "Cortex-A35"},  {0xd05, "Cortex-A55"},  {0xd07, "Cortex-A57"},
    {0xd08, "Cortex-A72"},  {0xd09, "Cortex-A73"},  {0xd0a, "Cortex-A75"},  {0xd0b, "Cortex-A76"},
    {0xd0c, "Neoverse-N1"}, {0xd0d, "Cortex-A77"},  {0xd41, "Cortex-A78"},  {0xd44, "Cortex-X1"},
    {0xd46, "Cortex-A510"}, {0xd47, "Cortex-A710"}, {0xd48, "Cortex-X2"},   {0xd4d, "Cortex-A715"},
    {0xd4e, "Cortex-X3"},   {0xd80, "Cortex-A520"}, {0xd81, "Cortex-A720"}, {0xd82, "Cortex-X4"},
};

#define MAX_PARTS 8

struct cpuinfo {
	char model[128];
	unsigned parts[MAX_PARTS]; /* implementer << 16 | part, distinct */
	int n_parts;
};

/* Copies as much of src as fits, NUL-terminated: these fields are truncated on purpose. */
static void copy_str(char *dst, size_t size, const char *src)
{
	size_t len = strnlen(src, size - 1);

	memcpy(dst, src, len);
	dst[len] = '\0';
}

/* The value of a "key<blanks>: value" line of /proc/cpuinfo, or NULL. */
static const char *field_value(const char *line, const char *key)
{
	size_t len = strlen(key);

	if (strncmp(line, key, len) != 0)
		return NULL;
	line += len;
	line += strspn(line, " \t");
	if (*line != ':')
		return NULL;
	line++;
	return line + strspn(line, " \t");
}

static void copy_trimmed(char *dst, size_t size, const char *src)
{
	size_t len = strcspn(src, "\r\n");

	while (len > 0 && (src[len - 1] == ' ' || src[len - 1] == '\t'))
		len--;
	snprintf(dst, size, "%.*s", (int)len, src);
}

static void add_part(struct cpuinfo *ci, unsigned id)
{
	int i;

	for (i = 0; i < ci->n_parts; i++)
		if (ci->parts[i] == id)
			return;
	if (ci->n_parts < MAX_PARTS)
		ci->parts[ci->n_parts++] = id;
}

static void parse_cpuinfo_line(struct cpuinfo *ci, const char *line, unsigned *impl)
{
	const char *v;

	if (!ci->model[0] && (v = field_value(line, "model name")))
		copy_trimmed(ci->model, sizeof(ci->model), v);
	else if ((v = field_value(line, "CPU implementer")))
		*impl = (unsigned)strtoul(v, NULL, 0);
	else if ((v = field_value(line, "CPU part")))
		add_part(ci, *impl << 16 | ((unsigned)strtoul(v, NULL, 0) & 0xffff));
}

static void read_cpuinfo(const char *path, struct cpuinfo *ci)
{
	char *line = NULL;
	size_t cap = 0;
	unsigned impl = 0;
	FILE *f;

	memset(ci, 0, sizeof(*ci));
	f = path ? fopen(path, "r") : NULL;
	if (!f)
		return;
	while (getline(&line, &cap, f) > 0)
		parse_cpuinfo_line(ci, line, &impl);
	free(line);
	fclose(f);
}

/* The SoC a device tree's "compatible" list names (its last string). */
static void read_dt_soc(const char *path, char *buf, size_t size)
{
	char data[512];
	size_t len = rb_devtree_read(path, data, sizeof(data));

	copy_str(buf, size, rb_devtree_last_string(data, len));
}

static void part_name(char *buf, size_t size, unsigned id)
{
	size_t i;

	if (id >> 16 == 0x41)
		for (i = 0; i < ARRAY_SIZE(arm_parts); i++)
			if (arm_parts[i].part == (id & 0xffff)) {
				snprintf(buf, size, "%s", arm_parts[i].name);
				return;
			}
	snprintf(buf, size, "0x%02x/0x%03x", id >> 16, id & 0xffff);
}

/* "Cortex-A55 + Cortex-A76" */
static void parts_text(const struct cpuinfo *ci, char *buf, size_t size)
{
	char name[32];
	size_t len = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < ci->n_parts && len < size; i++) {
		part_name(name, sizeof(name), ci->parts[i]);
		len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? " + " : "", name);
	}
}

void rb_cpu_model_read(char *buf, size_t size, const char *cpuinfo_path,
		       const char *dt_compatible_path)
{
	struct cpuinfo ci;
	char soc[128], parts[128];

	read_cpuinfo(cpuinfo_path, &ci);
	if (ci.model[0]) {
		copy_str(buf, size, ci.model);
		return;
	}
	read_dt_soc(dt_compatible_path, soc, sizeof(soc));
	parts_text(&ci, parts, sizeof(parts));
	if (soc[0] && parts[0])
		snprintf(buf, size, "%s (%s)", soc, parts);
	else if (soc[0] || parts[0])
		snprintf(buf, size, "%s", soc[0] ? soc : parts);
	else
		snprintf(buf, size, "unknown");
}

void rb_board_model_read(char *buf, size_t size, const char *model_path)
{
	char data[256];

	rb_devtree_read(model_path, data, sizeof(data));
	copy_trimmed(buf, size, data); /* the model ends at its NUL (or a newline) */
}

/* The device tree's model lives beside the host settings, under the same sysfs root
 * (/proc/device-tree is a link to /sys/firmware/devicetree/base). */
static void read_board(char *buf, size_t size)
{
	const char *root = getenv("RKNN_BENCH_SYSFS");
	char path[4096];

	snprintf(path, sizeof(path), "%s/firmware/devicetree/base/model", root ? root : "/sys");
	rb_board_model_read(buf, size, path);
}

void rb_context_line(const struct rb_context *ctx, char *buf, size_t size)
{
	snprintf(buf, size, "rknn-bench %s (commit %s) on %s: %s, %d CPUs%s%s, %s, %s",
		 ctx->tool_version, ctx->tool_commit, ctx->host, ctx->cpu, ctx->cpu_count,
		 ctx->board[0] ? ", " : "", ctx->board, ctx->kernel, ctx->date);
}

void rb_context_collect(struct rb_context *ctx)
{
	struct utsname u;
	struct tm tm;
	time_t now = time(NULL);
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	memset(ctx, 0, sizeof(*ctx));
	copy_str(ctx->tool_version, sizeof(ctx->tool_version), RB_VERSION);
	copy_str(ctx->tool_commit, sizeof(ctx->tool_commit), rb_git_commit);
	read_board(ctx->board, sizeof(ctx->board));
	if (gethostname(ctx->host, sizeof(ctx->host) - 1) != 0 || !ctx->host[0])
		snprintf(ctx->host, sizeof(ctx->host), "unknown");
	rb_cpu_model_read(ctx->cpu, sizeof(ctx->cpu), "/proc/cpuinfo",
			  "/proc/device-tree/compatible");
	if (uname(&u) == 0)
		snprintf(ctx->kernel, sizeof(ctx->kernel), "%.32s %.90s %.32s", u.sysname,
			 u.release, u.machine);
	else
		snprintf(ctx->kernel, sizeof(ctx->kernel), "unknown");
	if (!gmtime_r(&now, &tm) ||
	    !strftime(ctx->date, sizeof(ctx->date), "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(ctx->date, sizeof(ctx->date), "unknown");
	ctx->cpu_count = cpus > 0 ? (int)cpus : 0;
}
