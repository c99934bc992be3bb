/* The header of a GGUF model file: the numbers that fix a model's matmul shapes.
 *
 * GGUF (the ggml project's docs/gguf.md): little-endian; "GGUF", a uint32 version (2 or
 * 3: version 1 had 32-bit counts), a uint64 tensor count and a uint64 key/value count;
 * then the key/values (a string key, a uint32 type, the value: integers, float32/64,
 * bool, a string = uint64 length + bytes, or an array = uint32 element type + uint64
 * count + elements); then the tensor infos (a string name, a uint32 dimension count, that
 * many uint64 dimensions, a uint32 type, a uint64 offset). The tensor data that follows
 * is never read.
 *
 * The reader streams the header once, checks every length against what is left of the
 * file (and against fixed limits) before it reads or skips it, and refuses a malformed
 * or truncated file with -EINVAL and a message naming the file and the byte offset. */
#ifndef RB_MODEL_GGUF_H
#define RB_MODEL_GGUF_H

#include <stdint.h>
#include <stdio.h>

/* What a GGUF says of a transformer's dimensions; 0 where the file does not say. */
struct rb_gguf_model {
	char arch[64];    /* general.architecture, e.g. "llama", "qwen2" */
	int64_t embd;     /* <arch>.embedding_length */
	int64_t ff;       /* <arch>.feed_forward_length */
	int64_t layers;   /* <arch>.block_count */
	int64_t heads;    /* <arch>.attention.head_count */
	int64_t heads_kv; /* <arch>.attention.head_count_kv */
	int64_t head_dim; /* <arch>.attention.key_length */
	/* <arch>.vocab_size, else the length of tokenizer.ggml.tokens, else the second
	 * dimension of the tensor output.weight (or token_embd.weight) */
	int64_t vocab;
	uint32_t version;
	uint64_t n_tensors, n_kv;
};

/* 0; -EINVAL (not a GGUF, malformed, truncated: the message names the byte offset);
 * or the open's -errno. */
int rb_gguf_read(const char *path, struct rb_gguf_model *m);
/* The same from memory (`label` names it in messages; the fuzz target). */
int rb_gguf_read_buffer(const void *data, size_t len, const char *label, struct rb_gguf_model *m);

#endif
