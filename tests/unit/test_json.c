/* The one strict JSON loader (core/json.h): where errors are, what follows a value,
 * empty and binary input, and the quoting of names in messages. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "core/error.h"
#include "core/json.h"

static void expect_error(const char *text, size_t len, const char *message)
{
	cJSON *root = (cJSON *)1;

	len = len ? len : strlen(text);
	assert_int_equal(rb_json_load(text, len, "f.json", "an object", &root), -EINVAL);
	assert_null(root);
	if (strcmp(rb_last_error(), message) != 0)
		fail_msg("got '%s', wanted '%s'", rb_last_error(), message);
}

static void test_load(void **state)
{
	static const char text[] = "\xef\xbb\xbf {\"a\": [1, 2]}\n\n";
	cJSON *root;

	(void)state;
	assert_int_equal(rb_json_load(text, strlen(text), "f.json", NULL, &root), 0);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(root, "a")), 2);
	cJSON_Delete(root);
}

static void test_positions(void **state)
{
	(void)state;
	expect_error("{\"a\": 1,, }", 0, "f.json: invalid JSON at line 1, column 10 near \" }\"");
	expect_error("{\n  \"a\": 1,\n  \"b\" 2\n}", 0,
		     "f.json: invalid JSON at line 3, column 7 near \"2\"");
	expect_error("{\"a\": [1,\n 2", 0,
		     "f.json: invalid JSON at line 2, column 3: unexpected end of file (is it "
		     "truncated?)");
	expect_error("{\"a\": \"b", 0,
		     "f.json: invalid JSON at line 1, column 7: string not closed before the end "
		     "of the file");
	expect_error("{} {}", 0,
		     "f.json: extra text after the JSON value at line 1, column 4: \"{}\"");
	expect_error(" \n\t", 0, "f.json: file is empty: expected an object");
	expect_error("{}\0", 3, "f.json: NUL byte at line 1, column 3: not a JSON text file");
}

static void test_quote(void **state)
{
	char buf[16];

	(void)state;
	assert_string_equal(rb_json_quote(buf, sizeof(buf), "a\"b\n\x1b[", 6, '\''),
			    "'a\"b\\n\\x1b['");
	assert_string_equal(rb_json_quote(buf, sizeof(buf), "abcdefghijklmnop", 16, '"'),
			    "\"abcdefghij...\"");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_load),
	    cmocka_unit_test(test_positions),
	    cmocka_unit_test(test_quote),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
