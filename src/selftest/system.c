/* Rung 0 of the selftest (the system) and the kernel log reader. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "dev/discover.h"
#include "selftest/selftest.h"

/* ---- the kernel log: /dev/kmsg from where the ladder started ---- */

void rb_selftest_kmsg_open(struct rb_selftest *st)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0) {
		snprintf(st->kmsg_note, sizeof(st->kmsg_note),
			 "the kernel log is not readable (/dev/kmsg: %s): run 'sudo dmesg | tail "
			 "-n 50' and send it",
			 strerror(errno));
		return;
	}
	lseek(fd, 0, SEEK_END); /* only what comes after */
	st->kmsg_fd = fd;
}

/* Lines about the NPU, its IOMMU or DRM: the rest of a board's log is not ours to send. */
static bool npu_line(const char *line)
{
	static const char *const words[] = {"npu", "rocket", "iommu", "drm", "dma", "mmu"};
	char low[512];
	size_t n = 0;

	for (; n < sizeof(low) - 1 && line[n]; n++)
		low[n] = (char)tolower((unsigned char)line[n]);
	low[n] = '\0';
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strstr(low, words[i]))
			return true;
	return false;
}

static void append(char *buf, size_t size, const char *text)
{
	size_t n = strlen(buf);

	if (n + 1 < size)
		snprintf(buf + n, size - n, "%s", text);
}

/* One /dev/kmsg record: "PRI,SEQ,USEC,FLAGS;MESSAGE\n" -> "[USEC] MESSAGE\n". */
static void add_record(char *out, size_t size, const char *rec)
{
	const char *msg = strchr(rec, ';');
	char line[600];
	long long usec = 0;
	const char *p = strchr(rec, ',');

	if (!msg)
		return;
	if (p && (p = strchr(p + 1, ',')))
		usec = strtoll(p + 1, NULL, 10);
	msg++;
	if (!npu_line(msg))
		return;
	snprintf(line, sizeof(line), "[%5lld.%06lld] %.*s\n", usec / 1000000, usec % 1000000,
		 (int)strcspn(msg, "\n"), msg);
	append(out, size, line);
}

void rb_selftest_kernel_log(struct rb_selftest *st, const char *emulated)
{
	char *out = st->failure.kernel_log, rec[2048];
	size_t size = sizeof(st->failure.kernel_log);
	ssize_t n;

	if (emulated && *emulated) {
		snprintf(out, size, "(the emulated kernel's log)\n%s", emulated);
		return;
	}
	if (out[0])
		return; /* kept from the rung that failed */
	if (st->kmsg_fd < 0 && strcmp(st->mode, "emulator") == 0) {
		snprintf(out, size, "(the emulator: what its kernel said is in the diagnosis)\n");
		return;
	}
	if (st->kmsg_fd < 0) {
		snprintf(out, size, "%s\n", st->kmsg_note);
		return;
	}
	while ((n = read(st->kmsg_fd, rec, sizeof(rec) - 1)) > 0 || (n < 0 && errno == EPIPE)) {
		if (n <= 0)
			continue; /* EPIPE: records were overwritten; go on */
		rec[n] = '\0';
		add_record(out, size, rec);
	}
	if (!out[0])
		snprintf(out, size,
			 "(no NPU, IOMMU or DRM lines in the kernel log since the "
			 "selftest started)\n");
}

/* ---- the device ---- */

static bool emulated(const char *device)
{
	return strncmp(device, "sim", 3) == 0;
}

/* Which NPU the device names, with discovery's checks of a board's node. */
static int find_node(struct rb_selftest *st)
{
	struct rb_npu_node node;
	const char *want = st->ops == &rb_engine_rocket ? "rocket" : "rknpu";
	const char *path = st->opts.engine.path;
	int err = path ? rb_discover_check(path, want, &node) : rb_discover_driver(want, &node);

	snprintf(st->driver, sizeof(st->driver), "%s", want);
	if (err < 0)
		return err;
	snprintf(st->node, sizeof(st->node), "%s", node.path);
	st->opts.engine.path = st->node; /* the caller's text or discovery's node before */
	return 0;
}

