/* Shape lists, the shapes file parser and MxKxN specs. Run from the top of the tree
 * (the shipped configs are loaded by relative path). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/error.h"
#include "rknn_bench/shape.h"

#define LABEL "shapes.json"

/* clang-format off */
/* One pair with the dimensions and the name (a JSON value) as text. */
#define PAIR(m, k, k1, n, name)                                                    \
	"{\"src0\": {\"row\": " m ", \"col\": " k "}, \"src1\": {\"row\": " k1 \
	", \"col\": " n "}, \"name\": " name "}"
#define GOOD PAIR("1", "2048", "2048", "8192", "\"ffn_up-0\"")
#define DOC(pairs) "{\"pairs\": [" pairs "]}"

static const char dtype_doc[] = "{\"dtype\": \"int8\", \"pairs\": ["
	PAIR("1", "2", "2", "3", "\"a\"") ","
	"{\"src0\": {\"row\": 1, \"col\": 2}, \"src1\": {\"row\": 2, \"col\": 3},"
	" \"name\": \"b\", \"dtype\": \"fp16\"}]}";

static const char merge_doc[] = DOC(PAIR("1", "2", "2", "3", "\"c\"") ","
	PAIR("4", "5", "5", "6", "\"a\"") ","
	PAIR("1", "2", "2", "3", "\"b\"") ","
	PAIR("1", "2", "2", "3", "\"c\"") ","
	PAIR("4", "5", "5", "6", "\"z\""));

static const char superset_doc[] = "{\"schema\": \"rknn-bench/1\", \"comment\": [1, {}],"
	" \"pairs\": [{\"src0\": {\"row\": 1, \"col\": 2, \"ld\": 9},"
	" \"src1\": {\"row\": 2, \"col\": 3}, \"name\": \"a\","
	" \"tuned\": {\"tile\": [32, 64]}}], \"results\": null}";

static const char append_doc[] = DOC(PAIR("1", "2", "2", "3", "\"b\"") ","
	PAIR("1", "2", "2", "3", "\"a\"") ","
	PAIR("7", "8", "8", "9", "\"c\""));

static const char conflict_doc[] = DOC(PAIR("1", "1", "1", "1", "\"d\"") ","
	PAIR("7", "8", "8", "4", "\"c\""));
/* clang-format on */

static int load(struct rb_shape_list *l, const char *json)
{
	return rb_shape_list_load_string(l, json, strlen(json), LABEL);
}

/* The whole list as one line, to compare lists before and after a failed call. */
static const char *dump(const struct rb_shape_list *l)
{
	static char buf[8192];
	size_t o = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < l->count; i++) {
		const struct rb_shape_entry *e = &l->entries[i];

		o += (size_t)snprintf(buf + o, sizeof(buf) - o,
				      "%s%lldx%lldx%lld %s:", i ? "; " : "", (long long)e->shape.m,
				      (long long)e->shape.k, (long long)e->shape.n,
				      rb_dtype_name(e->shape.dtype));
		for (size_t j = 0; j < e->n_names && o < sizeof(buf); j++)
			o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s%s", j ? "," : " ",
					      e->names[j]);
		assert_true(o < sizeof(buf));
	}
	return buf;
}

static void test_seed_format(void **state)
{
	struct rb_shape_list l;
	(void)state;

	rb_shape_list_init(&l);
	assert_int_equal(load(&l, "{\n    \"pairs\": [\n        " GOOD "\n     ]\n}\n"), 0);
	assert_int_equal(l.count, 1);
	assert_int_equal(l.entries[0].shape.m, 1);
	assert_int_equal(l.entries[0].shape.k, 2048);
	assert_int_equal(l.entries[0].shape.n, 8192);
	assert_int_equal(l.entries[0].shape.dtype, RB_DTYPE_FP16);
	assert_int_equal(l.entries[0].n_names, 1);
	assert_string_equal(l.entries[0].names[0], "ffn_up-0");
	rb_shape_list_release(&l);
	assert_null(l.entries);
	assert_int_equal(l.count, 0);
	rb_shape_list_release(&l); /* released twice is harmless */
}

