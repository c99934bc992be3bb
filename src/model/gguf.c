/* The GGUF header reader (gguf.h). Facts from the GGUF specification (ggml,
 * docs/gguf.md): the layout, the value type numbers, the key names. */
#define _FILE_OFFSET_BITS 64
#include "model/gguf.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "core/error.h"

/* Far beyond any real header (a Llama 3 header has ~30 keys, ~300 tensors, token strings
 * of a few bytes), low enough that a hostile count cannot make us loop for hours. */
#define MAX_KV      (UINT64_C(1) << 20)
#define MAX_TENSORS (UINT64_C(1) << 24)
#define MAX_STRING  (UINT64_C(1) << 20)
#define MAX_DIMS    4u /* GGML_MAX_DIMS */
#define MAX_DEPTH   3  /* arrays of arrays */

enum gguf_type {
	T_UINT8 = 0,
	T_INT8,
	T_UINT16,
	T_INT16,
	T_UINT32,
	T_INT32,
	T_FLOAT32,
	T_BOOL,
	T_STRING,
	T_ARRAY,
	T_UINT64,
	T_INT64,
	T_FLOAT64,
	T_COUNT,
};

/* Bytes of a scalar type (0: string and array, which carry their length). */
static const unsigned scalar_bytes[T_COUNT] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};

struct reader {
	FILE *f;
	const char *path;
	uint64_t pos;
	uint64_t size; /* UINT64_MAX: unknown (a pipe), then truncation shows as EOF */
	bool seekable;
};

static int bad(const struct reader *r, uint64_t at, const char *fmt, ...) RB_PRINTF(3, 4);

static int bad(const struct reader *r, uint64_t at, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return rb_set_error(-EINVAL, "%s: byte %" PRIu64 ": %s", r->path, at, msg);
}

/* n more bytes must be in the file. */
static int need(const struct reader *r, uint64_t n, const char *what)
{
	if (r->size == UINT64_MAX || n <= r->size - r->pos)
		return 0;
	return bad(r, r->pos,
		   "%s (%" PRIu64 " bytes) runs past the end of the file (%" PRIu64
		   " bytes): truncated?",
		   what, n, r->size);
}

static int get(struct reader *r, void *buf, size_t n, const char *what)
{
	int ret = need(r, n, what);

	if (ret == 0 && fread(buf, 1, n, r->f) != n)
		ret = bad(r, r->pos, "the file ends inside %s: truncated?", what);
	r->pos += n;
	return ret;
}

static uint64_t le(const unsigned char *b, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = n; i-- > 0;)
		v = v << 8 | b[i];
	return v;
}

static int u32(struct reader *r, uint32_t *v, const char *what)
{
	unsigned char b[4];
	int ret = get(r, b, 4, what);

	*v = (uint32_t)le(b, 4);
	return ret;
}

static int u64(struct reader *r, uint64_t *v, const char *what)
{
	unsigned char b[8];
	int ret = get(r, b, 8, what);

	*v = le(b, 8);
	return ret;
}

static int skip(struct reader *r, uint64_t n, const char *what)
{
	unsigned char chunk[4096];
	int ret = need(r, n, what);

	if (ret == 0 && r->seekable) {
		if (fseeko(r->f, (off_t)n, SEEK_CUR) != 0)
			return bad(r, r->pos, "cannot seek over %s", what);
		r->pos += n;
		return 0;
	}
	while (ret == 0 && n) {
		size_t part = n < sizeof(chunk) ? (size_t)n : sizeof(chunk);

		ret = get(r, chunk, part, what);
		n -= part;
	}
	return ret;
}

/* A string: kept in buf (NUL-terminated) when it fits, else skipped (*kept false). */
static int string(struct reader *r, char *buf, size_t cap, bool *kept, const char *what)
{
	uint64_t at = r->pos, len;
	int ret = u64(r, &len, what);

	*kept = false;
	if (ret == 0 && len > MAX_STRING)
		return bad(r, at, "%s of %" PRIu64 " bytes (at most %" PRIu64 ")", what, len,
			   MAX_STRING);
	if (ret || !buf || len >= cap)
		return ret ? ret : skip(r, len, what);
	ret = get(r, buf, (size_t)len, what);
	buf[len] = '\0';
	*kept = ret == 0 && strlen(buf) == len; /* a NUL inside is not a name */
	return ret;
}

/* A value as far as the model's numbers need it. */
struct value {
	bool is_int;
	int64_t i;
	char s[64];
	bool s_kept;
	uint64_t count; /* arrays */
};

static int value(struct reader *r, uint32_t type, int depth, struct value *v);

