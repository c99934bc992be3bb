/* The weight matmuls of a llama.cpp graph (graph.h). */
#include "model/graph.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "results/totals.h"

static const char *const node_names[RB_NODE_COUNT] = {
    "Qcur", "Kcur", "Vcur", "ffn_up", "ffn_gate", "ffn_out", "result_output",
};

#define ALL_NODES ((1u << RB_NODE_COUNT) - 1)
#define FFN_NODES                                                                                  \
	((1u << RB_NODE_FFN_UP) | (1u << RB_NODE_FFN_GATE) | (1u << RB_NODE_FFN_OUT) |             \
	 (1u << RB_NODE_RESULT_OUTPUT))

/* The architectures whose graph builders we read, and the matmuls each names. */
static const struct {
	const char *arch;
	unsigned nodes;
} archs[] = {
    {"llama", ALL_NODES},
    {"qwen2", FFN_NODES},
};

const char *rb_graph_node_name(enum rb_graph_node node)
{
	return (unsigned)node < RB_NODE_COUNT ? node_names[node] : "unknown";
}

int rb_graph_nodes_parse(const char *list, unsigned *mask)
{
	const char *p = list;

	*mask = 0;
	while (*p) {
		size_t len = strcspn(p, ",");
		unsigned n = 0;

		while (n < RB_NODE_COUNT &&
		       (strlen(node_names[n]) != len || strncmp(node_names[n], p, len) != 0))
			n++;
		if (n == RB_NODE_COUNT)
			return rb_set_error(
			    -EINVAL,
			    "node '%.*s' is not a weight matmul of the graph: use "
			    "Qcur, Kcur, Vcur, ffn_up, ffn_gate, ffn_out, result_output",
			    (int)len, p);
		*mask |= 1u << n;
		p += len + (p[len] == ',');
	}
	return *mask ? 0 : rb_set_error(-EINVAL, "an empty list of nodes");
}

static int arch_nodes(const char *arch, unsigned *nodes)
{
	for (size_t i = 0; i < sizeof(archs) / sizeof(archs[0]); i++)
		if (strcmp(archs[i].arch, arch) == 0) {
			*nodes = archs[i].nodes;
			return 0;
		}
	return rb_set_error(-EINVAL,
			    "architecture '%s': the names of its graph's matmuls are known for "
			    "llama and qwen2 only (--arch llama uses llama's)",
			    arch);
}

static int check_dims(const struct rb_graph_model *m)
{
	const struct {
		const char *flag;
		int64_t v;
	} dims[] = {{"--embd", m->embd},         {"--ff", m->ff},
		    {"--layers", m->layers},     {"--heads", m->heads},
		    {"--heads-kv", m->heads_kv}, {"--vocab", m->vocab}};

	for (size_t i = 0; i < sizeof(dims) / sizeof(dims[0]); i++)
		if (dims[i].v < 1 || dims[i].v > RB_SHAPE_DIM_MAX)
			return rb_set_error(-EINVAL, "%s is %" PRId64 ": give 1 to 2^31 (%s)",
					    dims[i].flag, dims[i].v,
					    dims[i].v ? "out of range" : "the model does not say");
	if (m->layers > 100000)
		return rb_set_error(-EINVAL, "--layers %" PRId64 ": at most 100000", m->layers);
	if (m->head_dim > RB_SHAPE_DIM_MAX) /* then heads x head_dim fits in 64 bits */
		return rb_set_error(-EINVAL, "--head-dim is %" PRId64 ": give 1 to 2^31",
				    m->head_dim);
	if (m->head_dim < 0 || (!m->head_dim && m->embd % m->heads))
		return rb_set_error(-EINVAL,
				    "--embd %" PRId64 " is not a multiple of --heads %" PRId64
				    ": give --head-dim",
				    m->embd, m->heads);
	return 0;
}

/* K and N of a node. */
static void node_kn(const struct rb_graph_model *m, enum rb_graph_node node, int64_t *k, int64_t *n)
{
	int64_t head_dim = m->head_dim ? m->head_dim : m->embd / m->heads;

	*k = node == RB_NODE_FFN_OUT ? m->ff : m->embd;
	switch (node) {
	case RB_NODE_QCUR:
		*n = m->heads * head_dim;
		break;
	case RB_NODE_KCUR:
	case RB_NODE_VCUR:
		*n = m->heads_kv * head_dim;
		break;
	case RB_NODE_FFN_UP:
	case RB_NODE_FFN_GATE:
		*n = m->ff;
		break;
	case RB_NODE_FFN_OUT:
		*n = m->embd;
		break;
	default:
		*n = m->vocab;
	}
}

/* The pairs found so far, with a hash set of their indices so that a repeat is found in
 * constant time: the scan of the whole list it replaces made 8,000 layers take 20 s. */
struct pairs {
	struct rb_graph_pair *v;
	size_t n, cap;
	size_t *slot;   /* index + 1 of a pair, 0 for a free slot; open addressing */
	size_t n_slots; /* a power of two, at least twice n */
};

