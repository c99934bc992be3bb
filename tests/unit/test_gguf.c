/* The GGUF header reader (src/model/gguf.c) on headers written here, and the graph's
 * matmul pairs (src/model/graph.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/error.h"
#include "model/gguf.h"
#include "model/graph.h"
#include "../tools/gguf_write.h"

static char path[64];

static int setup(void **state)
{
	int fd;

	snprintf(path, sizeof(path), "/tmp/rb-test-gguf-XXXXXX");
	fd = mkstemp(path);

	(void)state;
	return fd < 0 ? -1 : close(fd);
}

static int teardown(void **state)
{
	(void)state;
	return unlink(path);
}

static void put(const struct gw *w, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(w->buf, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static int read_back(const struct gw *w, size_t len, struct rb_gguf_model *m)
{
	put(w, len);
	return rb_gguf_read(path, m);
}

static void expect_refused(const struct gw *w, size_t len, const char *words)
{
	struct rb_gguf_model m;

	assert_int_equal(read_back(w, len, &m), -EINVAL);
	if (!strstr(rb_last_error(), words) || !strstr(rb_last_error(), path))
		fail_msg("'%s' lacks the file or '%s'", rb_last_error(), words);
}

static void test_llama_tokens(void **state)
{
	struct gw w = {0};
	struct rb_gguf_model m;

	(void)state;
	gw_model(&w, "llama", 2048, 8192, 16, 32, 8, 1000, 1);
	assert_int_equal(read_back(&w, w.len, &m), 0);
	assert_string_equal(m.arch, "llama");
	assert_int_equal(m.embd, 2048);
	assert_int_equal(m.ff, 8192);
	assert_int_equal(m.layers, 16);
	assert_int_equal(m.heads, 32);
	assert_int_equal(m.heads_kv, 8);
	assert_int_equal(m.head_dim, 0);
	assert_int_equal(m.vocab, 1000);
	assert_int_equal(m.version, 3);
	assert_int_equal(m.n_tensors, 2);
	free(w.buf);
}

/* Without a token list the vocabulary comes from output.weight. */
static void test_vocab_from_tensor(void **state)
{
	struct gw w = {0};
	struct rb_gguf_model m;

	(void)state;
	gw_model(&w, "qwen2", 1536, 8960, 28, 12, 2, 151936, 0);
	assert_int_equal(read_back(&w, w.len, &m), 0);
	assert_string_equal(m.arch, "qwen2");
	assert_int_equal(m.vocab, 151936);
	assert_int_equal(m.layers, 28);
	free(w.buf);
}

/* Keys in any order; another architecture's keys and unknown keys are ignored. */
static void test_key_order(void **state)
{
	struct gw w = {0};
	struct rb_gguf_model m;

	(void)state;
	gw_header(&w, 2, 0, 6);
	gw_kv_u32(&w, "llama.embedding_length", 4096);
	gw_kv_u32(&w, "qwen2.embedding_length", 99);
	gw_kv_str(&w, "general.name", "a model");
	gw_str(&w, "some.float");
	gw_le(&w, GW_FLOAT32, 4);
	gw_le(&w, 0x3f800000, 4);
	gw_kv_u32(&w, "llama.attention.key_length", 128);
	gw_kv_str(&w, "general.architecture", "llama");
	assert_int_equal(read_back(&w, w.len, &m), 0);
	assert_int_equal(m.embd, 4096);
	assert_int_equal(m.head_dim, 128);
	assert_int_equal(m.vocab, 0);
	free(w.buf);
}

/* Every truncation of a valid header is refused with the byte offset; none crashes. */
static void test_truncated(void **state)
{
	struct gw w = {0};

	(void)state;
	gw_model(&w, "llama", 64, 128, 2, 4, 2, 20, 1);
	for (size_t len = 0; len < w.len; len++)
		expect_refused(&w, len, "byte ");
	free(w.buf);
}