static int array(struct reader *r, int depth, struct value *v)
{
	uint64_t at = r->pos, count;
	uint32_t type;
	int ret = u32(r, &type, "an array's element type");

	if (ret == 0)
		ret = u64(r, &count, "an array's length");
	if (ret)
		return ret;
	if (type >= T_COUNT)
		return bad(r, at, "array element type %" PRIu32 " is not a GGUF type", type);
	if (depth >= MAX_DEPTH)
		return bad(r, at, "arrays nested deeper than %d", MAX_DEPTH);
	v->count = count;
	if (scalar_bytes[type]) {
		if (count > UINT64_MAX / scalar_bytes[type])
			return bad(r, at, "an array of %" PRIu64 " elements", count);
		return skip(r, count * scalar_bytes[type], "an array");
	}
	/* strings are at least 8 bytes (their length), arrays 12: check before looping */
	ret = need(r, count > UINT64_MAX / 8 ? UINT64_MAX : count * 8, "an array");
	for (uint64_t i = 0; ret == 0 && i < count; i++) {
		struct value elem;

		ret = value(r, type, depth + 1, &elem);
	}
	return ret;
}

static int value(struct reader *r, uint32_t type, int depth, struct value *v)
{
	unsigned char b[8];
	uint64_t at = r->pos;
	int ret;

	memset(v, 0, sizeof(*v));
	if (type >= T_COUNT)
		return bad(r, at, "value type %" PRIu32 " is not a GGUF type", type);
	if (type == T_STRING)
		return string(r, v->s, sizeof(v->s), &v->s_kept, "a string value");
	if (type == T_ARRAY)
		return array(r, depth, v);
	ret = get(r, b, scalar_bytes[type], "a value");
	if (ret || type == T_FLOAT32 || type == T_FLOAT64 || type == T_BOOL)
		return ret;
	v->is_int = true;
	v->i = (int64_t)le(b, scalar_bytes[type]);
	if (type == T_INT8 || type == T_INT16 || type == T_INT32) { /* sign-extend */
		unsigned shift = 64 - 8 * scalar_bytes[type];

		v->i = (int64_t)((uint64_t)v->i << shift) >> shift;
	}
	if (type == T_UINT64 && (uint64_t)v->i > INT64_MAX)
		v->is_int = false;
	return 0;
}

/* ---- the keys the model's numbers come from ---- */

static const struct {
	const char *suffix;
	size_t offset;
} arch_keys[] = {
    {".embedding_length", offsetof(struct rb_gguf_model, embd)},
    {".feed_forward_length", offsetof(struct rb_gguf_model, ff)},
    {".block_count", offsetof(struct rb_gguf_model, layers)},
    {".attention.head_count", offsetof(struct rb_gguf_model, heads)},
    {".attention.head_count_kv", offsetof(struct rb_gguf_model, heads_kv)},
    {".attention.key_length", offsetof(struct rb_gguf_model, head_dim)},
    {".vocab_size", offsetof(struct rb_gguf_model, vocab)},
};
#define N_ARCH_KEYS (sizeof(arch_keys) / sizeof(arch_keys[0]))

/* "<arch><suffix>" keys seen before the architecture is known: resolved at the end. */
struct pending {
	char prefix[64];
	size_t key;
	int64_t value;
};

struct header {
	struct rb_gguf_model *m;
	struct pending pending[64];
	size_t n_pending;
	int64_t tokens, output_vocab, embd_vocab;
};

static void note_arch_key(struct header *h, const char *key, const struct value *v)
{
	size_t len = strlen(key);

	for (size_t k = 0; k < N_ARCH_KEYS; k++) {
		size_t sl = strlen(arch_keys[k].suffix);
		struct pending *p;

		if (len <= sl || len - sl >= sizeof(p->prefix) ||
		    strcmp(key + len - sl, arch_keys[k].suffix) != 0 || !v->is_int ||
		    h->n_pending == sizeof(h->pending) / sizeof(h->pending[0]))
			continue;
		p = &h->pending[h->n_pending++];
		memcpy(p->prefix, key, len - sl);
		p->prefix[len - sl] = '\0';
		p->key = k;
		p->value = v->i;
	}
}

static int key_value(struct reader *r, struct header *h)
{
	char key[256];
	bool kept;
	uint32_t type;
	struct value v;
	uint64_t at = r->pos;
	int ret = string(r, key, sizeof(key), &kept, "a key");

	if (ret == 0)
		ret = u32(r, &type, "a value type");
	if (ret == 0)
		ret = value(r, type, 0, &v);
	if (ret || !kept)
		return ret;
	if (strcmp(key, "general.architecture") == 0) {
		if (type != T_STRING || !v.s_kept || !v.s[0])
			return bad(r, at, "general.architecture must be a short string");
		snprintf(h->m->arch, sizeof(h->m->arch), "%s", v.s);
	} else if (strcmp(key, "tokenizer.ggml.tokens") == 0 && type == T_ARRAY) {
		h->tokens = v.count > INT64_MAX ? 0 : (int64_t)v.count;
	} else {
		note_arch_key(h, key, &v);
	}
	return 0;
}