static uint64_t pair_hash(const struct rb_graph_pair *x)
{
	uint64_t h = 0xcbf29ce484222325u; /* FNV-1a over the name, then the dimensions */
	const int64_t dims[] = {x->shape.m, x->shape.k, x->shape.n};

	for (const char *c = x->name; *c; c++)
		h = (h ^ (unsigned char)*c) * 0x100000001b3u;
	for (size_t i = 0; i < 3; i++)
		h = (h ^ (uint64_t)dims[i]) * 0x100000001b3u;
	return h;
}

static bool same_pair(const struct rb_graph_pair *a, const struct rb_graph_pair *b)
{
	return strcmp(a->name, b->name) == 0 && a->shape.m == b->shape.m &&
	       a->shape.k == b->shape.k && a->shape.n == b->shape.n;
}

/* The slot holding x, or the free slot where it goes. */
static size_t *find_slot(const struct pairs *p, const struct rb_graph_pair *x)
{
	size_t mask = p->n_slots - 1, i = (size_t)pair_hash(x) & mask;

	while (p->slot[i] && !same_pair(&p->v[p->slot[i] - 1], x))
		i = (i + 1) & mask;
	return &p->slot[i];
}

static int grow_slots(struct pairs *p)
{
	size_t n_slots = p->n_slots ? 2 * p->n_slots : 256;
	size_t *old = p->slot;

	p->slot = calloc(n_slots, sizeof(*p->slot));
	if (!p->slot) {
		p->slot = old;
		return rb_set_error(-ENOMEM, "out of memory for the pairs");
	}
	p->n_slots = n_slots;
	free(old);
	for (size_t i = 0; i < p->n; i++)
		*find_slot(p, &p->v[i]) = i + 1;
	return 0;
}

/* The loader (core/shape.c) takes dimensions of 1 to 2^31 only: a pair outside is
 * refused here, so that shapes never writes a file that `run` refuses. */
static int check_pair(const struct rb_graph_pair *x)
{
	const int64_t dims[] = {x->shape.m, x->shape.k, x->shape.n};

	for (size_t i = 0; i < 3; i++)
		if (dims[i] < 1 || dims[i] > RB_SHAPE_DIM_MAX)
			return rb_set_error(-EINVAL,
					    "%s would be %" PRId64 "x%" PRId64 "x%" PRId64
					    ": every dimension must be 1 to 2^31",
					    x->name, x->shape.m, x->shape.k, x->shape.n);
	return 0;
}

static int add_pair(struct pairs *p, const struct rb_graph_pair *x)
{
	size_t *slot;
	int ret = check_pair(x);

	if (ret == 0 && 2 * (p->n + 1) > p->n_slots)
		ret = grow_slots(p);
	if (ret)
		return ret;
	slot = find_slot(p, x);
	if (*slot)
		return 0;
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 64;
		struct rb_graph_pair *v = realloc(p->v, cap * sizeof(*v));

		if (!v)
			return rb_set_error(-ENOMEM, "out of memory for the pairs");
		p->v = v;
		p->cap = cap;
	}
	p->v[p->n++] = *x;
	*slot = p->n;
	return 0;
}

/* One node of every layer (or result_output once) for a batch of `tokens`. */
static int add_node(struct pairs *p, const struct rb_graph_model *m, const struct rb_graph_opts *o,
		    enum rb_graph_node node, int64_t tokens)
{
	struct rb_graph_pair x = {.shape.dtype = o->dtype};
	int64_t last_rows = o->all_logits ? tokens : 1;
	int ret = 0;

	node_kn(m, node, &x.shape.k, &x.shape.n);
	if (node == RB_NODE_RESULT_OUTPUT) {
		snprintf(x.name, sizeof(x.name), "%s", node_names[node]);
		x.shape.m = last_rows;
		return add_pair(p, &x);
	}
	for (int64_t il = 0; ret == 0 && il < m->layers; il++) {
		bool after_rows =
		    il == m->layers - 1 && rb_totals_output_rows_node(node_names[node]);

		snprintf(x.name, sizeof(x.name), "%s-%" PRId64, node_names[node], il);
		x.shape.m = after_rows ? last_rows : tokens;
		ret = add_pair(p, &x);
	}
	return ret;
}

int rb_graph_pairs(const struct rb_graph_model *m, const struct rb_graph_opts *o,
		   struct rb_graph_pair **out, size_t *n)
{
	struct pairs p = {0};
	unsigned named = 0, want;
	int ret = arch_nodes(m->arch, &named);

	*out = NULL;
	*n = 0;
	if (ret == 0)
		ret = check_dims(m);
	if (ret < 0)
		return ret;
	want = o->nodes ? o->nodes : named;
	if (want & ~named)
		return rb_set_error(-EINVAL,
				    "the %s graph names no Qcur, Kcur or Vcur matmul (the bias "
				    "add carries the name): leave them out of --nodes",
				    m->arch);
	for (size_t t = 0; ret == 0 && t < o->n_tokens; t++)
		for (unsigned node = 0; ret == 0 && node < RB_NODE_COUNT; node++)
			if (want & (1u << node))
				ret = add_node(&p, m, o, (enum rb_graph_node)node, o->tokens[t]);
	free(p.slot);
	if (ret < 0) {
		free(p.v);
		return ret;
	}
	*out = p.v;
	*n = p.n;
	return 0;
}
