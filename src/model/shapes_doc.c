/* The shapes file `rknn-bench shapes` writes (model/shapes_doc.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "model/ggml_rknn.h"
#include "model/gguf.h"
#include "model/shapes_doc.h"

/* The seed backend's kernel table holds its contexts, three per pair at init. */
#define SEED_MAX_PAIRS (RB_GGML_RKNN_MAX_CONTEXTS / RB_GGML_RKNN_CORES)

static cJSON *pair_json(const struct rb_shape *s, const char *name)
{
	cJSON *p = cJSON_CreateObject();
	cJSON *s0 = cJSON_AddObjectToObject(p, "src0"), *s1 = cJSON_AddObjectToObject(p, "src1");

	cJSON_AddNumberToObject(s0, "row", (double)s->m);
	cJSON_AddNumberToObject(s0, "col", (double)s->k);
	cJSON_AddNumberToObject(s1, "row", (double)s->k);
	cJSON_AddNumberToObject(s1, "col", (double)s->n);
	cJSON_AddStringToObject(p, "name", name);
	return p;
}

static void note(const struct rb_shapes_doc_opts *o, const char *fmt, ...)
{
	char text[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (o->note)
		o->note(o->note_ctx, text);
}

static void warn_unusable(const struct rb_shapes_doc_opts *o, const struct rb_graph_pair *p,
			  const char *why, const char *then)
{
	note(o,
	     "%s (%" PRId64 "x%" PRId64 "x%" PRId64 "): the ggml-rknn backend cannot take it: %s%s",
	     p->name, p->shape.m, p->shape.k, p->shape.n, why, then);
}

/* Every pair, each one the backend cannot create warned about and marked. */
static size_t add_pairs(const struct rb_shapes_doc_opts *o, cJSON *arr,
			const struct rb_graph_pair *pairs, size_t n, int threads)
{
	size_t unusable = 0;

	for (size_t i = 0; i < n; i++) {
		cJSON *p = pair_json(&pairs[i].shape, pairs[i].name);
		char why[256];

		if (!rb_ggml_rknn_usable(&pairs[i].shape, threads, why, sizeof(why))) {
			warn_unusable(o, &pairs[i], why, "");
			cJSON_AddStringToObject(p, "ggml_rknn_unusable", why);
			unusable++;
		}
		cJSON_AddItemToArray(arr, p);
	}
	return unusable;
}

static cJSON *slice_json(const struct rb_graph_pair *pair, const struct rb_ggml_rknn_slice *sl)
{
	struct rb_shape s = pair->shape;
	char name[128];
	cJSON *p, *info;

	s.n = sl->n_end - sl->n_begin;
	snprintf(name, sizeof(name), "%s:%s%d:%" PRId64 "-%" PRId64, pair->name,
		 sl->core >= 0 ? "core" : "thread", sl->core >= 0 ? sl->core : sl->thread,
		 sl->n_begin, sl->n_end);
	p = pair_json(&s, name);
	if (sl->core >= 0)
		cJSON_AddNumberToObject(p, "core", sl->core);
	else
		cJSON_AddNullToObject(p, "core");
	info = cJSON_AddObjectToObject(p, "slice");
	cJSON_AddStringToObject(info, "of", pair->name);
	cJSON_AddNumberToObject(info, "n", (double)pair->shape.n);
	cJSON_AddNumberToObject(info, "n_begin", (double)sl->n_begin);
	cJSON_AddNumberToObject(info, "n_end", (double)sl->n_end);
	cJSON_AddStringToObject(info, "created", sl->at_init ? "init" : "run");
	if (sl->thread >= 0)
		cJSON_AddNumberToObject(info, "thread", sl->thread);
	else
		cJSON_AddNullToObject(info, "thread");
	cJSON_AddBoolToObject(info, "runs", sl->thread >= 0);
	return p;
}

/* Each pair as the backend creates it: one pair per context; the unusable left out. */
static size_t add_slices(const struct rb_shapes_doc_opts *o, cJSON *arr,
			 const struct rb_graph_pair *pairs, size_t n, int threads)
{
	struct rb_ggml_rknn_slice sl[RB_GGML_RKNN_MAX_SLICES];
	size_t unusable = 0;

	for (size_t i = 0; i < n; i++) {
		int count = rb_ggml_rknn_slices(&pairs[i].shape, threads, sl);

		if (count < 0) {
			warn_unusable(o, &pairs[i], rb_last_error(), "; left out");
			unusable++;
		}
		for (int j = 0; j < count; j++)
			cJSON_AddItemToArray(arr, slice_json(&pairs[i], &sl[j]));
	}
	return unusable;
}

/* The contexts the backend makes for the pairs it can create, init and run time. */
static size_t backend_contexts(const struct rb_graph_pair *pairs, size_t n, int threads)
{
	struct rb_ggml_rknn_slice sl[RB_GGML_RKNN_MAX_SLICES];
	size_t count = 0;

	for (size_t i = 0; i < n; i++) {
		int c = rb_ggml_rknn_slices(&pairs[i].shape, threads, sl);

		count += c > 0 ? (size_t)c : 0;
	}
	return count;
}

static void warn_table(const struct rb_shapes_doc_opts *o, const struct rb_graph_pair *pairs,
		       size_t n, int threads)
{
	size_t contexts = backend_contexts(pairs, n, threads);

	if (n > SEED_MAX_PAIRS)
		note(
		    o,
		    "%zu pairs; the seed ggml-rknn backend's kernel table holds %d contexts, three "
		    "per pair, so at most %d pairs: later ones overwrite earlier ones",
		    n, RB_GGML_RKNN_MAX_CONTEXTS, SEED_MAX_PAIRS);
	else if (contexts > RB_GGML_RKNN_MAX_CONTEXTS)
		note(
		    o,
		    "%zu pairs make %zu contexts with %d threads (three per pair at init, the rest "
		    "at run time); the seed ggml-rknn backend's kernel table holds %d: later ones "
		    "overwrite earlier ones",
		    n, contexts, threads, RB_GGML_RKNN_MAX_CONTEXTS);
}

cJSON *rb_shapes_doc(const struct rb_shapes_doc_opts *a, const struct rb_graph_model *m,
		     const struct rb_graph_pair *pairs, size_t n, size_t *unusable)
{
	cJSON *doc = cJSON_CreateObject(), *arr;
	char about[640];

	warn_table(a, pairs, n, a->threads);
	snprintf(about, sizeof(about),
		 "written by rknn-bench shapes from %s%s: %s, %" PRId64 " layers, embd %" PRId64
		 ", ff %" PRId64 ", heads %" PRId64 "/%" PRId64 ", vocab %" PRId64
		 "; names as llama.cpp's graph gives them%s",
		 a->gguf ? a->gguf : "the numbers given", a->gguf ? " (header)" : "", m->arch,
		 m->layers, m->embd, m->ff, m->heads, m->heads_kv, m->vocab,
		 a->for_ggml_rknn ? "; each pair split into the single-core contexts the seed "
				    "ggml-rknn backend creates for it (not a mat_kernel_size.json "
				    "for the backend itself: for tune)"
				  : "");
	cJSON_AddStringToObject(doc, "comment", about);
	cJSON_AddStringToObject(doc, "dtype", rb_dtype_name(a->dtype));
	if (a->for_ggml_rknn) {
		cJSON_AddStringToObject(doc, "target", "ggml-rknn");
		cJSON_AddNumberToObject(doc, "threads", a->threads);
	}
	arr = cJSON_AddArrayToObject(doc, "pairs");
	if (arr)
		*unusable = a->for_ggml_rknn ? add_slices(a, arr, pairs, n, a->threads)
					     : add_pairs(a, arr, pairs, n, a->threads);
	return doc;
}

int rb_shapes_doc_write(FILE *f, void *ctx)
{
	const cJSON *doc = ctx, *pairs = cJSON_GetObjectItemCaseSensitive(doc, "pairs");
	bool ok = fputs("{", f) >= 0;

	for (const cJSON *item = doc->child; ok && item; item = item->next) {
		char *text = item == pairs ? NULL : cJSON_PrintUnformatted(item);

		if (item == pairs)
			continue;
		ok = text && fprintf(f, "\"%s\": %s,\n ", item->string, text) >= 0;
		cJSON_free(text);
	}
	ok = ok && fputs("\"pairs\": [\n", f) >= 0;
	for (const cJSON *p = pairs ? pairs->child : NULL; ok && p; p = p->next) {
		char *text = cJSON_PrintUnformatted(p);

		ok = text && fprintf(f, "  %s%s\n", text, p->next ? "," : "") >= 0;
		cJSON_free(text);
	}
	ok = ok && fputs("]}\n", f) >= 0;
	return ok ? 0 : rb_set_error(-EIO, "cannot write the shapes file");
}

int rb_shapes_model(const char *gguf, const struct rb_graph_model *f, struct rb_graph_model *m)
{
	struct rb_gguf_model g;

	memset(m, 0, sizeof(*m));
	if (gguf) {
		int ret = rb_gguf_read(gguf, &g);

		if (ret < 0)
			return ret;
		*m = (struct rb_graph_model){.embd = g.embd,
					     .ff = g.ff,
					     .layers = g.layers,
					     .heads = g.heads,
					     .heads_kv = g.heads_kv,
					     .head_dim = g.head_dim,
					     .vocab = g.vocab};
		snprintf(m->arch, sizeof(m->arch), "%s", g.arch);
	}
	if (f->arch[0])
		snprintf(m->arch, sizeof(m->arch), "%s", f->arch);
	m->embd = f->embd ? f->embd : m->embd;
	m->ff = f->ff ? f->ff : m->ff;
	m->layers = f->layers ? f->layers : m->layers;
	m->heads = f->heads ? f->heads : m->heads;
	m->heads_kv = f->heads_kv ? f->heads_kv : m->heads_kv;
	m->head_dim = f->head_dim ? f->head_dim : m->head_dim;
	m->vocab = f->vocab ? f->vocab : m->vocab;
	if (!m->arch[0])
		return rb_set_error(
		    -EINVAL, "give --gguf MODEL.gguf, or --arch and the numbers (see --help)");
	return 0;
}