static int tensor_info(struct reader *r, struct header *h)
{
	char name[128];
	bool kept;
	uint32_t n_dims = 0, type;
	uint64_t dims[MAX_DIMS] = {0}, offset, at = r->pos;
	int ret = string(r, name, sizeof(name), &kept, "a tensor name");

	if (ret == 0)
		ret = u32(r, &n_dims, "a tensor's dimension count");
	if (ret == 0 && (n_dims == 0 || n_dims > MAX_DIMS))
		return bad(r, at, "tensor with %" PRIu32 " dimensions (1 to %u)", n_dims, MAX_DIMS);
	for (uint32_t d = 0; ret == 0 && d < n_dims; d++)
		ret = u64(r, &dims[d], "a tensor dimension");
	if (ret == 0)
		ret = u32(r, &type, "a tensor type");
	if (ret == 0)
		ret = u64(r, &offset, "a tensor offset");
	if (ret || !kept || n_dims < 2 || dims[1] > INT64_MAX)
		return ret;
	if (strcmp(name, "output.weight") == 0)
		h->output_vocab = (int64_t)dims[1];
	else if (strcmp(name, "token_embd.weight") == 0)
		h->embd_vocab = (int64_t)dims[1];
	return 0;
}

static int preamble(struct reader *r, struct rb_gguf_model *m)
{
	char magic[4];
	int ret = get(r, magic, 4, "the magic");

	if (ret == 0 && memcmp(magic, "GGUF", 4) != 0)
		return bad(r, 0, "not a GGUF file (it does not start with \"GGUF\")");
	if (ret == 0)
		ret = u32(r, &m->version, "the version");
	if (ret == 0 && (m->version < 2 || m->version > 3))
		return bad(r, 4, "GGUF version %" PRIu32 " (2 and 3 are read)", m->version);
	if (ret == 0)
		ret = u64(r, &m->n_tensors, "the tensor count");
	if (ret == 0 && m->n_tensors > MAX_TENSORS)
		return bad(r, 8, "%" PRIu64 " tensors (at most %" PRIu64 ")", m->n_tensors,
			   MAX_TENSORS);
	if (ret == 0)
		ret = u64(r, &m->n_kv, "the key/value count");
	if (ret == 0 && m->n_kv > MAX_KV)
		return bad(r, 16, "%" PRIu64 " key/values (at most %" PRIu64 ")", m->n_kv, MAX_KV);
	return ret;
}

/* The architecture's own keys, then the vocabulary size from the best source. */
static void resolve(struct header *h)
{
	struct rb_gguf_model *m = h->m;

	for (size_t i = 0; i < h->n_pending; i++)
		if (strcmp(h->pending[i].prefix, m->arch) == 0)
			*(int64_t *)((char *)m + arch_keys[h->pending[i].key].offset) =
			    h->pending[i].value;
	if (!m->vocab)
		m->vocab = h->tokens         ? h->tokens
			   : h->output_vocab ? h->output_vocab
					     : h->embd_vocab;
}

static int read_header(struct reader *r, struct rb_gguf_model *m)
{
	struct header h = {.m = m};
	int ret = preamble(r, m);

	for (uint64_t i = 0; ret == 0 && i < m->n_kv; i++)
		ret = key_value(r, &h);
	for (uint64_t i = 0; ret == 0 && i < m->n_tensors; i++)
		ret = tensor_info(r, &h);
	if (ret == 0 && !m->arch[0])
		return bad(r, r->pos, "no general.architecture key in the header");
	if (ret == 0)
		resolve(&h);
	return ret;
}

int rb_gguf_read_stream(FILE *f, const char *label, struct rb_gguf_model *m)
{
	struct reader r = {.f = f, .path = label, .size = UINT64_MAX};
	struct stat st;
	int fd = fileno(f);

	memset(m, 0, sizeof(*m));
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		r.size = (uint64_t)st.st_size;
		r.seekable = true;
	}
	return read_header(&r, m);
}

int rb_gguf_read(const char *path, struct rb_gguf_model *m)
{
	FILE *f = fopen(path, "rb");
	int ret;

	memset(m, 0, sizeof(*m));
	if (!f)
		return rb_set_error(-errno, "%s: %s", path, strerror(errno));
	ret = rb_gguf_read_stream(f, path, m);
	fclose(f);
	return ret;
}
