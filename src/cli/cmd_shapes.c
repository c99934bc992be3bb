/* rknn-bench shapes: a shapes file from a model (its GGUF header, or its numbers). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>

#include <cJSON.h>

#include "cli/cli.h"
#include "core/error.h"
#include "core/fileio.h"
#include "model/ggml_rknn.h"
#include "model/gguf.h"
#include "model/graph.h"

/* The seed backend's kernel table holds its contexts, three per pair at init. */
#define SEED_MAX_PAIRS (RB_GGML_RKNN_MAX_CONTEXTS / RB_GGML_RKNN_CORES)
#define MAX_TOKENS     16

struct shapes_args {
	const char *gguf, *out;
	struct rb_graph_model given; /* flags; 0 / "": not given */
	int64_t tokens[MAX_TOKENS];
	struct rb_graph_opts opts;
	bool for_ggml_rknn; /* --for ggml-rknn: the backend's slices */
	int threads;        /* llama.cpp's thread count at run time */
};

static int parse_tokens(struct shapes_args *a, const char *text)
{
	const char *p = text;

	a->opts.n_tokens = 0;
	while (*p) {
		char item[32];
		size_t len = strcspn(p, ",");
		long v;

		if (a->opts.n_tokens == MAX_TOKENS || len == 0 || len >= sizeof(item))
			return rb_error("--tokens '%s': give up to %d batch sizes, e.g. 1,128,512",
					text, MAX_TOKENS);
		memcpy(item, p, len);
		item[len] = '\0';
		if (cli_parse_int("--tokens", item, 1, 1L << 20, &v) < 0)
			return -1;
		a->tokens[a->opts.n_tokens++] = v;
		p += len + (p[len] == ',');
	}
	return a->opts.n_tokens ? 0 : rb_error("--tokens is empty");
}

static void shapes_init(void *o)
{
	struct shapes_args *a = o;

	a->out = "-";
	a->tokens[0] = 1;
	a->opts.tokens = a->tokens;
	a->opts.n_tokens = 1;
	a->threads = RB_GGML_RKNN_CORES; /* the backend's own count at init */
}

static int set_option(const struct cli_opt *opt, void *group, const char *arg)
{
	struct shapes_args *a = group;

	if (strcmp(opt->name, "tokens") == 0)
		return parse_tokens(a, arg);
	if (strcmp(opt->name, "arch") == 0) {
		snprintf(a->given.arch, sizeof(a->given.arch), "%s", arg);
		return 0;
	}
	if (strcmp(opt->name, "for") == 0) {
		a->for_ggml_rknn = true;
		return 0;
	}
	return rb_graph_nodes_parse(arg, &a->opts.nodes) < 0
		   ? rb_error("--nodes: %s", rb_last_error())
		   : 0;
}

