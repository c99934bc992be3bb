/* rb_set_error keeps the cause when a caller wraps it: the message being formatted may
 * read rb_last_error() itself. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/error.h"
#include "rknn_bench/matmul.h"

static void test_chain(void **state)
{
	(void)state;
	assert_int_equal(rb_set_error(-ENOENT, "cannot open '%s'", "a.json"), -ENOENT);
	assert_int_equal(rb_set_error(-EINVAL, "shape 3: %s", rb_last_error()), -EINVAL);
	assert_int_equal(
	    rb_set_error(-EINVAL, "%s (and again: %s)", rb_last_error(), rb_last_error()), -EINVAL);
	assert_string_equal(
	    rb_last_error(),
	    "shape 3: cannot open 'a.json' (and again: shape 3: cannot open 'a.json')");
}

/* Through the executor, which wraps the planner's message: both parts arrive once. */
static void test_wrapped_cause(void **state)
{
	struct rb_matmul_device *dev;
	struct rb_matmul *mm = NULL;
	struct rb_matmul_desc desc = {.shape = {1, 64, 64, RB_DTYPE_FP16}, .config = "mask=x"};
	const char *msg;

	(void)state;
	assert_int_equal(rb_matmul_device_open(&dev, "sim"), 0);
	assert_int_equal(rb_matmul_create(&mm, dev, &desc), -EINVAL);
	msg = rb_last_error();
	assert_non_null(strstr(msg, "config 'mask=x': "));
	assert_true(strlen(msg) > strlen("config 'mask=x': "));
	assert_null(strstr(msg + 1, "config 'mask=x'")); /* not twice */
	rb_matmul_device_close(dev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_chain),
	    cmocka_unit_test(test_wrapped_cause),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