static void test_dtype_top_and_pair(void **state)
{
	struct rb_shape_list l;
	(void)state;

	rb_shape_list_init(&l);
	assert_int_equal(load(&l, dtype_doc), 0);
	assert_string_equal(dump(&l), "1x2x3 int8: a; 1x2x3 fp16: b");
	rb_shape_list_release(&l);
}

static void test_merge_and_order(void **state)
{
	struct rb_shape_list l;
	(void)state;

	rb_shape_list_init(&l);
	assert_int_equal(load(&l, merge_doc), 0);
	assert_string_equal(dump(&l), "1x2x3 fp16: c,b; 4x5x6 fp16: a,z");
	rb_shape_list_release(&l);
}

/* The tuned JSON and future formats add keys; readers ignore what they do not know. */
static void test_unknown_keys_ignored(void **state)
{
	struct rb_shape_list l;
	(void)state;

	rb_shape_list_init(&l);
	assert_int_equal(load(&l, superset_doc), 0);
	assert_string_equal(dump(&l), "1x2x3 fp16: a");
	rb_shape_list_release(&l);
}

static void test_appends_to_list(void **state)
{
	struct rb_shape_list l;
	(void)state;

	rb_shape_list_init(&l);
	assert_int_equal(load(&l, DOC(PAIR("1", "2", "2", "3", "\"a\""))), 0);
	assert_int_equal(load(&l, append_doc), 0);
	assert_string_equal(dump(&l), "1x2x3 fp16: a,b; 7x8x9 fp16: c");
	assert_int_equal(load(&l, conflict_doc), -EINVAL);
	assert_string_equal(rb_last_error(),
			    LABEL ": pairs[1].name \"c\" was already loaded with shape 7x8x9 fp16,"
				  " now 7x8x4 fp16");
	assert_string_equal(dump(&l), "1x2x3 fp16: a,b; 7x8x9 fp16: c");
	rb_shape_list_release(&l);
}

static void test_numbers_accepted(void **state)
{
	struct rb_shape_list l;
	(void)state;

	rb_shape_list_init(&l);
	/* JSON numbers: 2.0 and 1e3 are integers; 2^31 is the inclusive limit */
	assert_int_equal(load(&l, DOC(PAIR("2.0", "1e3", "1000", "2147483648", "\"a\""))), 0);
	assert_string_equal(dump(&l), "2x1000x2147483648 fp16: a");
	rb_shape_list_release(&l);
}

/* Only len bytes are read: the buffer need not be terminated. */
static void test_length_respected(void **state)
{
	static const char text[] = DOC(GOOD) "garbage";
	struct rb_shape_list l;
	char *buf = malloc(sizeof(text) - 1);
	(void)state;

	assert_non_null(buf);
	memcpy(buf, text, sizeof(text) - 1);
	rb_shape_list_init(&l);
	assert_int_equal(rb_shape_list_load_string(&l, buf, strlen(DOC(GOOD)), LABEL), 0);
	assert_int_equal(l.count, 1);
	assert_int_equal(rb_shape_list_load_string(&l, buf, sizeof(text) - 1, LABEL), -EINVAL);
	free(buf);
	rb_shape_list_release(&l);
}

static void test_bom_and_space(void **state)
{
	struct rb_shape_list l;
	(void)state;

	rb_shape_list_init(&l);
	assert_int_equal(load(&l, "\xef\xbb\xbf \r\n" DOC(GOOD) " \n\t\r\n"), 0);
	assert_int_equal(l.count, 1);
	rb_shape_list_release(&l);
}

static void test_nesting_limit(void **state)
{
	struct rb_shape_list l;
	size_t n = 5000;
	char *deep = malloc(2 * n + 1);
	(void)state;

	assert_non_null(deep);
	memset(deep, '[', n);
	memset(deep + n, ']', n);
	deep[2 * n] = '\0';
	rb_shape_list_init(&l);
	assert_int_equal(load(&l, deep), -EINVAL);
	assert_non_null(strstr(rb_last_error(), "invalid JSON at line 1"));
	free(deep);
}

