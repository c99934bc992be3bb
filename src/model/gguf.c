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
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "core/fileio.h"

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

/* Past this, a stream of unknown size (a pipe) is no GGUF header: a header is a few MiB
 * (a Llama 3 vocabulary of 128k tokens and its merges), and a hostile count followed by
 * an endless stream (/dev/zero) must be refused at once, not read for hours. */
#define MAX_HEADER (UINT64_C(256) << 20)

/* The bytes come from a file on the bounded reader (core/fileio.h: a pipe or FIFO that
 * stalls is given up, a signal ends the wait) through a buffer, or from memory. */
struct reader {
	struct rb_file_in in; /* in.fd < 0: memory only */
	const char *path;
	const unsigned char *data; /* buf, or the memory */
	size_t have, off;          /* bytes in data, and read of them */
	uint64_t pos;
	uint64_t size; /* UINT64_MAX: unknown (a pipe), then truncation shows as EOF */
	bool seekable;
	unsigned char buf[16384];
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

/* n more bytes must be in the file (or, of unknown size, within MAX_HEADER). */
static int need(const struct reader *r, uint64_t n, const char *what)
{
	if (r->size == UINT64_MAX && n > MAX_HEADER - (r->pos < MAX_HEADER ? r->pos : MAX_HEADER))
		return bad(r, r->pos,
			   "%s (%" PRIu64 " bytes) would take the header past %" PRIu64
			   " MiB: no GGUF header is that large",
			   what, n, MAX_HEADER >> 20);
	if (r->size == UINT64_MAX || n <= r->size - r->pos)
		return 0;
	return bad(r, r->pos,
		   "%s (%" PRIu64 " bytes) runs past the end of the file (%" PRIu64
		   " bytes): truncated?",
		   what, n, r->size);
}

/* More bytes into the buffer: one read, what a pipe has (0 at the end of the file). */
static int refill(struct reader *r)
{
	size_t got = 0;
	int ret = r->in.fd < 0 ? 0 : rb_file_in_read_some(&r->in, r->buf, sizeof(r->buf), &got);

	if (r->in.fd >= 0) {
		r->data = r->buf;
		r->have = got;
		r->off = 0;
	}
	return ret;
}

static int get(struct reader *r, void *buf, size_t n, const char *what)
{
	unsigned char *out = buf;
	size_t done = 0;
	int ret = need(r, n, what);

	while (ret == 0 && done < n) {
		size_t part = r->have - r->off;

		if (!part && ((ret = refill(r)) != 0 || r->have == 0))
			break;
		part = r->have - r->off < n - done ? r->have - r->off : n - done;
		memcpy(out + done, r->data + r->off, part);
		r->off += part;
		done += part;
	}
	if (ret == 0 && done != n)
		ret = bad(r, r->pos + done, "the file ends inside %s: truncated?", what);
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
	uint64_t buffered = r->have - r->off;

	if (ret == 0 && r->seekable) { /* the buffer first, then past it in the file */
		uint64_t rest = n > buffered ? n - buffered : 0;

		r->off += (size_t)(n - rest);
		if (rest && lseek(r->in.fd, (off_t)rest, SEEK_CUR) < 0)
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
	uint32_t type;
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
	v->type = type;
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

/* "<arch><suffix>" keys seen before the architecture is known: resolved at the end. A
 * value present but unusable (not an integer, below 1) is kept with why, so that it is
 * reported as such, not as missing. */
struct pending {
	char prefix[64];
	size_t key;
	int64_t value;
	uint64_t at;          /* byte offset of the key */
	const char *unusable; /* NULL: the value is good */
};

struct header {
	struct rb_gguf_model *m;
	struct pending pending[64];
	size_t n_pending;
	int64_t tokens, output_vocab, embd_vocab;
	uint64_t arch_at; /* byte offset of general.architecture, when seen */
};

static const char *const type_names[T_COUNT] = {
    "a uint8", "an int8",  "a uint16", "an int16", "a uint32", "an int32",  "a float32",
    "a bool",  "a string", "an array", "a uint64", "an int64", "a float64",
};

/* Why a model number cannot be used, or NULL. */
static const char *unusable(const struct value *v)
{
	if (v->type == T_UINT64 && !v->is_int)
		return "a uint64 above 2^63";
	if (!v->is_int)
		return type_names[v->type < T_COUNT ? v->type : T_ARRAY];
	return v->i < 1 ? "below 1" : NULL;
}

static void note_arch_key(struct header *h, const char *key, const struct value *v, uint64_t at)
{
	size_t len = strlen(key);

	for (size_t k = 0; k < N_ARCH_KEYS; k++) {
		size_t sl = strlen(arch_keys[k].suffix);
		struct pending *p;

		if (len <= sl || len - sl >= sizeof(p->prefix) ||
		    strcmp(key + len - sl, arch_keys[k].suffix) != 0 ||
		    h->n_pending == sizeof(h->pending) / sizeof(h->pending[0]))
			continue;
		p = &h->pending[h->n_pending++];
		memcpy(p->prefix, key, len - sl);
		p->prefix[len - sl] = '\0';
		p->key = k;
		p->value = v->i;
		p->at = at;
		p->unusable = unusable(v);
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
		/* readers disagree on which of two wins: neither is taken */
		if (h->m->arch[0])
			return bad(r, at,
				   "general.architecture appears twice (first at byte %" PRIu64 ")",
				   h->arch_at);
		if (type != T_STRING || !v.s_kept || !v.s[0])
			return bad(r, at, "general.architecture must be a short string");
		snprintf(h->m->arch, sizeof(h->m->arch), "%s", v.s);
		h->arch_at = at;
	} else if (strcmp(key, "tokenizer.ggml.tokens") == 0 && type == T_ARRAY) {
		h->tokens = v.count > INT64_MAX ? 0 : (int64_t)v.count;
	} else {
		note_arch_key(h, key, &v, at);
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
static int resolve(const struct reader *r, struct header *h)
{
	struct rb_gguf_model *m = h->m;

	for (size_t i = 0; i < h->n_pending; i++) {
		const struct pending *p = &h->pending[i];

		if (strcmp(p->prefix, m->arch) != 0)
			continue;
		if (p->unusable)
			return bad(r, p->at,
				   "%s%s is present but unusable: %s, where a whole number from "
				   "1 is needed (give the number by hand instead of --gguf)",
				   p->prefix, arch_keys[p->key].suffix, p->unusable);
		*(int64_t *)((char *)m + arch_keys[p->key].offset) = p->value;
	}
	if (!m->vocab)
		m->vocab = h->tokens         ? h->tokens
			   : h->output_vocab ? h->output_vocab
					     : h->embd_vocab;
	return 0;
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
	return ret ? ret : resolve(r, &h);
}

int rb_gguf_read_buffer(const void *data, size_t len, const char *label, struct rb_gguf_model *m)
{
	struct reader *r = calloc(1, sizeof(*r));
	int ret;

	memset(m, 0, sizeof(*m));
	if (!r)
		return rb_set_error(-ENOMEM, "%s: out of memory", label);
	*r = (struct reader){.in.fd = -1, .path = label, .data = data, .have = len, .size = len};
	ret = read_header(r, m);
	free(r);
	return ret;
}

int rb_gguf_read(const char *path, struct rb_gguf_model *m)
{
	struct reader *r = calloc(1, sizeof(*r));
	int ret;

	memset(m, 0, sizeof(*m));
	if (!r)
		return rb_set_error(-ENOMEM, "%s: out of memory", path);
	ret = rb_file_in_open(&r->in, path);
	if (ret) {
		free(r);
		return ret;
	}
	r->path = path;
	r->size = UINT64_MAX;
	if (S_ISREG(r->in.st.st_mode)) {
		r->size = (uint64_t)r->in.st.st_size;
		r->seekable = true;
	}
	ret = read_header(r, m);
	rb_file_in_close(&r->in);
	free(r);
	return ret;
}
