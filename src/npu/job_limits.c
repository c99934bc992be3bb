/* The buffers of a job against the limits of the NPU address space and the emulator's
 * budget (job.h), before anything is allocated. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "core/error.h"
#include "host/limits.h"
#include "npu/job.h"

#define PAGE_BYTES 4096u
/* 32-bit NPU addresses (§e); page 0 is never a buffer's (0 means "none"). */
#define ADDR_SPACE  (UINT64_C(1) << 32)
#define ADDR_USABLE (ADDR_SPACE - PAGE_BYTES)

static uint64_t pages(uint64_t bytes)
{
	return rb_mul_sat((bytes / PAGE_BYTES) + (bytes % PAGE_BYTES != 0), PAGE_BYTES);
}

int rb_npu_job_bytes(const struct rb_plan *plan, struct rb_npu_job_bytes *b)
{
	size_t words = 0;
	int ret = rb_npu_job_program_words(plan, &words);

	if (ret < 0)
		return ret;
	b->words = words;
	b->a = pages(plan->a_bytes);
	b->b = pages(plan->b_bytes);
	b->c = pages(plan->c_bytes);
	b->regcmd = pages(rb_mul_sat(words, 8));
	b->tasks = pages(rb_mul_sat(plan->n_tasks, sizeof(struct rknpu_task)));
	b->total =
	    rb_add_sat(rb_add_sat(rb_add_sat(b->a, b->b), rb_add_sat(b->c, b->regcmd)), b->tasks);
	return 0;
}

static int refuse(const struct rb_plan *plan, const struct rb_npu_job_bytes *b, const char *limit,
		  uint64_t limit_bytes)
{
	const struct rb_shape *s = &plan->shape;
	char t[32], a[32], bb[32], c[32], r[32], k[32];

	return rb_set_error(
	    -E2BIG,
	    "shape %" PRId64 "x%" PRId64 "x%" PRId64 " %s needs %s of NPU buffers (%" PRIu64
	    " bytes: A %s, B %s, C %s, regcmd %s, task descriptors %s), more than %s (%" PRIu64
	    " bytes)",
	    s->m, s->k, s->n, rb_dtype_name(s->dtype), rb_limits_bytes(b->total, t, sizeof(t)),
	    b->total, rb_limits_bytes(b->a, a, sizeof(a)), rb_limits_bytes(b->b, bb, sizeof(bb)),
	    rb_limits_bytes(b->c, c, sizeof(c)), rb_limits_bytes(b->regcmd, r, sizeof(r)),
	    rb_limits_bytes(b->tasks, k, sizeof(k)), limit, limit_bytes);
}

int rb_npu_job_check_limits(const struct rb_plan *plan, uint64_t budget, struct rb_npu_job_bytes *b)
{
	int ret = rb_npu_job_bytes(plan, b);

	if (ret < 0)
		return ret;
	if (b->total > ADDR_USABLE)
		return refuse(plan, b, "the 4 GiB NPU address space", ADDR_USABLE);
	if (budget && b->total > budget)
		return refuse(plan, b, "the emulator's memory budget", budget);
	return 0;
}