static void test_configs(void **state)
{
	static const struct {
		const char *path;
		size_t shapes, names;
	} cfg[] = {
	    {"configs/mat_kernel_size.json", 3, 35},
	    {"configs/llama-3.2-1b-prefill.json", 10, 194},
	    {"configs/qwen2.5-1.5b.json", 3, 85},
	};
	(void)state;

	for (size_t i = 0; i < sizeof(cfg) / sizeof(cfg[0]); i++) {
		struct rb_shape_list l;
		size_t names = 0;

		rb_shape_list_init(&l);
		assert_int_equal(rb_shape_list_load_file(&l, cfg[i].path), 0);
		assert_int_equal(l.count, cfg[i].shapes);
		for (size_t j = 0; j < l.count; j++)
			names += l.entries[j].n_names;
		assert_int_equal(names, cfg[i].names);
		rb_shape_list_release(&l);
	}
}

static void test_seed_config_content(void **state)
{
	struct rb_shape_list l;
	const struct rb_shape_entry *e;
	(void)state;

	rb_shape_list_init(&l);
	assert_int_equal(rb_shape_list_load_file(&l, "configs/mat_kernel_size.json"), 0);
	assert_int_equal(l.count, 3);
	e = &l.entries[0];
	assert_true(e->shape.m == 1 && e->shape.k == 2048 && e->shape.n == 8192);
	assert_int_equal(e->n_names, 17);
	assert_string_equal(e->names[0], "ffn_up-0");
	assert_string_equal(e->names[16], "ffn_up-16");
	e = &l.entries[1];
	assert_true(e->shape.m == 1 && e->shape.k == 8192 && e->shape.n == 2048);
	assert_int_equal(e->n_names, 17);
	assert_string_equal(e->names[16], "ffn_out-16");
	e = &l.entries[2];
	assert_true(e->shape.m == 1 && e->shape.k == 2048 && e->shape.n == 128256);
	assert_string_equal(e->names[0], "result_output");
	rb_shape_list_release(&l);
}

static void test_load_file_errors(void **state)
{
	struct rb_shape_list l;
	(void)state;

	rb_shape_list_init(&l);
	assert_int_equal(rb_shape_list_load_file(&l, "no/such.json"), -ENOENT);
	assert_string_equal(rb_last_error(),
			    "cannot open 'no/such.json': No such file or directory");
	assert_int_equal(rb_shape_list_load_file(&l, "configs"), -EISDIR);
	assert_string_equal(rb_last_error(), "cannot read 'configs': Is a directory");
	assert_int_equal(l.count, 0);
}

