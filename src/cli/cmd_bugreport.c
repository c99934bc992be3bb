/* rknn-bench bugreport: one archive with what a maintainer needs to see why a board
 * failed: info, the last selftest report, its failing programs as files `dump` reads,
 * the kernel log excerpt, versions and the hardware profile, and a README. Host and
 * user names are left out unless asked for. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pwd.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "core/error.h"
#include "core/fileio.h"
#include "core/json.h"
#include "core/version.h"
#include "dev/info.h"
#include "hw/soc.h"
#include "run/engine.h"
#include "selftest/bundle.h"

extern char **environ;

static const char bugreport_usage[] =
    "usage: rknn-bench bugreport -o FILE.tar.gz [options]\n"
    "\n"
    "Bundle what a maintainer needs to see why rknn-bench failed on a board: info, the\n"
    "last selftest report, its failing programs (files 'rknn-bench dump' decodes), the\n"
    "kernel log excerpt, versions and the hardware profile, with a README saying what\n"
    "each file is. Host and user names are replaced by (host) and (user).\n"
    "\n"
    "options:\n"
    "  -o FILE            the archive: FILE.tar.gz (gzip -n) or FILE.tar (uncompressed)\n"
    "      --report FILE  the selftest report (default: the last one selftest kept)\n"
    "  -d, --device D     the device info reads (default: the report's)\n"
    "      --soc FILE     the hardware profile to include (default: the built-in one)\n"
    "      --with-names   keep host and user names\n"
    "  -h, --help         show this help\n"
    "\n"
    "Send the archive with an issue on the project's tracker (docs/boards.md).\n"
    "Exit codes: 0 written, 2 usage error or unreadable report.\n";

enum { OPT_REPORT = 256, OPT_SOC, OPT_WITH_NAMES };

static const struct option bugreport_options[] = {
    {"help", no_argument, NULL, 'h'},
    {"output", required_argument, NULL, 'o'},
    {"device", required_argument, NULL, 'd'},
    {"report", required_argument, NULL, OPT_REPORT},
    {"soc", required_argument, NULL, OPT_SOC},
    {"with-names", no_argument, NULL, OPT_WITH_NAMES},
    {NULL, 0, NULL, 0},
};

struct bug_opts {
	const char *out, *report, *device, *soc;
	bool with_names;
	char last[600];
};

static const char readme[] =
    "rknn-bench bug report\n"
    "=====================\n"
    "\n"
    "Made by 'rknn-bench bugreport'. Send it with an issue on the project's tracker and say\n"
    "in words: the board and its vendor, the OS image, how the clocks were pinned, and\n"
    "what you ran. Host and user names are replaced by (host) and (user) unless\n"
    "--with-names was given.\n"
    "\n"
    "README.txt          this file\n"
    "versions.txt        rknn-bench version and commit, kernel, NPU driver, hardware profile\n"
    "info.json           'rknn-bench info --format json': the NPU driver and the host\n"
    "                    settings (governors, DDR and NPU clocks) with their warnings\n"
    "selftest.json       the last 'rknn-bench selftest' report: every rung, its cases and\n"
    "                    notes, the failure (rung, cause, diagnosis, smallest failing case),\n"
    "                    and the timing runs as a run report ('rknn-bench calibrate' reads it)\n"
    "programs/coreN.hex  the register programs of the smallest failing case, one per core,\n"
    "                    one 64-bit word a line: 'rknn-bench dump programs/core0.hex'\n"
    "                    decodes them (buffer addresses are placeholders, named in the\n"
    "                    first line; every other field is what ran)\n"
    "kernel-log.txt      the kernel's NPU, IOMMU and DRM lines since the selftest started\n"
    "                    (or why they could not be read)\n"
    "profile.json        the hardware profile the emulator's model used\n";

static int parse_args(struct bug_opts *o, int argc, char **argv)
{
	int c;

	while ((c = getopt_long(argc, argv, "ho:d:", bugreport_options, NULL)) != -1) {
		if (c == 'h') {
			fputs(bugreport_usage, stdout);
			return 100;
		} else if (c == 'o') {
			o->out = optarg;
		} else if (c == 'd') {
			o->device = optarg;
		} else if (c == OPT_REPORT) {
			o->report = optarg;
		} else if (c == OPT_SOC) {
			o->soc = optarg;
		} else if (c == OPT_WITH_NAMES) {
			o->with_names = true;
		} else {
			fputs("see 'rknn-bench bugreport --help'\n", stderr);
			return RB_EXIT_USAGE;
		}
	}
	if (optind < argc)
		return cli_fail(RB_EXIT_USAGE, "bugreport takes no arguments ('%s')", argv[optind]);
	if (!o->out)
		return cli_fail(RB_EXIT_USAGE, "bugreport needs -o FILE.tar.gz");
	if (cli_check_output("-o", o->out, NULL, 0) < 0)
		return RB_EXIT_USAGE;
	if (!o->report && cli_state_path("selftest-last.json", o->last, sizeof(o->last)) == 0)
		o->report = o->last;
	return 0;
}

/* ---- the files ---- */

