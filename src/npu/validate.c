/* Program validation before submit (validate.h). */
#include "npu/validate.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "core/error.h"
#include "hw/conv.h"
#include "npu/regcmd.h"
#include "hw/regs.h"

/* The chain being checked and the register values its programs wrote so far. */
struct walk {
	const struct rb_validate_job *job;
	unsigned core;
	uint32_t task;         /* index in the job */
	uint32_t addr, amount; /* where the current task is fetched from */
	uint32_t next_addr, next_amount;
	uint32_t op_enable; /* the current task's op-enable word */
	uint32_t regs[RB_REG_COUNT];
};

static int refuse(const struct walk *w, const char *fmt, ...) RB_PRINTF(2, 3);

static int refuse(const struct walk *w, const char *fmt, ...)
{
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return rb_set_error(-ENOEXEC, "task %u (core %u): %s", w->task, w->core, why);
}

static uint32_t written(const void *regs, enum rb_reg_id id)
{
	return ((const uint32_t *)regs)[id];
}

/* One register write, the PC's tail words noted for the chain. */
static void apply(struct walk *w, const struct rb_decoded *d)
{
	w->regs[d->reg] = d->value;
	if (d->reg == RB_REG_PC_BASE_ADDRESS)
		w->next_addr =
		    (uint32_t)rb_field_decode(RB_FIELD_PC_BASE_ADDRESS_PC_SOURCE_ADDR, d->value);
	else if (d->reg == RB_REG_PC_REGISTER_AMOUNTS)
		w->next_amount =
		    rb_field_unpack(RB_FIELD_PC_REGISTER_AMOUNTS_PC_DATA_AMOUNT, d->value);
}

static int check_word(struct walk *w, uint64_t word, uint64_t i, uint64_t n)
{
	struct rb_decoded d;
	char text[256];

	if (rb_decode_word(word, &d) != RB_DECODE_OK) {
		rb_decode_format(&d, text, sizeof(text));
		return refuse(w, "word %llu of %llu (0x%016llx) is not a valid register write: %s",
			      (unsigned long long)i, (unsigned long long)n,
			      (unsigned long long)word, text);
	}
	if (d.kind == RB_WORD_OP_ENABLE && i + 1 != n)
		return refuse(w,
			      "word %llu of %llu: op-enable is not the last word fetched "
			      "(PC.REGISTER_AMOUNTS %u)",
			      (unsigned long long)i, (unsigned long long)n, w->amount);
	if (d.kind == RB_WORD_REG)
		apply(w, &d);
	if (d.kind == RB_WORD_OP_ENABLE)
		w->op_enable = d.value;
	return d.kind == RB_WORD_OP_ENABLE ? 1 : 0;
}

/* The PC's fetch (§a.3): (amount + 1)·2 words, all inside the regcmd buffer. */
static int fetch(struct walk *w)
{
	const struct rb_validate_job *job = w->job;
	uint64_t n = ((uint64_t)w->amount + 1) * 2, off = (uint64_t)w->addr - job->regcmd_addr;
	int ret = 0;

	if (w->addr < job->regcmd_addr || w->addr % 8 || off + 8 * n > job->regcmd_bytes)
		return refuse(w,
			      "PC.BASE_ADDRESS 0x%08x + %llu bytes (PC.REGISTER_AMOUNTS %u) is "
			      "outside the regcmd buffer (0x%08x, %llu bytes)",
			      w->addr, (unsigned long long)(8 * n), w->amount, job->regcmd_addr,
			      (unsigned long long)job->regcmd_bytes);
	w->next_addr = 0;
	w->next_amount = 0;
	for (uint64_t i = 0; ret == 0 && i < n; i++)
		ret = check_word(w, job->regcmd[off / 8 + i], i, n);
	if (ret == 0)
		return refuse(
		    w, "no op-enable word in the %llu words fetched (PC.REGISTER_AMOUNTS %u)",
		    (unsigned long long)n, w->amount);
	return ret < 0 ? ret : 0;
}

static bool inside_a_buffer(const struct rb_validate_job *job, struct rb_dma_range r)
{
	for (size_t i = 0; i < job->n_bufs; i++) {
		const struct rb_validate_buf *b = &job->bufs[i];

		if (r.addr >= b->addr && (uint64_t)r.addr - b->addr + r.len <= b->size)
			return true;
	}
	return false;
}

static int outside(const struct walk *w, const char *reg, const char *what, uint32_t index,
		   struct rb_dma_range r)
{
	return refuse(w, "%s: %s %u at 0x%08x + %llu bytes is outside every buffer of this job",
		      reg, what, index, r.addr, (unsigned long long)r.len);
}