/* Every kind of mistake, with its exact message (after "shapes.json: "). */
/* clang-format off */
static const struct bad_case {
	const char *json, *msg;
} bad[] = {
	{ "", "file is empty: expected an object like {\"pairs\": [...]}" },
	{ " \n\t ", "file is empty: expected an object like {\"pairs\": [...]}" },
	{ "{\"pairs\": [\n  {\"src0\" 1}]}", "invalid JSON at line 2, column 11 near \"1}]}\"" },
	{ "{\"pairs\": [\n" GOOD ",\n", "invalid JSON at line 2, column 91: unexpected end of file "
					"(is it truncated?)" },
	{ "{\"pairs\": [{\"name\": \"ab", "invalid JSON at line 1, column 21: string not closed "
					    "before the end of the file" },
	{ "{\"pairs\": [{\"name\" \"ab", "invalid JSON at line 1, column 20 near \"\\\"ab\"" },
	{ "{\"pairs\": [{\"name\": \"ab\\\"}]}", "invalid JSON at line 1, column 21: string not "
						 "closed before the end of the file" },
	{ "{\"a\": [1, 2}", "invalid JSON at line 1, column 12 near \"}\"" },
	{ DOC(GOOD) "\n\n  x", "extra text after the JSON value at line 3, column 3: \"x\"" },
	{ DOC(GOOD) DOC(GOOD), "extra text after the JSON value at line 1, column 103: \"{\\\"pairs\\\": "
			       "[{\\\"src0\\\": ...\"" },
	{ "[" GOOD "]", "top level must be an object like {\"pairs\": [...]}, not an array" },
	{ "42", "top level must be an object like {\"pairs\": [...]}, not the number 42" },
	{ "\"x\"", "top level must be an object like {\"pairs\": [...]}, not the string \"x\"" },
	{ "{}", "pairs is missing" },
	{ "{\"Pairs\": []}", "pairs is missing (there is \"Pairs\": keys are case-sensitive)" },
	{ "{\"pairs\": {}}", "pairs must be an array, not an object" },
	{ "{\"pairs\": null}", "pairs must be an array, not null" },
	{ "{\"pairs\": []}", "pairs is empty" },
	{ "{\"pairs\": [], \"pairs\": []}", "pairs appears twice" },
	{ DOC(GOOD ", 7"), "pairs[1] must be an object, not the number 7" },
	{ DOC("{\"src1\": {\"row\": 1, \"col\": 1}, \"name\": \"a\"}"), "pairs[0].src0 is missing" },
	{ DOC("{\"src0\": {\"row\": 1, \"col\": 1}, \"name\": \"a\"}"), "pairs[0].src1 is missing" },
	{ DOC("{\"src0\": \"1x1\", \"src1\": {}, \"name\": \"a\"}"),
	  "pairs[0].src0 must be an object like {\"row\": 1, \"col\": 2048}, not the string \"1x1\"" },
	{ DOC("{\"src0\": {\"col\": 1}, \"src1\": {}, \"name\": \"a\"}"), "pairs[0].src0.row is missing" },
	{ DOC("{\"src0\": {\"row\": 1, \"col\": 1}, \"src1\": {\"row\": 1}, \"name\": \"a\"}"),
	  "pairs[0].src1.col is missing" },
	{ DOC("{\"src0\": {\"row\": 1, \"COL\": 1}, \"src1\": {}, \"name\": \"a\"}"),
	  "pairs[0].src0.col is missing (there is \"COL\": keys are case-sensitive)" },
	{ DOC("{\"src0\": {\"row\": 1, \"row\": 2}, \"src1\": {}, \"name\": \"a\"}"),
	  "pairs[0].src0.row appears twice" },
	{ DOC(PAIR("-1", "1", "1", "1", "\"a\"")), "pairs[0].src0.row is -1: must be a positive integer" },
	{ DOC(PAIR("1", "0", "1", "1", "\"a\"")), "pairs[0].src0.col is 0: must be a positive integer" },
	{ DOC(PAIR("1", "1", "-0", "1", "\"a\"")), "pairs[0].src1.row is -0: must be a positive integer" },
	{ DOC(PAIR("1", "1", "1", "-1e300", "\"a\"")),
	  "pairs[0].src1.col is -1e+300: must be a positive integer" },
	{ DOC(PAIR("1.5", "1", "1", "1", "\"a\"")), "pairs[0].src0.row is 1.5: must be an integer" },
	{ DOC(PAIR("1", "2048.000001", "1", "1", "\"a\"")),
	  "pairs[0].src0.col is 2048.000001: must be an integer" },
	{ DOC(PAIR("1", "1", "1", "4294967296", "\"a\"")),
	  "pairs[0].src1.col is 4294967296: larger than 2147483648" },
	{ DOC(PAIR("2147483649", "1", "1", "1", "\"a\"")),
	  "pairs[0].src0.row is 2147483649: larger than 2147483648" },
	{ DOC(PAIR("1e300", "1", "1", "1", "\"a\"")),
	  "pairs[0].src0.row is 1e+300: larger than 2147483648" },
	{ DOC(PAIR("1e999", "1", "1", "1", "\"a\"")), "pairs[0].src0.row is inf: larger than 2147483648" },
	{ DOC(PAIR("\"2048\"", "1", "1", "1", "\"a\"")),
	  "pairs[0].src0.row must be a positive integer, not the string \"2048\"" },
	{ DOC(PAIR("null", "1", "1", "1", "\"a\"")),
	  "pairs[0].src0.row must be a positive integer, not null" },
	{ DOC(PAIR("1", "false", "1", "1", "\"a\"")),
	  "pairs[0].src0.col must be a positive integer, not false" },
	{ DOC(PAIR("1", "1", "[1]", "1", "\"a\"")),
	  "pairs[0].src1.row must be a positive integer, not an array" },
	{ DOC(GOOD "," GOOD "," GOOD "," PAIR("1", "2048", "2047", "8192", "\"b\"")),
	  "pairs[3].src1.row is 2047 but src0.col is 2048" },
	{ "{\"dtype\": \"bf16\", \"pairs\": [" GOOD "]}", "dtype is \"bf16\": must be \"fp16\" or \"int8\"" },
	{ "{\"dtype\": 16, \"pairs\": [" GOOD "]}", "dtype must be a string, not the number 16" },
	{ DOC("{\"src0\": {\"row\": 1, \"col\": 1}, \"src1\": {\"row\": 1, \"col\": 1}, \"name\": \"a\","
	      " \"dtype\": \"FP16\"}"), "pairs[0].dtype is \"FP16\": must be \"fp16\" or \"int8\"" },
	{ DOC("{\"src0\": {\"row\": 1, \"col\": 1}, \"src1\": {\"row\": 1, \"col\": 1}}"),
	  "pairs[0].name is missing" },
	{ DOC(PAIR("1", "1", "1", "1", "5")), "pairs[0].name must be a string, not the number 5" },
	{ DOC(PAIR("1", "1", "1", "1", "{}")), "pairs[0].name must be a string, not an object" },
	{ DOC(PAIR("1", "1", "1", "1", "\"\"")), "pairs[0].name must not be empty" },
	{ DOC(GOOD "," PAIR("1", "2048", "2048", "4096", "\"ffn_up-0\"")),
	  "pairs[1].name \"ffn_up-0\" was pairs[0] with shape 1x2048x8192 fp16, now 1x2048x4096 fp16" },
	{ "{\"dtype\": \"int8\", \"pairs\": [" GOOD ", {\"src0\": {\"row\": 1, \"col\": 2048},"
	  " \"src1\": {\"row\": 2048, \"col\": 8192}, \"name\": \"ffn_up-0\", \"dtype\": \"fp16\"}]}",
	  "pairs[1].name \"ffn_up-0\" was pairs[0] with shape 1x2048x8192 int8, now 1x2048x8192 fp16" },
	{ DOC(PAIR("1", "1", "1", "1", "\"a\\n\\\"b\"") "," PAIR("1", "1", "1", "2", "\"a\\n\\\"b\"")),
	  "pairs[0].name \"a\\n\\\"b\" has a control character or invalid UTF-8 at byte 1: names "
	  "are printed and matched as given" },
	{ DOC(PAIR("1", "1", "1", "1", "\"x\"") "," PAIR("1", "1", "1", "1", "\"old\"")),
	  "pairs[1].name \"old\" was already loaded with shape 5x6x7 fp16, now 1x1x1 fp16" },
};

