/* Host performance counters per phase (perfctr.h). */
#include "host/perfctr.h"

#include <errno.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/table.h"
#include "core/text.h"

#define PARANOID_PATH "/proc/sys/kernel/perf_event_paranoid"

static const struct {
	const char *key, *title;
	uint32_t type;
	uint64_t config;
} events[RB_PERFCTR_EVENTS] = {
    [RB_PERFCTR_TASK_CLOCK] = {"task_clock_ns", "task-clock", PERF_TYPE_SOFTWARE,
			       PERF_COUNT_SW_TASK_CLOCK},
    [RB_PERFCTR_CONTEXT_SWITCHES] = {"context_switches", "ctx-sw", PERF_TYPE_SOFTWARE,
				     PERF_COUNT_SW_CONTEXT_SWITCHES},
    [RB_PERFCTR_PAGE_FAULTS] = {"page_faults", "faults", PERF_TYPE_SOFTWARE,
				PERF_COUNT_SW_PAGE_FAULTS},
    [RB_PERFCTR_CYCLES] = {"cycles", "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
    [RB_PERFCTR_INSTRUCTIONS] = {"instructions", "instructions", PERF_TYPE_HARDWARE,
				 PERF_COUNT_HW_INSTRUCTIONS},
    [RB_PERFCTR_CACHE_MISSES] = {"cache_misses", "cache-misses", PERF_TYPE_HARDWARE,
				 PERF_COUNT_HW_CACHE_MISSES},
};

static const char *const phase_names[RB_PHASES] = {
    [RB_PHASE_PACK_B] = "pack_b", [RB_PHASE_PACK_A] = "pack_a",   [RB_PHASE_SUBMIT] = "submit",
    [RB_PHASE_UNPACK] = "unpack", [RB_PHASE_COMPUTE] = "compute", [RB_PHASE_VERIFY] = "verify",
};

const char *rb_perfctr_event_name(enum rb_perfctr_event ev)
{
	return ev < RB_PERFCTR_EVENTS ? events[ev].key : "?";
}

const char *rb_phase_name(enum rb_phase phase)
{
	return phase > RB_PHASE_NONE && phase < RB_PHASES ? phase_names[phase] : "none";
}

static int read_paranoid(void)
{
	FILE *f = fopen(PARANOID_PATH, "r");
	char line[32], *end;
	long v;

	if (!f)
		return INT_MIN;
	if (!fgets(line, sizeof(line), f))
		line[0] = '\0';
	fclose(f);
	errno = 0;
	v = strtol(line, &end, 10);
	return errno || end == line || v <= INT_MIN || v > INT_MAX ? INT_MIN : (int)v;
}

void rb_perfctr_reason(char *buf, size_t size, int err, int paranoid)
{
	switch (err) {
	case ENOENT:
	case EOPNOTSUPP:
	case ENODEV:
		snprintf(buf, size, "not exposed by this CPU or VM (%s)",
			 err == ENOENT   ? "ENOENT"
			 : err == ENODEV ? "ENODEV"
					 : "EOPNOTSUPP");
		break;
	case EACCES:
	case EPERM:
		if (paranoid == INT_MIN)
			snprintf(buf, size, "not permitted (%s): run as root", strerror(err));
		else
			snprintf(buf, size,
				 "not permitted: kernel.perf_event_paranoid is %d; run as root "
				 "or 'sudo sysctl kernel.perf_event_paranoid=2'",
				 paranoid);
		break;
	case ENOSYS:
		snprintf(buf, size, "this kernel has no perf events (ENOSYS)");
		break;
	default:
		snprintf(buf, size, "perf_event_open failed: %s", strerror(err));
	}
}

static int open_event(enum rb_perfctr_event ev, bool user_only)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = events[ev].type;
	attr.config = events[ev].config;
	attr.inherit = 1; /* threads started later count too (perfctr.h) */
	attr.exclude_kernel = user_only;
	attr.exclude_hv = user_only;
	attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	return (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/* Kernel mode is tried first; perf_event_paranoid >= 2 allows user mode only. */
static void open_one(struct rb_perfctr *pc, enum rb_perfctr_event ev)
{
	int fd = open_event(ev, pc->perf.user_only);
	int err = fd < 0 ? errno : 0;

	if (fd < 0 && (err == EACCES || err == EPERM) && !pc->perf.user_only) {
		fd = open_event(ev, true);
		if (fd >= 0)
			pc->perf.user_only = true;
		else
			err = errno;
	}
	pc->fd[ev] = fd;
	if (fd < 0)
		rb_perfctr_reason(pc->perf.why[ev], RB_PERFCTR_WHY, err, read_paranoid());
}

/* The count, scaled when the kernel multiplexed the counter; NAN if unavailable. */
static double read_event(int fd)
{
	uint64_t v[3]; /* value, time enabled, time running */

	if (fd < 0 || read(fd, v, sizeof(v)) != (ssize_t)sizeof(v))
		return NAN;
	if (v[2] > 0 && v[2] < v[1])
		return (double)v[0] * ((double)v[1] / (double)v[2]);
	return (double)v[0];
}

void rb_perfctr_open(struct rb_perfctr *pc)
{
	memset(pc, 0, sizeof(*pc));
	pc->current = RB_PHASE_NONE;
	for (int ev = 0; ev < RB_PERFCTR_EVENTS; ev++)
		open_one(pc, (enum rb_perfctr_event)ev);
}

void rb_perfctr_close(struct rb_perfctr *pc)
{
	if (!pc)
		return;
	for (int ev = 0; ev < RB_PERFCTR_EVENTS; ev++) {
		if (pc->fd[ev] >= 0)
			close(pc->fd[ev]);
		pc->fd[ev] = -1;
	}
}

void rb_perfctr_enter(struct rb_perfctr *pc, enum rb_phase phase)
{
	double now[RB_PERFCTR_EVENTS];

	if (!pc)
		return;
	for (int ev = 0; ev < RB_PERFCTR_EVENTS; ev++)
		now[ev] = read_event(pc->fd[ev]);
	if (pc->current != RB_PHASE_NONE) {
		for (int ev = 0; ev < RB_PERFCTR_EVENTS; ev++)
			pc->perf.sum[pc->current][ev] += now[ev] - pc->start[ev];
		pc->perf.runs[pc->current]++;
	}
	memcpy(pc->start, now, sizeof(now));
	pc->current = phase;
}

void rb_perfctr_reset(struct rb_perfctr *pc)
{
	if (!pc)
		return;
	memset(pc->perf.runs, 0, sizeof(pc->perf.runs));
	memset(pc->perf.sum, 0, sizeof(pc->perf.sum));
}

/* ---- reports ---- */

static double mean(const struct rb_perf *perf, int phase, int ev)
{
	if (perf->why[ev][0] || perf->runs[phase] == 0)
		return NAN;
	return perf->sum[phase][ev] / (double)perf->runs[phase];
}

static const char *counted_text(const struct rb_perf *perf)
{
	return perf->user_only ? "host, measured: this process, user mode only "
				 "(perf_event_paranoid), mean per run"
			       : "host, measured: this process, user and kernel mode, mean per run";
}

static bool json_phase(cJSON *phases, const struct rb_perf *perf, int phase)
{
	cJSON *o = cJSON_AddObjectToObject(phases, phase_names[phase]);
	bool ok = o && cJSON_AddNumberToObject(o, "runs", (double)perf->runs[phase]);

	for (int ev = 0; ok && ev < RB_PERFCTR_EVENTS; ev++) {
		double v = mean(perf, phase, ev);

		ok = isfinite(v) ? cJSON_AddNumberToObject(o, events[ev].key, v) != NULL
				 : cJSON_AddNullToObject(o, events[ev].key) != NULL;
	}
	return ok;
}

cJSON *rb_perf_json(const struct rb_perf *perf)
{
	cJSON *o = cJSON_CreateObject();
	bool ok = o && cJSON_AddStringToObject(o, "counted", counted_text(perf));
	cJSON *phases = ok ? cJSON_AddObjectToObject(o, "phases") : NULL;
	cJSON *unavailable = phases ? cJSON_AddObjectToObject(o, "unavailable") : NULL;

	ok = unavailable != NULL;
	for (int p = RB_PHASE_NONE + 1; ok && p < RB_PHASES; p++)
		ok = perf->runs[p] == 0 || json_phase(phases, perf, p);
	for (int ev = 0; ok && ev < RB_PERFCTR_EVENTS; ev++)
		ok = !perf->why[ev][0] ||
		     cJSON_AddStringToObject(unavailable, events[ev].key, perf->why[ev]);
	if (ok)
		return o;
	cJSON_Delete(o);
	return NULL;
}

/* A mean count: whole numbers from 100 up, else one decimal; n/a when unavailable. */
static void fmt_count(char *buf, size_t size, double v, bool ns)
{
	if (!isfinite(v))
		snprintf(buf, size, "n/a");
	else if (ns)
		snprintf(buf, size, "%.1f µs", v / 1e3);
	else
		snprintf(buf, size, v >= 100 ? "%.0f" : "%.1f", v);
}

void rb_perf_print(FILE *out, const char *label, const struct rb_perf *perf)
{
	static const int width[RB_PERFCTR_EVENTS] = {12, 7, 8, 12, 13, 13};
	char cell[48];

	fprintf(out, "\nperf: %s (%s)\n  %-8s %6s", label, counted_text(perf), "phase", "runs");
	for (int ev = 0; ev < RB_PERFCTR_EVENTS; ev++)
		fprintf(out, " %*s", width[ev], events[ev].title);
	fputc('\n', out);
	for (int p = RB_PHASE_NONE + 1; p < RB_PHASES; p++) {
		if (perf->runs[p] == 0)
			continue;
		fprintf(out, "  %-8s %6llu", phase_names[p], (unsigned long long)perf->runs[p]);
		for (int ev = 0; ev < RB_PERFCTR_EVENTS; ev++) {
			fmt_count(cell, sizeof(cell), mean(perf, p, ev),
				  ev == RB_PERFCTR_TASK_CLOCK);
			fprintf(out, " %*s%s", width[ev] - rb_display_width(cell), "", cell);
		}
		fputc('\n', out);
	}
}

void rb_perf_print_unavailable(FILE *out, const struct rb_perf *perf)
{
	for (int ev = 0; ev < RB_PERFCTR_EVENTS; ev++)
		if (perf->why[ev][0])
			fprintf(out, "perf: %s unavailable: %s\n", events[ev].title, perf->why[ev]);
}