static int node_failure(struct rb_selftest *st, int err)
{
	char why[RB_SELFTEST_TEXT];
	const char *cause = "no-device", *hint;

	snprintf(why, sizeof(why), "%s", rb_last_error());
	if (err == -EACCES) {
		cause = "permission";
		hint = "join the node's group (sudo usermod -aG render,video \"$USER\", then log "
		       "in again) or add the udev rule of docs/boards.md section 3";
	} else if (err == -EPROTO) {
		cause = "driver-version";
		hint = "send 'rknn-bench bugreport' output: the driver version is one rknn-bench "
		       "was not written against (docs/boards.md section 2 lists the known ones)";
	} else if (err == -EBUSY) {
		cause = "busy";
		hint = "another process holds the NPU: stop it (fuser -v the node) and run again";
	} else {
		hint =
		    "check the kernel has the rknpu or rocket driver (docs/boards.md section 2), "
		    "or give the node with --device rknpu:/dev/dri/cardN";
	}
	return rb_selftest_fail(st, 0, err, cause, hint, "%s", why);
}

/* The vendor driver's ABI rknn-bench is written against is 0.9.x (npu-facts §d.1; the
 * emulator is 0.9.8): another version may move a field, so the ladder stops and asks
 * for a report rather than guess. */
static int check_version(struct rb_selftest *st)
{
	const struct rb_npu_info *n = &st->npu;

	if (strcmp(st->driver, "rknpu") != 0 || (n->drm_major == 0 && n->drm_minor == 9))
		return 0;
	return rb_selftest_fail(st, 0, -EPROTO, "driver-version",
				"send 'rknn-bench bugreport' output with the kernel (uname -r) and "
				"image: rknn-bench knows the rknpu 0.9.x ABI (docs/boards.md "
				"section 2)",
				"unknown driver version: %s reports %d.%d.%d (%s), rknn-bench was "
				"written against rknpu 0.9.x",
				n->drm_name, n->drm_major, n->drm_minor, n->drm_patch, n->drm_date);
}

/* ---- memory and other holders ---- */

static int64_t meminfo_kb(const char *proc, const char *key)
{
	char path[512], line[256];
	size_t klen = strlen(key);
	int64_t v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/meminfo", proc);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (v < 0 && fgets(line, sizeof(line), f))
		if (strncmp(line, key, klen) == 0 && line[klen] == ':')
			v = strtoll(line + klen + 1, NULL, 10);
	fclose(f);
	return v;
}

static void process_name(const char *proc, const char *pid, char *buf, size_t size)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/comm", proc, pid);
	f = fopen(path, "r");
	if (!f || !fgets(buf, (int)size, f))
		snprintf(buf, size, "?");
	if (f)
		fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
}