/* clang-format on */

static void test_bad_input(void **state)
{
	char want[1024];
	(void)state;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct rb_shape_list l;
		struct rb_shape old = {5, 6, 7, RB_DTYPE_FP16};
		const char *before;

		rb_shape_list_init(&l);
		assert_int_equal(rb_shape_list_add(&l, &old, "old"), 0);
		before = strdup(dump(&l));
		snprintf(want, sizeof(want), LABEL ": %s", bad[i].msg);
		if (load(&l, bad[i].json) != -EINVAL || strcmp(rb_last_error(), want) != 0)
			print_message("case %zu: %s\n", i, bad[i].json);
		assert_int_equal(load(&l, bad[i].json), -EINVAL);
		assert_string_equal(rb_last_error(), want);
		assert_string_equal(dump(&l), before);
		free((void *)before);
		rb_shape_list_release(&l);
	}
}

static void test_nul(void **state)
{
	static const char text[] = "{\"pairs\":\n [\"a\0b\"]}";
	struct rb_shape_list l;
	(void)state;

	rb_shape_list_init(&l);
	assert_int_equal(rb_shape_list_load_string(&l, text, sizeof(text) - 1, LABEL), -EINVAL);
	assert_string_equal(rb_last_error(),
			    LABEL ": NUL byte at line 2, column 5: not a JSON text file");
	assert_int_equal(l.count, 0);
	assert_int_equal(rb_shape_list_load_string(&l, NULL, 0, NULL), -EINVAL);
	assert_string_equal(rb_last_error(),
			    "<string>: file is empty: expected an object like {\"pairs\": [...]}");
}