/* The GGUF's numbers, then each flag given over them. */
static int model_numbers(const struct shapes_args *a, struct rb_graph_model *m)
{
	const struct rb_graph_model *f = &a->given;
	struct rb_gguf_model g;

	memset(m, 0, sizeof(*m));
	if (a->gguf) {
		if (rb_gguf_read(a->gguf, &g) < 0)
			return rb_error("%s", rb_last_error());
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
		return rb_error("give --gguf MODEL.gguf, or --arch and the numbers (see --help)");
	return 0;
}

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

static void warn_unusable(const struct rb_graph_pair *p, const char *why, const char *then)
{
	fprintf(stderr,
		"rknn-bench: warning: %s (%" PRId64 "x%" PRId64 "x%" PRId64
		"): the ggml-rknn backend cannot take it: %s%s\n",
		p->name, p->shape.m, p->shape.k, p->shape.n, why, then);
}

/* Every pair, each one the backend cannot create warned about and marked. */
static size_t add_pairs(cJSON *arr, const struct rb_graph_pair *pairs, size_t n, int threads)
{
	size_t unusable = 0;

	for (size_t i = 0; i < n; i++) {
		cJSON *p = pair_json(&pairs[i].shape, pairs[i].name);
		char why[256];

		if (!rb_ggml_rknn_usable(&pairs[i].shape, threads, why, sizeof(why))) {
			warn_unusable(&pairs[i], why, "");
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
static size_t add_slices(cJSON *arr, const struct rb_graph_pair *pairs, size_t n, int threads)
{
	struct rb_ggml_rknn_slice sl[RB_GGML_RKNN_MAX_SLICES];
	size_t unusable = 0;

	for (size_t i = 0; i < n; i++) {
		int count = rb_ggml_rknn_slices(&pairs[i].shape, threads, sl);

		if (count < 0) {
			warn_unusable(&pairs[i], rb_last_error(), "; left out");
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

static void warn_table(const struct rb_graph_pair *pairs, size_t n, int threads)
{
	size_t contexts = backend_contexts(pairs, n, threads);

	if (n > SEED_MAX_PAIRS)
		fprintf(stderr,
			"rknn-bench: warning: %zu pairs; the seed ggml-rknn backend's kernel table "
			"holds %d contexts, three per pair, so at most %d pairs: later ones "
			"overwrite earlier ones\n",
			n, RB_GGML_RKNN_MAX_CONTEXTS, SEED_MAX_PAIRS);
	else if (contexts > RB_GGML_RKNN_MAX_CONTEXTS)
		fprintf(stderr,
			"rknn-bench: warning: %zu pairs make %zu contexts with %d threads (three "
			"per pair at init, the rest at run time); the seed ggml-rknn backend's "
			"kernel table holds %d: later ones overwrite earlier ones\n",
			n, contexts, threads, RB_GGML_RKNN_MAX_CONTEXTS);
}

static cJSON *shapes_doc(const struct shapes_args *a, const struct rb_graph_model *m,
			 const struct rb_graph_pair *pairs, size_t n, size_t *unusable)
{
	cJSON *doc = cJSON_CreateObject(), *arr;
	char about[640];

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
	cJSON_AddStringToObject(doc, "dtype", rb_dtype_name(a->opts.dtype));
	if (a->for_ggml_rknn) {
		cJSON_AddStringToObject(doc, "target", "ggml-rknn");
		cJSON_AddNumberToObject(doc, "threads", a->threads);
	}
	arr = cJSON_AddArrayToObject(doc, "pairs");
	if (arr)
		*unusable = a->for_ggml_rknn ? add_slices(arr, pairs, n, a->threads)
					     : add_pairs(arr, pairs, n, a->threads);
	return doc;
}

/* The document with one pair per line, as the shipped shapes files are written. */
static int write_lines(FILE *f, void *ctx)
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

static int shapes_run(void *o, const struct cli_args *args)
{
	struct shapes_args *a = o;
	struct rb_graph_model m;
	struct rb_graph_pair *pairs = NULL;
	size_t n = 0, unusable = 0;
	cJSON *doc;
	int ret;

	(void)args;
	if (a->for_ggml_rknn && a->opts.dtype != RB_DTYPE_FP16)
		return cli_fail(RB_EXIT_USAGE,
				"--for ggml-rknn --dtype %s: the backend creates every context as "
				"fp16 (RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32); leave --dtype out",
				rb_dtype_name(a->opts.dtype));
	if (model_numbers(a, &m) < 0)
		return RB_EXIT_USAGE;
	if (rb_graph_pairs(&m, &a->opts, &pairs, &n) < 0)
		return cli_fail(RB_EXIT_USAGE, "%s%s%s", a->gguf ? a->gguf : "",
				a->gguf ? ": " : "", rb_last_error());
	warn_table(pairs, n, a->threads);
	doc = shapes_doc(a, &m, pairs, n, &unusable);
	free(pairs);
	if (unusable)
		fprintf(stderr,
			"rknn-bench: warning: %zu of %zu pairs cannot be created by the ggml-rknn "
			"backend (with %d threads)%s\n",
			unusable, n, a->threads,
			a->for_ggml_rknn ? ": left out" : ": see the warnings above");
	ret = doc ? cli_write_file(a->out, write_lines, doc)
		  : cli_fail(RB_EXIT_USAGE, "out of memory");
	cJSON_Delete(doc);
	return ret;
}

#define S(field) offsetof(struct shapes_args, field)
#define DIM(name_, field_, help_)                                                                  \
	{                                                                                          \
		name_, 0, CLI_LONG, "N", .offset = S(given.field_), .min = 1, .max = 1L << 31,     \
					 .section = CLI_SEC_MODEL, .help = help_                   \
	}

static const struct cli_opt shapes_opts[] = {
    {"gguf", 0, CLI_STR, "FILE", .offset = S(gguf), .path = CLI_IN, .section = CLI_SEC_MODEL,
     .help = "read the numbers from a GGUF file's header and metadata\n"
	     "(the tensor data is never read)"},
    {"arch", 0, CLI_CALL, "A", "llama|qwen2", .set = set_option, .section = CLI_SEC_MODEL,
     .help = "llama or qwen2: whose graph names to use"},
    DIM("embd", embd, "the numbers by hand (each overrides the GGUF's):"),
    DIM("ff", ff, "feed-forward size"),
    DIM("layers", layers, "layers"),
    DIM("heads", heads, "attention heads"),
    DIM("heads-kv", heads_kv, "key/value heads"),
    DIM("head-dim", head_dim, "head dimension"),
    DIM("vocab", vocab, "vocabulary size"),
    {"tokens", 0, CLI_CALL, "LIST", .set = set_option, .section = CLI_SEC_LIST,
     .help = "batch sizes, e.g. 1,128,512: 1 is decode (one token), more is\n"
	     "a prompt (prefill); default 1"},
    {"nodes", 0, CLI_CALL, "LIST", .set = set_option, .section = CLI_SEC_LIST,
     .help = "Qcur,Kcur,Vcur,ffn_up,ffn_gate,ffn_out,result_output (default:\n"
	     "every one the architecture names; qwen2 names no Q/K/V)"},
    {"all-logits", 0, CLI_BOOL, .offset = S(opts.all_logits), .section = CLI_SEC_LIST,
     .help = "the last layer and result_output for every token of a prompt\n"
	     "(perplexity, embeddings); default: the last token only, as\n"
	     "when generating"},
    {"dtype", 0, CLI_ENUM, "fp16|int8", "fp16|int8", S(opts.dtype), .set = cli_set_dtype,
     .section = CLI_SEC_LIST, .help = "written as the file's dtype (default fp16)"},
    {"output", 'o', CLI_STR, "FILE", .offset = S(out), .path = CLI_OUT, .section = CLI_SEC_LIST,
     .help = "write FILE (through a temporary file); default and '-': stdout"},
    {"threads", 0, CLI_INT, "N", .offset = S(threads), .min = 1, .max = RB_GGML_RKNN_MAX_THREADS,
     .section = CLI_SEC_BACKEND,
     .help = "llama.cpp's thread count (-t, -tb), over which the backend\n"
	     "splits each run's columns (default 3)"},
    {"for", 0, CLI_ENUM, "ggml-rknn", "ggml-rknn", .set = set_option, .section = CLI_SEC_BACKEND,
     .help = "write each pair as the backend creates it: one pair per\n"
	     "single-core context (its slice of N), named\n"
	     "PAIR:coreC:BEGIN-END (PAIR:threadT:... when the backend sets\n"
	     "no core), with \"core\": C (0..2, or null) and \"slice\":\n"
	     "{\"of\", \"n\", \"n_begin\", \"n_end\", \"created\": \"init\"|\"run\",\n"
	     "\"thread\", \"runs\"}: the init split (N/32/3*32 per core, the\n"
	     "last takes the rest), and the contexts the run creates where\n"
	     "its split over --threads differs; input for tune, so the\n"
	     "shim (matching M, K, N) finds a tuned config for each slice.\n"
	     "Not for the backend's own mat_kernel_size.json (it matches\n"
	     "the graph's names and whole N): give it the plain file"},
    {NULL},
};

const struct cli_command cli_cmd_shapes = {
    .name = "shapes",
    .summary = "write a shapes file from a model (GGUF header or its numbers)",
    .synopsis =
	"(--gguf MODEL.gguf | --arch A --embd N --ff N --layers N\n"
	"                          --heads N --heads-kv N --vocab N [--head-dim N])\n"
	"                         [--tokens 1,128,512] [--nodes LIST] [--all-logits]\n"
	"                         [--dtype fp16|int8] [--for ggml-rknn] [--threads N] [-o FILE]",
    .about =
	"Write a shapes file (mat_kernel_size.json) listing the weight matmuls of a model's\n"
	"llama.cpp graph under the names the graph gives them (ffn_up-0, ..., result_output),\n"
	"which the ggml-rknn backend matches, with their shapes for each batch size.\n",
    .notes =
	"A pair the ggml-rknn backend cannot create (K not a multiple of 32, N not a multiple\n"
	"of 32 or below 96, a thread left without columns) is a warning naming the pair and\n"
	"why, and is marked in the file (\"ggml_rknn_unusable\": why); --for ggml-rknn leaves\n"
	"it out. More pairs than the seed backend's kernel table holds (85) is a warning.\n"
	"Exit codes: 0 ok, 2 usage or input error (a bad GGUF names the byte offset, an\n"
	"output that cannot be written).\n",
    .groups = {CLI_GROUP(shapes_opts, 0)},
    .size = sizeof(struct shapes_args),
    .init = shapes_init,
    .run = shapes_run,
};