/* Every DMA of the task (hw/conv.h); reused data was checked where it was loaded. */
static int check_dma(const struct walk *w, const struct rb_conv *cv)
{
	struct rb_dma_range r;
	struct rb_conv_out_walk out;
	uint32_t pitch, groups = rb_conv_feature_groups(cv);

	/* one buffer holding every group's span: no need to look at them one by one */
	if (rb_conv_feature_span(cv, &r, &pitch) && inside_a_buffer(w->job, r))
		groups = 0;
	for (uint32_t g = 0; !cv->data_reuse && g < groups; g++)
		if (!inside_a_buffer(w->job, r = rb_conv_feature_range(cv, g)))
			return outside(w, "CNA.FEATURE_DATA_ADDR", "channel group", g, r);
	if (!cv->weight_reuse && !inside_a_buffer(w->job, r = rb_conv_weight_range(cv)))
		return refuse(w,
			      "CNA.DCOMP_ADDR0: the weights at 0x%08x + %llu bytes "
			      "(CNA.WEIGHT_SIZE0) are outside every buffer of this job",
			      r.addr, (unsigned long long)r.len);
	rb_conv_out_walk_init(&out, cv);
	for (uint32_t s = 0, subs = rb_conv_output_subs(cv); s < subs; s++) {
		if (!rb_conv_out_walk_next(&out, &r))
			return refuse(w,
				      "DPU.BS_OW_CFG: SIZE_E %u/%u/%u leaves output sub-surface %u "
				      "(channels %u-%u) unwritten",
				      cv->size_e[0], cv->size_e[1], cv->size_e[2], s,
				      s * cv->c2_out, (s + 1) * cv->c2_out - 1);
		if (!inside_a_buffer(w->job, r))
			return outside(w, "DPU.DST_BASE_ADDR", "output sub-surface", s, r);
	}
	return 0;
}

static int check_task(const struct walk *w)
{
	struct rb_conv cv;
	char why[256];

	/* TASK_DMA_BASE_ADDR is 0 in every submit of this tool (§a.3). */
	rb_conv_read(&cv, written, w->regs, 0);
	if (rb_conv_check_enable(
		w->op_enable,
		rb_conv_field(written, w->regs, RB_FIELD_DPU_RDMA_FEATURE_MODE_CFG_MRDMA_DISABLE),
		w->job->rdma_required, why, sizeof(why)) ||
	    rb_conv_check_banks(&cv, w->job->cbuf_banks, why, sizeof(why)))
		return refuse(w, "%s", why);
	return check_dma(w, &cv);
}

/* The tail (§a.1): the next task of the submit, or nothing after the last. */
static int check_tail(struct walk *w, const struct rb_validate_task *next)
{
	uint32_t want;

	if (!next) {
		if (w->next_addr || w->next_amount)
			return refuse(w,
				      "the last task of the submit chains on (PC.BASE_ADDRESS "
				      "0x%08x, PC.REGISTER_AMOUNTS %u): both must be 0",
				      w->next_addr, w->next_amount);
		return 0;
	}
	want = rb_regcmd_pc_amount(next->regcfg_amount);
	if (w->next_addr != next->regcmd_addr)
		return refuse(
		    w, "PC.BASE_ADDRESS in the tail is 0x%08x but the next task is at 0x%08x",
		    w->next_addr, next->regcmd_addr);
	if (w->next_amount != want)
		return refuse(w,
			      "PC.REGISTER_AMOUNTS in the tail is %u but the next task's %u body "
			      "words take ceil((%u + 4) / 2) - 1 = %u",
			      w->next_amount, next->regcfg_amount, next->regcfg_amount, want);
	w->addr = w->next_addr;
	w->amount = w->next_amount;
	return 0;
}

static int check_chain(struct walk *w, const struct rb_validate_chain *c)
{
	const struct rb_validate_task *t = w->job->tasks;
	int ret = 0;

	w->core = c->core;
	w->task = c->first;
	w->addr = t[c->first].regcmd_addr;
	w->amount = rb_regcmd_pc_amount(t[c->first].regcfg_amount);
	for (uint32_t i = 0; ret == 0 && i < c->n_tasks; i++, w->task++) {
		ret = fetch(w);
		if (ret == 0)
			ret = check_task(w);
		if (ret == 0)
			ret = check_tail(w, i + 1 < c->n_tasks ? &t[w->task + 1] : NULL);
	}
	return ret;
}

int rb_validate_job(const struct rb_validate_job *job)
{
	int ret = 0;

	/* Each submit starts from nothing known: its programs write what they use. */
	for (size_t i = 0; ret == 0 && i < job->n_chains; i++) {
		struct walk w = {.job = job};

		ret = check_chain(&w, &job->chains[i]);
	}
	return ret;
}