static void test_spec_good(void **state)
{
	struct rb_shape_list l;
	(void)state;

	rb_shape_list_init(&l);
	assert_int_equal(rb_shape_list_add_spec(&l, "1x2048x8192", RB_DTYPE_FP16), 0);
	assert_int_equal(rb_shape_list_add_spec(&l, "0001x02048x8192", RB_DTYPE_FP16), 0);
	assert_int_equal(rb_shape_list_add_spec(&l, "2147483648x1x1", RB_DTYPE_INT8), 0);
	assert_string_equal(dump(&l), "1x2048x8192 fp16: 1x2048x8192; "
				      "2147483648x1x1 int8: 2147483648x1x1");
	/* the name is the spec alone, so one spec cannot name two dtypes */
	assert_int_equal(rb_shape_list_add_spec(&l, "1x2048x8192", RB_DTYPE_INT8), -EINVAL);
	assert_string_equal(rb_last_error(), "name '1x2048x8192' is already used by shape "
					     "1x2048x8192 fp16, not 1x2048x8192 int8 (a name may "
					     "repeat only with another M)");
	rb_shape_list_release(&l);
}

static void test_spec_bad(void **state)
{
	static const struct {
		const char *spec, *msg;
	} cases[] = {
	    {"1x2048", "shape '1x2048' must be MxKxN, e.g. 1x2048x8192"},
	    {"1x2x3x", "shape '1x2x3x' must be MxKxN, e.g. 1x2048x8192"},
	    {"1x2x3x4", "shape '1x2x3x4' must be MxKxN, e.g. 1x2048x8192"},
	    {"", "shape '' must be MxKxN, e.g. 1x2048x8192"},
	    {" 1x2x3", "shape ' 1x2x3' must be MxKxN, e.g. 1x2048x8192"},
	    {"1x2x3 ", "shape '1x2x3 ' must be MxKxN, e.g. 1x2048x8192"},
	    {"1x 2x3", "shape '1x 2x3' must be MxKxN, e.g. 1x2048x8192"},
	    {"+1x2x3", "shape '+1x2x3' must be MxKxN, e.g. 1x2048x8192"},
	    {"1x-2x3", "shape '1x-2x3' must be MxKxN, e.g. 1x2048x8192"},
	    {"1X2X3", "shape '1X2X3' must be MxKxN, e.g. 1x2048x8192"},
	    {"1xx3", "shape '1xx3' must be MxKxN, e.g. 1x2048x8192"},
	    {"1x2.5x3", "shape '1x2.5x3' must be MxKxN, e.g. 1x2048x8192"},
	    {"1x2x0x3", "shape '1x2x0x3' must be MxKxN, e.g. 1x2048x8192"},
	    {"a'b\n", "shape 'a\\'b\\n' must be MxKxN, e.g. 1x2048x8192"},
	    {"0x1x1", "shape '0x1x1': M is 0: must be a positive integer"},
	    {"1x000x1", "shape '1x000x1': K is 000: must be a positive integer"},
	    {"1x1x2147483649", "shape '1x1x2147483649': N is 2147483649: larger than 2147483648"},
	    {"1x99999999999999999999999x1",
	     "shape '1x99999999999999999999999x1': K is 99999999999999999999999: larger than "
	     "2147483648"},
	};
	struct rb_shape_list l;
	(void)state;

	rb_shape_list_init(&l);
	assert_int_equal(rb_shape_list_add_spec(&l, "4x5x6", RB_DTYPE_FP16), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(rb_shape_list_add_spec(&l, cases[i].spec, RB_DTYPE_FP16), -EINVAL);
		assert_string_equal(rb_last_error(), cases[i].msg);
	}
	assert_int_equal(rb_shape_list_add_spec(&l, NULL, RB_DTYPE_FP16), -EINVAL);
	assert_string_equal(dump(&l), "4x5x6 fp16: 4x5x6");
	rb_shape_list_release(&l);
}

