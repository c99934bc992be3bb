/* rknn-bench shapes: a shapes file from a model (its GGUF header, or its numbers). */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "model/ggml_rknn.h"
#include "model/gguf.h"
#include "model/shapes_doc.h"

#define MAX_TOKENS 16

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

static void warn(void *ctx, const char *text)
{
	(void)ctx;
	rb_warn("%s", text);
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
	if (rb_shapes_model(a->gguf, &a->given, &m) < 0)
		return cli_fail(RB_EXIT_USAGE, "%s", rb_last_error());
	if (rb_graph_pairs(&m, &a->opts, &pairs, &n) < 0)
		return cli_fail(RB_EXIT_USAGE, "%s%s%s", a->gguf ? a->gguf : "",
				a->gguf ? ": " : "", rb_last_error());
	doc = rb_shapes_doc(&(struct rb_shapes_doc_opts){a->gguf, a->opts.dtype, a->for_ggml_rknn,
							 a->threads, warn, NULL},
			    &m, pairs, n, &unusable);
	free(pairs);
	if (unusable)
		fprintf(stderr,
			"rknn-bench: warning: %zu of %zu pairs cannot be created by the ggml-rknn "
			"backend (with %d threads)%s\n",
			unusable, n, a->threads,
			a->for_ggml_rknn ? ": left out" : ": see the warnings above");
	ret = doc ? cli_write_file(a->out, rb_shapes_doc_write, doc)
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