static int add_json(struct rb_bundle *b, const char *name, const cJSON *doc)
{
	char *text = cJSON_Print(doc);
	int err;

	if (!text)
		return -ENOMEM;
	err = rb_bundle_add(b, name, text, strlen(text));
	free(text);
	return err;
}

/* info.json for device (the report's by default). */
static int add_info(struct rb_bundle *b, const char *device)
{
	struct rb_engine_opts opts;
	const struct rb_engine_ops *ops;
	struct rb_npu_info npu;
	struct rb_host_info host;
	struct rb_info_warnings w;
	cJSON *doc = cJSON_CreateObject(), *warnings;
	int err;

	rb_engine_opts_init(&opts);
	ops = rb_engine_find(device, &opts);
	cJSON_AddStringToObject(doc, "device", device);
	err = ops ? rb_npu_info_read(&npu, ops->name, opts.path, &opts.sim) : -EINVAL;
	if (err)
		cJSON_AddStringToObject(doc, "npu_error", rb_last_error());
	else
		cJSON_AddItemToObject(doc, "npu", rb_npu_info_json(&npu, NULL));
	rb_host_info_collect(&host, getenv("RKNN_BENCH_SYSFS"));
	cJSON_AddItemToObject(doc, "host", rb_host_info_json(&host));
	rb_info_check(&host, err ? NULL : &npu, &w);
	warnings = cJSON_AddArrayToObject(doc, "warnings");
	for (size_t i = 0; i < w.n; i++)
		cJSON_AddItemToArray(warnings, cJSON_CreateString(w.text[i]));
	err = add_json(b, "info.json", doc);
	cJSON_Delete(doc);
	return err;
}

static int add_versions(struct rb_bundle *b, const cJSON *report, const char *profile)
{
	const cJSON *ctx = cJSON_GetObjectItemCaseSensitive(report, "context");
	const cJSON *kernel = cJSON_GetObjectItemCaseSensitive(ctx, "kernel");
	const cJSON *driver = cJSON_GetObjectItemCaseSensitive(ctx, "driver");
	struct rb_context now;
	char text[1024];

	rb_context_collect(&now);
	snprintf(text, sizeof(text),
		 "rknn-bench %s (commit %s)\n"
		 "kernel %s\n"
		 "selftest report: kernel %s, NPU driver %s\n"
		 "hardware profile: %s\n"
		 "board: %s\n",
		 now.tool_version, now.tool_commit, now.kernel,
		 cJSON_IsString(kernel) ? kernel->valuestring : "(no report)",
		 cJSON_IsString(driver) ? driver->valuestring : "(no report)", profile,
		 now.board[0] ? now.board : "(no device tree model)");
	return rb_bundle_add(b, "versions.txt", text, strlen(text));
}

static int add_profile(struct rb_bundle *b, const char *soc, char *label, size_t size)
{
	char *data = NULL;
	size_t len = 0;
	int err;

	if (!soc) {
		const char *text = rb_soc_default_text(&len);

		snprintf(label, size, "built-in configs/soc/rk3588.json");
		return rb_bundle_add(b, "profile.json", text, len);
	}
	err = rb_file_read(soc, &data, &len);
	if (err)
		return rb_set_error(err, "--soc '%s': %s", soc, strerror(-err));
	snprintf(label, size, "%s", soc);
	err = rb_bundle_add(b, "profile.json", data, len);
	free(data);
	return err;
}

/* The report's text and document; a missing last report is noted, not an error. */
static int add_report(struct rb_bundle *b, const struct bug_opts *o, cJSON **doc)
{
	char *data = NULL;
	size_t len = 0;
	int err = o->report ? rb_file_read(o->report, &data, &len) : -ENOENT;

	*doc = NULL;
	if (err && o->report != o->last)
		return rb_set_error(err, "--report '%s': %s", o->report, strerror(-err));
	if (err) {
		static const char none[] =
		    "no selftest report was found: run 'rknn-bench selftest' "
		    "first\n";
		rb_warn("no selftest report (%s): run 'rknn-bench selftest' first",
			o->report ? o->report : "no state directory");
		return rb_bundle_add(b, "selftest-missing.txt", none, sizeof(none) - 1);
	}
	err = rb_json_load(data, len, o->report, NULL, doc);
	if (!err)
		err = rb_bundle_add(b, "selftest.json", data, len);
	free(data);
	return err;
}