static void test_add(void **state)
{
	struct rb_shape_list l;
	struct rb_shape s = {1, 2, 3, RB_DTYPE_FP16};
	struct rb_shape zero = {0, 2, 3, RB_DTYPE_FP16};
	struct rb_shape big = {1, RB_SHAPE_DIM_MAX + 1, 3, RB_DTYPE_FP16};
	struct rb_shape other = {1, 2, 4, RB_DTYPE_FP16};
	struct rb_shape prefill = {128, 2, 3, RB_DTYPE_FP16};
	(void)state;

	rb_shape_list_init(&l);
	assert_int_equal(rb_shape_list_add(&l, &s, "a"), 0);
	assert_int_equal(rb_shape_list_add(&l, &s, "b"), 0);
	assert_int_equal(rb_shape_list_add(&l, &s, "a"), 0);
	assert_int_equal(rb_shape_list_add(&l, &other, "c"), 0);
	assert_string_equal(dump(&l), "1x2x3 fp16: a,b; 1x2x4 fp16: c");
	assert_int_equal(rb_shape_list_add(&l, &other, "a"), -EINVAL);
	assert_string_equal(rb_last_error(), "name 'a' is already used by shape 1x2x3 fp16, not "
					     "1x2x4 fp16 (a name may repeat only with another M)");
	/* the same node at another batch size: another entry under the same name */
	assert_int_equal(rb_shape_list_add(&l, &prefill, "a"), 0);
	assert_string_equal(dump(&l), "1x2x3 fp16: a,b; 1x2x4 fp16: c; 128x2x3 fp16: a");
	assert_int_equal(rb_shape_list_add(&l, &zero, "z"), -EINVAL);
	assert_string_equal(rb_last_error(), "shape 0x2x3 fp16: dimensions must be 1..2147483648");
	assert_int_equal(rb_shape_list_add(&l, &big, "z"), -EINVAL);
	assert_int_equal(rb_shape_list_add(&l, &s, ""), -EINVAL);
	assert_string_equal(rb_last_error(), "shape 1x2x3 fp16 needs a non-empty name");
	assert_int_equal(rb_shape_list_add(&l, &s, NULL), -EINVAL);
	assert_string_equal(dump(&l), "1x2x3 fp16: a,b; 1x2x4 fp16: c; 128x2x3 fp16: a");
	rb_shape_list_release(&l);
}

static void test_dtype(void **state)
{
	enum rb_dtype d = RB_DTYPE_FP16;
	(void)state;

	assert_string_equal(rb_dtype_name(RB_DTYPE_FP16), "fp16");
	assert_string_equal(rb_dtype_name(RB_DTYPE_INT8), "int8");
	assert_int_equal(rb_dtype_parse("int8", &d), 0);
	assert_int_equal(d, RB_DTYPE_INT8);
	assert_int_equal(rb_dtype_parse("fp16", &d), 0);
	assert_int_equal(d, RB_DTYPE_FP16);
	assert_int_equal(rb_dtype_parse("bf16", &d), -EINVAL);
	assert_string_equal(rb_last_error(), "unknown dtype 'bf16': must be \"fp16\" or \"int8\"");
	assert_int_equal(rb_dtype_parse("FP16", &d), -EINVAL);
	assert_int_equal(rb_dtype_parse(NULL, &d), -EINVAL);
	assert_int_equal(d, RB_DTYPE_FP16);
	assert_int_equal(rb_dtype_in_size(RB_DTYPE_FP16), 2);
	assert_int_equal(rb_dtype_in_size(RB_DTYPE_INT8), 1);
	assert_int_equal(rb_dtype_out_size(RB_DTYPE_FP16), 4);
	assert_int_equal(rb_dtype_out_size(RB_DTYPE_INT8), 4);
}

