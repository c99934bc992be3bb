/* A plan as text (npu/plan_text.h): what `rknn-bench plan` prints. */
#include <stdio.h>
#include <string.h>

#include "npu/plan_text.h"

static void print_task(FILE *out, const struct rb_plan_task *t, size_t i)
{
	const struct rb_npu_task *n = &t->npu;
	char m[32], k[32], kn[32];

	snprintf(m, sizeof(m), "[%u,%u)", t->m0, t->m0 + n->m);
	snprintf(k, sizeof(k), "[%u,%u)", t->k0, t->k0 + n->k);
	snprintf(kn, sizeof(kn), "[%u,%u)", t->n0, t->n0 + n->n);
	fprintf(
	    out,
	    "    %-6zu %-13s %-13s %-15s %2u:%-2u  0x%08x 0x%08x 0x%08x %9llu %9llu %9llu%s%s\n", i,
	    m, k, kn, n->data_banks, n->weight_banks, n->a_addr, n->b_addr, n->c_addr,
	    (unsigned long long)t->feature_bytes, (unsigned long long)t->weight_bytes,
	    (unsigned long long)t->output_bytes, t->streamed ? "  streamed" : "",
	    n->weight_reuse ? "  WEIGHT_REUSE" : "");
}

static void print_core(FILE *out, const struct rb_plan *p, const struct rb_plan_core *c, long shown)
{
	size_t n = shown == 0 || (size_t)shown > c->n_tasks ? c->n_tasks : (size_t)shown;

	fprintf(out,
		"  core %u  %s [%u,%u): %zu task%s, %zu submit%s; feature %llu B, weights %llu B, "
		"output %llu B\n",
		c->core, rb_plan_axis_name(p->config.axis), c->begin, c->end, c->n_tasks,
		c->n_tasks == 1 ? "" : "s", c->n_submits, c->n_submits == 1 ? "" : "s",
		(unsigned long long)c->feature_bytes, (unsigned long long)c->weight_bytes,
		(unsigned long long)c->output_bytes);
	if (n)
		fprintf(out, "    %-6s %-13s %-13s %-15s %-6s %-10s %-10s %-10s %9s %9s %9s\n",
			"task", "m", "k", "n", "banks", "a_off", "b_off", "c_off", "feature",
			"weights", "output");
	for (size_t i = 0; i < n; i++)
		print_task(out, &c->tasks[i], i);
	if (n < c->n_tasks)
		fprintf(out, "    ... %zu more task%s (--tasks 0 shows all)\n", c->n_tasks - n,
			c->n_tasks - n == 1 ? "" : "s");
}

static double mib(uint64_t bytes)
{
	return (double)bytes / (1024.0 * 1024.0);
}

bool rb_plan_entry_spec(const struct rb_shape_entry *e, char *buf, size_t size)
{
	snprintf(buf, size, "%lldx%lldx%lld", (long long)e->shape.m, (long long)e->shape.k,
		 (long long)e->shape.n);
	return e->n_names > 1 || strcmp(e->names[0], buf) != 0;
}

static void print_head(FILE *out, const struct rb_plan *p, const struct rb_shape_entry *e)
{
	char cfg[256], spec[80], names[128] = "";

	rb_plan_config_format(&p->config, cfg, sizeof(cfg));
	if (rb_plan_entry_spec(e, spec, sizeof(spec)) && e->n_names > 1)
		snprintf(names, sizeof(names), " (%s and %zu more)", e->names[0], e->n_names - 1);
	else if (rb_plan_entry_spec(e, spec, sizeof(spec)))
		snprintf(names, sizeof(names), " (%s)", e->names[0]);
	fprintf(out, "plan %s %s -> %s%s\n", spec, rb_dtype_name(p->shape.dtype),
		rb_plan_prec_name(p->out), names);
	fprintf(out, "  config  %s%s\n", cfg, rb_plan_unproven(p) ? "  [unproven on silicon]" : "");
	fprintf(out,
		"  padded  M %u, K %u, N %u; %u K-slice%s of %u channels; a task takes up to %u "
		"rows x %u kernels\n",
		p->m, p->k_pad, p->n_pad, p->n_kslices, p->n_kslices == 1 ? "" : "s", p->k_slice,
		p->m_cap, p->n_cap);
	fprintf(out, "  buffers A %llu B, B %llu B, C %llu B (%u cube%s of %llu B)\n",
		(unsigned long long)p->a_bytes, (unsigned long long)p->b_bytes,
		(unsigned long long)p->c_bytes, p->n_kslices, p->n_kslices == 1 ? "" : "s",
		(unsigned long long)p->c_cube_bytes);
}

void rb_plan_print(FILE *out, const struct rb_plan *p, const struct rb_shape_entry *e, long shown,
		   void (*after_head)(FILE *out, const void *ctx), const void *ctx)
{
	uint64_t moved = p->feature_bytes + p->weight_bytes + p->output_bytes;
	char note[320];

	print_head(out, p, e);
	if (after_head)
		after_head(out, ctx);
	for (unsigned i = 0; i < p->n_cores; i++)
		print_core(out, p, &p->cores[i], shown);
	fprintf(out,
		"  total   %zu task%s, %zu submit%s; feature %llu B, weights %llu B, output %llu "
		"B; %llu B moved (%.2f MiB), busiest core %llu B\n",
		p->n_tasks, p->n_tasks == 1 ? "" : "s", p->n_submits, p->n_submits == 1 ? "" : "s",
		(unsigned long long)p->feature_bytes, (unsigned long long)p->weight_bytes,
		(unsigned long long)p->output_bytes, (unsigned long long)moved, mib(moved),
		(unsigned long long)p->max_core_bytes);
	if (p->streamed)
		fprintf(out,
			"  note    streamed weights (a task's weights exceed its %u weight banks) "
			"are unproven on silicon\n",
			p->config.weight_banks);
	if (p->weight_reuse)
		fprintf(
		    out,
		    "  note    WEIGHT_REUSE (a chained task keeps the weights of the task before "
		    "in the CBUF) is unproven on silicon\n");
	rb_plan_timeout_note(p, p->config.mainline ? "rocket" : "rknpu", note, sizeof(note));
	fprintf(out, "  submits %s (modeled)\n", note);
}
