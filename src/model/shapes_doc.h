/* The shapes file of a model's graph (`rknn-bench shapes`): its weight matmuls under
 * the graph's names, or with for_ggml_rknn each pair as the seed ggml-rknn backend
 * creates it (one per single-core context, docs/tuned-json.md). A pair the backend
 * cannot create, and a kernel table that overflows, are notes. */
#ifndef RB_MODEL_SHAPES_DOC_H
#define RB_MODEL_SHAPES_DOC_H

#include <stdbool.h>
#include <stdio.h>

#include <cJSON.h>

#include "model/graph.h"

struct rb_shapes_doc_opts {
	const char *gguf; /* the model file the numbers came from, or NULL */
	enum rb_dtype dtype;
	bool for_ggml_rknn;
	int threads; /* llama.cpp's thread count, over which the backend splits N */
	void (*note)(void *ctx, const char *text);
	void *note_ctx;
};

/* The model's numbers: the GGUF header's (gguf not NULL), each one `given` (not 0 or
 * "") over them. 0, or a negative errno (a bad GGUF, no architecture). */
int rb_shapes_model(const char *gguf, const struct rb_graph_model *given, struct rb_graph_model *m);
/* The document (NULL: out of memory); *unusable: the pairs the backend cannot create. */
cJSON *rb_shapes_doc(const struct rb_shapes_doc_opts *a, const struct rb_graph_model *m,
		     const struct rb_graph_pair *pairs, size_t n, size_t *unusable);
/* An rb_file_writer of the document, one pair per line as the shipped files are. */
int rb_shapes_doc_write(FILE *f, void *doc);

#endif