/* A pair may pin a plan config; the same shape pinned twice is two entries. */
static void test_pinned_config(void **state)
{
	struct rb_shape_list l;
	const char *two =
	    "{\"pairs\":[{\"src0\":{\"row\":1,\"col\":64},\"src1\":{\"row\":64,\"col\":32},"
	    "\"name\":\"a\",\"config\":\"mask=0x1\"},"
	    "{\"src0\":{\"row\":1,\"col\":64},\"src1\":{\"row\":64,\"col\":32},"
	    "\"name\":\"b\",\"config\":\"mask=0x7\"},"
	    "{\"src0\":{\"row\":1,\"col\":64},\"src1\":{\"row\":64,\"col\":32},"
	    "\"name\":\"c\",\"config\":\"mask=0x7\"},"
	    "{\"src0\":{\"row\":1,\"col\":64},\"src1\":{\"row\":64,\"col\":32},\"name\":\"d\"}]}";
	const char *clash =
	    "{\"pairs\":[{\"src0\":{\"row\":1,\"col\":64},\"src1\":{\"row\":64,\"col\":32},"
	    "\"name\":\"a\",\"config\":\"mask=0x1\"},"
	    "{\"src0\":{\"row\":1,\"col\":64},\"src1\":{\"row\":64,\"col\":32},"
	    "\"name\":\"a\",\"config\":\"mask=0x2\"}]}";
	const char *not_string =
	    "{\"pairs\":[{\"src0\":{\"row\":1,\"col\":64},\"src1\":{\"row\":64,"
	    "\"col\":32},\"name\":\"a\",\"config\":7}]}";

	(void)state;
	rb_shape_list_init(&l);
	assert_int_equal(load(&l, two), 0);
	assert_int_equal(l.count, 3);
	assert_string_equal(l.entries[0].config, "mask=0x1");
	assert_string_equal(l.entries[1].config, "mask=0x7");
	assert_int_equal(l.entries[1].n_names, 2);
	assert_null(l.entries[2].config);
	rb_shape_list_release(&l);
	assert_int_equal(load(&l, clash), -EINVAL);
	assert_non_null(strstr(rb_last_error(), "pairs[1]: name 'a' is already used with config "
						"'mask=0x1', not 'mask=0x2'"));
	assert_int_equal(load(&l, not_string), -EINVAL);
	assert_non_null(strstr(rb_last_error(), "pairs[0].config must be a string"));
	assert_int_equal(l.count, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_seed_format),
	    cmocka_unit_test(test_dtype_top_and_pair),
	    cmocka_unit_test(test_merge_and_order),
	    cmocka_unit_test(test_unknown_keys_ignored),
	    cmocka_unit_test(test_appends_to_list),
	    cmocka_unit_test(test_numbers_accepted),
	    cmocka_unit_test(test_length_respected),
	    cmocka_unit_test(test_bom_and_space),
	    cmocka_unit_test(test_nesting_limit),
	    cmocka_unit_test(test_configs),
	    cmocka_unit_test(test_seed_config_content),
	    cmocka_unit_test(test_load_file_errors),
	    cmocka_unit_test(test_bad_input),
	    cmocka_unit_test(test_nul),
	    cmocka_unit_test(test_spec_good),
	    cmocka_unit_test(test_spec_bad),
	    cmocka_unit_test(test_add),
	    cmocka_unit_test(test_dtype),
	    cmocka_unit_test(test_pinned_config),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
