/* Tests of device discovery (src/dev/discover.c) without any DRM device: a device root
 * in a temporary directory holding ordinary files where nodes would be. The fake node
 * (tests/e2e/fakenode.sh) covers the DRM side: a node that answers DRM_IOCTL_VERSION. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "dev/discover.h"

static char root[64];

static void touch(const char *rel)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
}

static int setup(void **state)
{
	char dir[128];

	(void)state;
	snprintf(root, sizeof(root), "/tmp/rb-discover-XXXXXX");
	if (!mkdtemp(root))
		return -1;
	snprintf(dir, sizeof(dir), "%s/dri", root);
	mkdir(dir, 0755);
	setenv("RKNN_BENCH_DEVROOT", root, 1);
	return 0;
}

static int teardown(void **state)
{
	static const char *const files[] = {"dri/card0", "dri/renderD128", "dri/by-path", "dri"};
	char path[256];

	(void)state;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", root, files[i]);
		remove(path);
	}
	unsetenv("RKNN_BENCH_DEVROOT");
	return rmdir(root);
}

static void test_devroot(void **state)
{
	(void)state;
	assert_string_equal(rb_discover_devroot(), root);
	unsetenv("RKNN_BENCH_DEVROOT");
	assert_string_equal(rb_discover_devroot(), "/dev");
	setenv("RKNN_BENCH_DEVROOT", root, 1);
}

/* Nodes that are not DRM devices are skipped: nothing found, said plainly. */
static void test_no_npu(void **state)
{
	struct rb_npu_node node;

	(void)state;
	touch("dri/card0");
	touch("dri/renderD128");
	touch("dri/by-path"); /* not a node name: never opened */
	assert_int_equal(rb_discover_npu(&node), -ENOENT);
	assert_non_null(strstr(rb_last_error(), "no NPU device node found"));
	assert_non_null(strstr(rb_last_error(), "--device sim"));
	assert_int_equal(rb_discover_driver("rocket", &node), -ENOENT);
	assert_non_null(strstr(rb_last_error(), "CONFIG_DRM_ACCEL_ROCKET"));
	assert_int_equal(rb_discover_driver("amdgpu", &node), -EINVAL);
}

static void test_check_not_drm(void **state)
{
	char path[256];

	(void)state;
	touch("dri/card0");
	snprintf(path, sizeof(path), "%s/dri/card0", root);
	assert_int_equal(rb_discover_check(path, "rknpu", NULL), -ENODEV);
	assert_non_null(strstr(rb_last_error(), "is not a DRM device node"));
}

static void test_check_missing(void **state)
{
	(void)state;
	assert_int_equal(rb_discover_check("/nonexistent/accel0", "rocket", NULL), -ENOENT);
	assert_non_null(strstr(rb_last_error(), "is the rocket kernel module loaded"));
	assert_int_equal(rb_discover_check("/nonexistent/card1", "rknpu", NULL), -ENOENT);
	assert_non_null(strstr(rb_last_error(), "modprobe rknpu"));
}

static void test_driver_names(void **state)
{
	(void)state;
	assert_string_equal(rb_npu_driver_name(RB_DRIVER_RKNPU), "rknpu");
	assert_string_equal(rb_npu_driver_name(RB_DRIVER_ROCKET), "rocket");
	assert_string_equal(rb_npu_driver_name(RB_DRIVER_NONE), "none");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_devroot),       cmocka_unit_test(test_no_npu),
	    cmocka_unit_test(test_check_not_drm), cmocka_unit_test(test_check_missing),
	    cmocka_unit_test(test_driver_names),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