static void test_malformed(void **state)
{
	struct gw w = {0};

	(void)state;
	gw_model(&w, "llama", 64, 128, 2, 4, 2, 20, 0);
	w.buf[0] = 'X';
	expect_refused(&w, w.len, "byte 0: not a GGUF file");
	w.buf[0] = 'G';
	w.buf[4] = 1;
	expect_refused(&w, w.len, "byte 4: GGUF version 1");
	w.buf[4] = 3;
	w.buf[23] = 0x7f; /* the key/value count, high byte */
	expect_refused(&w, w.len, "byte 16: ");
	free(w.buf);

	memset(&w, 0, sizeof(w)); /* a key longer than the file */
	gw_header(&w, 3, 0, 1);
	gw_le(&w, UINT64_C(1) << 40, 8);
	expect_refused(&w, w.len, "byte 24: a key of 1099511627776 bytes");
	free(w.buf);

	memset(&w, 0, sizeof(w)); /* an unknown value type */
	gw_header(&w, 3, 0, 1);
	gw_str(&w, "k");
	gw_le(&w, 13, 4);
	expect_refused(&w, w.len, "value type 13 is not a GGUF type");
	free(w.buf);

	memset(&w, 0, sizeof(w)); /* a tensor of 5 dimensions */
	gw_header(&w, 3, 1, 1);
	gw_kv_str(&w, "general.architecture", "llama");
	gw_str(&w, "t");
	gw_le(&w, 5, 4);
	expect_refused(&w, w.len, "tensor with 5 dimensions");
	free(w.buf);

	memset(&w, 0, sizeof(w)); /* no architecture */
	gw_header(&w, 3, 0, 1);
	gw_kv_u32(&w, "llama.block_count", 16);
	expect_refused(&w, w.len, "no general.architecture");
	free(w.buf);

	memset(&w, 0, sizeof(w)); /* a NUL inside the architecture */
	gw_header(&w, 3, 0, 1);
	gw_str(&w, "general.architecture");
	gw_le(&w, GW_STRING, 4);
	gw_le(&w, 3, 8);
	gw_bytes(&w, "l\0x", 3);
	expect_refused(&w, w.len, "general.architecture must be a short string");
	free(w.buf);
}

/* Issue 35: a second architecture is refused (readers disagree on which wins), and a
 * number present but unusable is reported as such, not as missing. */
static void test_duplicate_and_unusable(void **state)
{
	static const struct {
		uint32_t type;
		uint64_t value;
		unsigned bytes;
		const char *words;
	} cases[] = {
	    {GW_FLOAT32, 0x41800000, 4, "llama.block_count is present but unusable: a float32"},
	    {GW_STRING, 0, 0, "llama.block_count is present but unusable: a string"},
	    {GW_INT32, 0xffffffff, 4, "llama.block_count is present but unusable: below 1"},
	    {GW_UINT64, UINT64_MAX, 8, "llama.block_count is present but unusable: a uint64 above"},
	};
	struct gw w = {0};

	(void)state;
	gw_header(&w, 3, 0, 2);
	gw_kv_str(&w, "general.architecture", "llama");
	gw_kv_str(&w, "general.architecture", "qwen2");
	expect_refused(&w, w.len, "byte 69: general.architecture appears twice (first at byte 24)");
	free(w.buf);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&w, 0, sizeof(w));
		gw_header(&w, 3, 0, 2);
		gw_kv_str(&w, "general.architecture", "llama");
		gw_str(&w, "llama.block_count");
		gw_le(&w, cases[i].type, 4);
		if (cases[i].type == GW_STRING)
			gw_str(&w, "16");
		else
			gw_le(&w, cases[i].value, cases[i].bytes);
		expect_refused(&w, w.len, cases[i].words);
		free(w.buf);
	}
}

static void test_missing_file(void **state)
{
	struct rb_gguf_model m;

	(void)state;
	assert_int_equal(rb_gguf_read("/nonexistent/model.gguf", &m), -ENOENT);
}

/* ---- the graph's pairs ---- */

static const struct rb_graph_model llama_1b = {"llama", 2048, 8192, 16, 32, 8, 0, 128256};

