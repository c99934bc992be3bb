/* Writes GGUF headers for the tests (tests/unit/test_gguf.c, tests/tools/mkgguf.c): the
 * layout of the GGUF specification (ggml docs/gguf.md), little-endian, no tensor data. */
#ifndef RB_TESTS_GGUF_WRITE_H
#define RB_TESTS_GGUF_WRITE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct gw {
	unsigned char *buf;
	size_t len, cap;
};

static inline void gw_bytes(struct gw *w, const void *p, size_t n)
{
	if (w->len + n > w->cap) {
		size_t cap = (w->len + n) * 2;
		unsigned char *b = realloc(w->buf, cap);

		if (!b)
			abort();
		w->buf = b;
		w->cap = cap;
	}
	memcpy(w->buf + w->len, p, n);
	w->len += n;
}

static inline void gw_le(struct gw *w, uint64_t v, unsigned n)
{
	unsigned char b[8];

	for (unsigned i = 0; i < n; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	gw_bytes(w, b, n);
}

static inline void gw_str(struct gw *w, const char *s)
{
	gw_le(w, strlen(s), 8);
	gw_bytes(w, s, strlen(s));
}

/* "GGUF", version, tensor count, key/value count */
static inline void gw_header(struct gw *w, uint32_t version, uint64_t tensors, uint64_t kvs)
{
	gw_bytes(w, "GGUF", 4);
	gw_le(w, version, 4);
	gw_le(w, tensors, 8);
	gw_le(w, kvs, 8);
}

enum { GW_UINT32 = 4, GW_INT32 = 5, GW_FLOAT32 = 6, GW_STRING = 8, GW_ARRAY = 9, GW_UINT64 = 10 };

static inline void gw_kv_str(struct gw *w, const char *key, const char *value)
{
	gw_str(w, key);
	gw_le(w, GW_STRING, 4);
	gw_str(w, value);
}

static inline void gw_kv_u32(struct gw *w, const char *key, uint32_t value)
{
	gw_str(w, key);
	gw_le(w, GW_UINT32, 4);
	gw_le(w, value, 4);
}

/* An array of n strings "t<i>", as tokenizer.ggml.tokens is. */
static inline void gw_kv_tokens(struct gw *w, const char *key, uint64_t n)
{
	char t[32];

	gw_str(w, key);
	gw_le(w, GW_ARRAY, 4);
	gw_le(w, GW_STRING, 4);
	gw_le(w, n, 8);
	for (uint64_t i = 0; i < n; i++) {
		snprintf(t, sizeof(t), "t%llu", (unsigned long long)i);
		gw_str(w, t);
	}
}

/* A 2-D tensor info (type 1 = f16, offset 0). */
static inline void gw_tensor(struct gw *w, const char *name, uint64_t d0, uint64_t d1)
{
	gw_str(w, name);
	gw_le(w, 2, 4);
	gw_le(w, d0, 8);
	gw_le(w, d1, 8);
	gw_le(w, 1, 4);
	gw_le(w, 0, 8);
}

/* A Llama-like header: 7 key/values (the vocabulary as a token array when tokens is
 * true, else only as the output tensor's second dimension) and 2 tensor infos. */
static inline void gw_model(struct gw *w, const char *arch, uint32_t embd, uint32_t ff,
			    uint32_t layers, uint32_t heads, uint32_t heads_kv, uint32_t vocab,
			    int tokens)
{
	char key[96];

	gw_header(w, 3, 2, tokens ? 7 : 6);
	gw_kv_str(w, "general.architecture", arch);
	snprintf(key, sizeof(key), "%s.embedding_length", arch);
	gw_kv_u32(w, key, embd);
	snprintf(key, sizeof(key), "%s.feed_forward_length", arch);
	gw_kv_u32(w, key, ff);
	snprintf(key, sizeof(key), "%s.block_count", arch);
	gw_kv_u32(w, key, layers);
	snprintf(key, sizeof(key), "%s.attention.head_count", arch);
	gw_kv_u32(w, key, heads);
	snprintf(key, sizeof(key), "%s.attention.head_count_kv", arch);
	gw_kv_u32(w, key, heads_kv);
	if (tokens)
		gw_kv_tokens(w, "tokenizer.ggml.tokens", vocab);
	gw_tensor(w, "token_embd.weight", embd, vocab);
	gw_tensor(w, "output.weight", embd, vocab);
}

#endif