/* Whether process `pid` has `node` open (readlink of its fds). */
static bool holds(const char *proc, const char *pid, const char *node)
{
	char dir[512], link[768], target[512];
	struct dirent *e;
	bool found = false;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/%s/fd", proc, pid);
	d = opendir(dir);
	if (!d)
		return false;
	while (!found && (e = readdir(d))) {
		ssize_t n;

		snprintf(link, sizeof(link), "%s/%s", dir, e->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		found = strcmp(target, node) == 0;
	}
	closedir(d);
	return found;
}

/* Other processes with the node open: the NPU is shared with them (their jobs take the
 * cores between ours). Processes of other users are not readable without root. */
static void find_holders(struct rb_selftest *st)
{
	const char *proc = st->opts.proc_root ? st->opts.proc_root : "/proc";
	char self[32], name[64], item[400];
	struct dirent *e;
	DIR *d = opendir(proc);

	snprintf(self, sizeof(self), "%ld", (long)getpid());
	while (d && (e = readdir(d))) {
		if (!isdigit((unsigned char)e->d_name[0]) || strcmp(e->d_name, self) == 0)
			continue;
		if (!holds(proc, e->d_name, st->node))
			continue;
		process_name(proc, e->d_name, name, sizeof(name));
		snprintf(item, sizeof(item), "%s%s (%s)", st->holders[0] ? ", " : "", e->d_name,
			 name);
		append(st->holders, sizeof(st->holders), item);
	}
	if (d)
		closedir(d);
}

/* ---- the rung ---- */

static const char *info_device(const struct rb_selftest *st)
{
	if (emulated(st->opts.device) || st->ops == &rb_engine_sim ||
	    st->ops == &rb_engine_sim_rocket)
		return st->ops == &rb_engine_sim_rocket ? "sim:rocket" : "sim";
	return st->driver;
}

/* The clocks and governors numbers depend on, as info reads them. */
static void note_clocks(struct rb_selftest *st, struct rb_selftest_rung *r)
{
	const struct rb_host_info *h = &st->host;
	char cpu[200] = "";

	for (size_t i = 0; i < h->n_policies; i++) {
		char item[96];

		snprintf(item, sizeof(item), "%s%s %s %" PRId64 " kHz", i ? ", " : "",
			 h->policies[i].name, h->policies[i].governor, h->policies[i].cur_khz);
		append(cpu, sizeof(cpu), item);
	}
	rb_selftest_note(r, "CPU: %s; DDR: %s at %" PRId64 " Hz; NPU devfreq: %s at %" PRId64 " Hz",
			 cpu[0] ? cpu : "no cpufreq", h->ddr.governor, h->ddr.cur_hz,
			 h->npu.governor, h->npu.cur_hz);
}

static void note_system(struct rb_selftest *st, struct rb_selftest_rung *r)
{
	const struct rb_npu_info *n = &st->npu;

	rb_selftest_note(r, "%s: %s %d.%d.%d (%s), node %s, %d cores", st->mode, n->drm_name,
			 n->drm_major, n->drm_minor, n->drm_patch, n->drm_date, st->node, n->cores);
	if (n->drv_version >= 0)
		rb_selftest_note(r,
				 "rknpu driver version %" PRId64 ", IOMMU %s, NPU %" PRId64 " Hz",
				 n->drv_version,
				 n->iommu_en == 1   ? "on"
				 : n->iommu_en == 0 ? "off"
						    : "unknown",
				 n->freq_hz);
	if (st->cma_total_kb >= 0)
		rb_selftest_note(r,
				 "kernel %s; memory available %" PRId64 " kB, CMA %" PRId64
				 " of %" PRId64 " kB free",
				 st->host.ctx.kernel, st->mem_available_kb, st->cma_free_kb,
				 st->cma_total_kb);
	else
		rb_selftest_note(r, "kernel %s; memory available %" PRId64 " kB, no CMA reported",
				 st->host.ctx.kernel, st->mem_available_kb);
	note_clocks(st, r);
	for (size_t i = 0; i < st->warnings.n; i++)
		rb_selftest_note(r, "setting: %s", st->warnings.text[i]);
	if (n->iommu_en == 0)
		rb_selftest_note(r,
				 "the IOMMU is off: buffers must then be contiguous (CMA); "
				 "rknn-bench was written for the IOMMU (docs/boards.md section 2)");
}

static int check_device(struct rb_selftest *st)
{
	int err;

	if (st->ops == &rb_engine_sim || st->ops == &rb_engine_sim_rocket) {
		snprintf(st->driver, sizeof(st->driver), "%s",
			 st->ops == &rb_engine_sim ? "rknpu" : "rocket");
		snprintf(st->node, sizeof(st->node), "(emulator)");
		snprintf(st->mode, sizeof(st->mode), "emulator");
		return 0;
	}
	if (st->ops == &rb_engine_cpu)
		return rb_selftest_fail(st, 0, -EINVAL, "no-device", NULL,
					"--device cpu is not an NPU: use auto, sim, sim:rocket, "
					"rknpu[:PATH] or rocket[:PATH]");
	snprintf(st->mode, sizeof(st->mode), "board");
	err = find_node(st);
	return err < 0 ? node_failure(st, err) : 0;
}

int rb_selftest_system(struct rb_selftest *st)
{
	struct rb_selftest_rung *r = &st->rungs[0];
	const char *proc = st->opts.proc_root ? st->opts.proc_root : "/proc";
	int err;

	st->ops = rb_engine_find(st->opts.device, &st->opts.engine);
	if (!st->ops)
		return rb_selftest_fail(st, 0, -EINVAL, "no-device", NULL, "%s", rb_last_error());
	if (st->opts.engine.note)
		rb_selftest_note(r, "%s", st->opts.engine.note);
	err = check_device(st);
	if (err)
		return err;
	err = rb_npu_info_read(&st->npu, info_device(st), st->npu.emulated ? NULL : st->node,
			       &st->opts.engine.sim);
	if (err < 0)
		return node_failure(st, err);
	st->npu_read = true;
	err = check_version(st);
	if (err)
		return err;
	rb_host_info_collect(&st->host, st->opts.sysfs_root);
	rb_info_check(&st->host, &st->npu, &st->warnings);
	st->cma_total_kb = meminfo_kb(proc, "CmaTotal");
	st->cma_free_kb = meminfo_kb(proc, "CmaFree");
	st->mem_available_kb = meminfo_kb(proc, "MemAvailable");
	note_system(st, r);
	if (strcmp(st->mode, "board") != 0)
		return 0;
	find_holders(st);
	if (st->holders[0] && !st->opts.allow_shared)
		return rb_selftest_fail(st, 0, -EBUSY, "busy",
					"stop them, or run with --allow-shared (their jobs then "
					"take the cores between ours, and times are not trusted)",
					"other processes hold the NPU node %s: %s", st->node,
					st->holders);
	if (st->holders[0])
		rb_selftest_note(r, "shared with %s", st->holders);
	return 0;
}