static const struct rb_graph_pair *find(const struct rb_graph_pair *p, size_t n, const char *name,
					int64_t m)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(p[i].name, name) == 0 && p[i].shape.m == m)
			return &p[i];
	return NULL;
}

static void expect_pair(const struct rb_graph_pair *p, size_t n, const char *name, int64_t m,
			int64_t k, int64_t nn)
{
	const struct rb_graph_pair *x = find(p, n, name, m);

	if (!x || x->shape.k != k || x->shape.n != nn)
		fail_msg("%s at M=%lld: missing or not %lldx%lld", name, (long long)m, (long long)k,
			 (long long)nn);
}

static void test_graph_llama(void **state)
{
	const int64_t tokens[2] = {1, 128};
	struct rb_graph_opts o = {.tokens = tokens, .n_tokens = 2};
	struct rb_graph_pair *p;
	size_t n;

	(void)state;
	assert_int_equal(rb_graph_pairs(&llama_1b, &o, &p, &n), 0);
	expect_pair(p, n, "Qcur-0", 1, 2048, 2048);
	expect_pair(p, n, "Kcur-3", 1, 2048, 512);
	expect_pair(p, n, "Vcur-15", 128, 2048, 512);
	expect_pair(p, n, "ffn_gate-7", 128, 2048, 8192);
	expect_pair(p, n, "ffn_out-14", 128, 8192, 2048);
	expect_pair(p, n, "result_output", 1, 2048, 128256);
	/* generating, the last layer keeps the last token's row only */
	assert_null(find(p, n, "ffn_up-15", 128));
	assert_null(find(p, n, "result_output", 128));
	expect_pair(p, n, "Qcur-15", 128, 2048, 2048); /* before the row selection */
	/* decode: 6 x 16 + 1; prefill adds 6 x 16 - 3 (the last layer's FFN is decode's) */
	assert_int_equal(n, 97 + 93);
	free(p);
	o.all_logits = true;
	assert_int_equal(rb_graph_pairs(&llama_1b, &o, &p, &n), 0);
	expect_pair(p, n, "result_output", 128, 2048, 128256);
	assert_int_equal(n, 97 + 97);
	free(p);
}

static void test_graph_errors(void **state)
{
	const int64_t one = 1;
	struct rb_graph_opts o = {.tokens = &one, .n_tokens = 1};
	struct rb_graph_model m = llama_1b;
	struct rb_graph_pair *p;
	unsigned mask;
	size_t n;

	(void)state;
	snprintf(m.arch, sizeof(m.arch), "gpt2");
	assert_int_equal(rb_graph_pairs(&m, &o, &p, &n), -EINVAL);
	assert_non_null(strstr(rb_last_error(), "'gpt2'"));
	snprintf(m.arch, sizeof(m.arch), "qwen2");
	assert_int_equal(rb_graph_nodes_parse("ffn_up,Qcur", &mask), 0);
	o.nodes = mask;
	assert_int_equal(rb_graph_pairs(&m, &o, &p, &n), -EINVAL);
	assert_non_null(strstr(rb_last_error(), "names no Qcur"));
	assert_int_equal(rb_graph_nodes_parse("ffn_up,attn_q", &mask), -EINVAL);
	assert_non_null(strstr(rb_last_error(), "'attn_q'"));
	o.nodes = 0;
	m.ff = 0;
	assert_int_equal(rb_graph_pairs(&m, &o, &p, &n), -EINVAL);
	assert_non_null(strstr(rb_last_error(), "--ff is 0"));
	m = llama_1b;
	m.heads = 3;
	assert_int_equal(rb_graph_pairs(&m, &o, &p, &n), -EINVAL);
	assert_non_null(strstr(rb_last_error(), "--head-dim"));
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    T(test_llama_tokens),
	    T(test_vocab_from_tensor),
	    T(test_key_order),
	    T(test_truncated),
	    T(test_malformed),
	    T(test_duplicate_and_unusable),
	    cmocka_unit_test(test_missing_file),
	    cmocka_unit_test(test_graph_llama),
	    cmocka_unit_test(test_graph_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