static const char *report_device(const cJSON *doc)
{
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(doc, "selftest");
	const cJSON *d = cJSON_GetObjectItemCaseSensitive(st, "device");

	return cJSON_IsString(d) ? d->valuestring : "auto";
}

static int scrub_names(struct rb_bundle *b)
{
	char host[256] = "";
	const struct passwd *pw = getpwuid(getuid());
	const char *user = getenv("USER");
	int err = 0;

	if (gethostname(host, sizeof(host) - 1) == 0 && host[0])
		err = rb_bundle_scrub(b, host, "(host)");
	if (!err && pw && pw->pw_name)
		err = rb_bundle_scrub(b, pw->pw_name, "(user)");
	if (!err && user && (!pw || strcmp(user, pw->pw_name) != 0))
		err = rb_bundle_scrub(b, user, "(user)");
	return err;
}

static int gather(struct rb_bundle *b, const struct bug_opts *o)
{
	cJSON *doc = NULL;
	char profile[512];
	int err = rb_bundle_add(b, "README.txt", readme, sizeof(readme) - 1);

	if (!err)
		err = add_report(b, o, &doc);
	if (!err)
		err = add_profile(b, o->soc, profile, sizeof(profile));
	if (!err)
		err = add_versions(b, doc, profile);
	if (!err)
		err = add_info(b, o->device ? o->device : report_device(doc));
	if (!err && doc)
		err = rb_bundle_add_report_files(b, doc) < 0 ? -ENOMEM : 0;
	if (!err && !o->with_names)
		err = scrub_names(b);
	cJSON_Delete(doc);
	return err;
}

/* ---- writing: ustar, through gzip -n for .tar.gz ---- */

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n >= t && strcmp(s + n - t, tail) == 0;
}

static int write_tar(FILE *f, void *ctx)
{
	return rb_bundle_write_tar(ctx, f, time(NULL));
}

/* gzip -n -c TAR > OUT; 0 or -errno. */
static int gzip_file(const char *tar, const char *out)
{
	char *argv[] = {(char *)"gzip", (char *)"-n", (char *)"-c", (char *)tar, NULL};
	posix_spawn_file_actions_t fa;
	int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644), status = 0, err;
	pid_t pid;

	if (fd < 0)
		return -errno;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fd, STDOUT_FILENO);
	err = posix_spawnp(&pid, "gzip", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fd);
	if (err == 0 && waitpid(pid, &status, 0) < 0)
		err = errno;
	if (err == 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
		err = ENOEXEC;
	if (err)
		unlink(out);
	return -err;
}

static int write_bundle(const struct rb_bundle *b, const char *out)
{
	char tmp[700];
	int err;

	if (!ends_with(out, ".gz") && !ends_with(out, ".tgz")) {
		err = rb_file_write_atomic(out, write_tar, (void *)b);
		return err < 0
			   ? cli_fail(RB_EXIT_USAGE, "cannot write '%s': %s", out, rb_last_error())
			   : 0;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp-tar", out);
	err = rb_file_write_atomic(tmp, write_tar, (void *)b);
	if (err < 0)
		return cli_fail(RB_EXIT_USAGE, "cannot write '%s': %s", tmp, rb_last_error());
	err = gzip_file(tmp, out);
	if (err) {
		unlink(tmp);
		return cli_fail(RB_EXIT_USAGE,
				"cannot compress '%s' with gzip (%s): give -o FILE.tar for an "
				"uncompressed archive",
				out, strerror(-err));
	}
	unlink(tmp);
	return 0;
}

int cmd_bugreport(int argc, char **argv)
{
	struct bug_opts o;
	struct rb_bundle b = {0};
	int ret;

	memset(&o, 0, sizeof(o));
	ret = parse_args(&o, argc, argv);
	if (ret)
		return ret == 100 ? RB_EXIT_OK : ret;
	if (gather(&b, &o) < 0) {
		rb_bundle_release(&b);
		return cli_fail(RB_EXIT_USAGE, "%s", rb_last_error());
	}
	ret = write_bundle(&b, o.out);
	if (!ret && !cli_quiet)
		fprintf(stderr, "wrote %s: %zu files; send it with an issue (docs/boards.md)\n",
			o.out, b.n);
	rb_bundle_release(&b);
	return ret;
}
