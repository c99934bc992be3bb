/* The weight matmuls of a model's llama.cpp graph, named as the graph names them: what a
 * shapes file lists for the ggml-rknn backend, which offloads a MUL_MAT node only when
 * its name and shape match a pair.
 *
 * Names: llama.cpp names a tensor with cb(tensor, "name", il), which becomes "name-il",
 * or just "name" for il < 0 (llama-context.cpp, graph_get_cb). In the graph builders of
 * the seed revision (Mhrooz/llama.cpp d8744d571dc4):
 *   llama (llm_build_llama, llama-model.cpp 4137-4300): Qcur, Kcur, Vcur are named on
 *     the matmul itself (4170-4185); ffn_up and ffn_gate inside build_ffn
 *     (llama-graph.cpp 725-748); the down projection is the tensor build_ffn returns,
 *     named ffn_out by the builder (4245); the vocabulary projection result_output
 *     (4299).
 *   qwen2 (llm_build_qwen2, llama-model.cpp 6007-6100): Q, K, V get their bias added
 *     before the name, so the matmul nodes are unnamed; ffn_up, ffn_gate, ffn_out and
 *     result_output as in llama.
 * The attention output projection (wo) is unnamed in both (llama-graph.cpp 1437-1439),
 * and the attention's own products (K·Q, V·softmax) have no weights: none is listed.
 *
 * Shapes (src0 = M×K, src1 = K×N): Qcur K = embd, N = heads·head_dim; Kcur and Vcur
 * N = heads_kv·head_dim; ffn_up and ffn_gate N = ff; ffn_out K = ff, N = embd;
 * result_output N = vocab. M is the number of tokens of the batch. When generating, the
 * last layer keeps only the rows whose logits are wanted (ggml_get_rows on
 * inp_out_ids, llama-model.cpp 4216-4221): one row, so from the last layer's ffn_up on,
 * and for result_output, M is 1 unless every token's logits are asked for
 * (perplexity, embeddings). */
#ifndef RB_MODEL_GRAPH_H
#define RB_MODEL_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rknn_bench/shape.h"

enum rb_graph_node {
	RB_NODE_QCUR = 0,
	RB_NODE_KCUR,
	RB_NODE_VCUR,
	RB_NODE_FFN_UP,
	RB_NODE_FFN_GATE,
	RB_NODE_FFN_OUT,
	RB_NODE_RESULT_OUTPUT,
	RB_NODE_COUNT,
};

const char *rb_graph_node_name(enum rb_graph_node node); /* "Qcur", ..., "result_output" */
/* A comma-separated list of node names to a mask; -EINVAL naming the unknown one. */
int rb_graph_nodes_parse(const char *list, unsigned *mask);

/* A model's dimensions (from a GGUF header or flags). */
struct rb_graph_model {
	char arch[64];
	int64_t embd, ff, layers, heads, heads_kv, head_dim, vocab; /* head_dim 0: embd/heads */
};

struct rb_graph_opts {
	const int64_t *tokens; /* batch sizes: 1 decode, more prefill */
	size_t n_tokens;
	unsigned nodes;  /* bit (1 << node); 0: every node the architecture names */
	bool all_logits; /* every token's logits (perplexity), not the last one's only */
	enum rb_dtype dtype;
};

struct rb_graph_pair {
	char name[48];
	struct rb_shape shape;
};

/* The pairs in graph order per batch size (node kind, then layer), each (name, shape)
 * once. -EINVAL (a message) for an architecture whose names are not known here, a
 * missing or impossible dimension, or a node the architecture does not name. *out is
 * malloc'ed. */
int rb_graph_pairs(const struct rb_graph_model *m, const struct rb_graph_opts *o,
		   struct rb_graph_pair **out, size_t *n);

#endif
