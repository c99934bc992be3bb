/* Tests of the emulated vendor rknpu kernel (src/sim/kmod_rknpu.c), driven through the
 * emulated transport and the real userspace driver (src/dev/rknpu.c): versions and
 * actions (npu-facts §d.1), buffer objects and the 32-bit NPU address space, bad
 * arguments, the commit sequence written into MMIO (§a.3, recorded with the kernel's
 * MMIO trace), core masks and subcore_task indexing, timeouts and faults, fences and
 * virtual time, and a real fp16 matmul (the Appendix A program) on the emulated NPU. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/fp16.h"
#include "dev/rknpu.h"
#include "npu/regcmd.h"
#include "hw/regs.h"
#include "sim/sim.h"
#include "thp.h"

#define M              4
#define K              64
#define N              16
#define A_BYTES        (M * K * 2)
#define B_BYTES        (K * N * 2)
#define C_BYTES        (M * N * 4)
#define MAX_TASKS      5
#define PROGRAM_STRIDE 1024   /* bytes between the programs of independent tasks */
#define DPU_IRQ        0x300u /* DPU_0 | DPU_1: the int_mask of a DPU-terminated task */
#define TIMEOUT_MS     100

struct mmio_write {
	int core;
	uint32_t offset, value;
};

struct fx {
	struct rb_rknpu dev;
	struct rb_sim_kmod *kmod;
	struct mmio_write w[256];
	size_t nw;
	struct rb_rknpu_bo regcmd, tasks, a, b, c;
	uint32_t ntasks;
	float expect[M * N];
};

static void record(void *ctx, int core, uint32_t offset, uint32_t value)
{
	struct fx *f = ctx;

	if (f->nw < sizeof(f->w) / sizeof(f->w[0]))
		f->w[f->nw++] = (struct mmio_write){core, offset, value};
}

static int open_fx(void **state, uint64_t budget)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct rb_sim_config cfg;
	struct rb_transport tr;

	if (!f)
		return -1;
	rb_sim_config_init(&cfg);
	cfg.mem_budget = budget;
	/* rb_rknpu_open owns the transport from here, and closes it if it fails */
	if (rb_transport_open_sim_rknpu(&tr, &cfg) || rb_rknpu_open(&f->dev, &tr))
		goto err_free;
	f->kmod = rb_transport_sim_kmod(&f->dev.tr);
	if (!f->kmod)
		goto err_close;
	rb_sim_kmod_set_mmio_trace(f->kmod, record, f);
	*state = f;
	return 0;

err_close:
	rb_rknpu_close(&f->dev);
err_free:
	free(f);
	return -1;
}

static int setup(void **state)
{
	return open_fx(state, 0);
}

static int teardown(void **state)
{
	struct fx *f = *state;

	rb_rknpu_bo_destroy(&f->dev, &f->regcmd);
	rb_rknpu_bo_destroy(&f->dev, &f->tasks);
	rb_rknpu_bo_destroy(&f->dev, &f->a);
	rb_rknpu_bo_destroy(&f->dev, &f->b);
	rb_rknpu_bo_destroy(&f->dev, &f->c);
	rb_rknpu_close(&f->dev);
	free(f);
	return 0;
}

static int drv_ioctl(struct fx *f, unsigned long request, void *arg)
{
	return rb_transport_ioctl(&f->dev.tr, request, arg);
}

static uint32_t reg_off(enum rb_reg_id id)
{
	return rb_reg(id)->offset;
}

/* ---- a matmul program: M×K·K×N fp16 -> fp32, the Appendix A shape ---- */

static float a_val(int m, int k)
{
	return (float)((m + 1) * ((k % 5) - 2));
}

static float b_val(int k, int n)
{
	return (float)(((k + 2 * n) % 3) - 1);
}

/* A as the NC1HWC2 cube (§b.2, C2 = 8) and B as 16×32 weight blocks (§b.3). */
static void pack_inputs(struct fx *f)
{
	uint16_t *a = f->a.map, *b = f->b.map;

	for (int m = 0; m < M; m++)
		for (int k = 0; k < K; k++)
			a[(k / 8) * (M * 8) + m * 8 + k % 8] = rb_fp16_from_f32(a_val(m, k));
	for (int k = 0; k < K; k++)
		for (int n = 0; n < N; n++)
			b[(n / 16) * (16 * K) + (k / 32) * (16 * 32) + (n % 16) * 32 + k % 32] =
			    rb_fp16_from_f32(b_val(k, n));
	for (int m = 0; m < M; m++)
		for (int n = 0; n < N; n++) {
			float s = 0;

			for (int k = 0; k < K; k++)
				s += a_val(m, k) * b_val(k, n);
			f->expect[m * N + n] = s;
		}
}

static struct rb_npu_task matmul_task(const struct fx *f, uint32_t c_addr)
{
	return (struct rb_npu_task){
	    .dtype = RB_DTYPE_FP16,
	    .out = RB_PREC_FP32,
	    .m = M,
	    .k = K,
	    .n = N,
	    .a_height = M,
	    .c_height = M,
	    .data_banks = 1,
	    .weight_banks = RB_NPU_CBUF_BANKS - 1,
	    .a_addr = f->a.dma_addr,
	    .b_addr = f->b.dma_addr,
	    .c_addr = c_addr,
	};
}

static struct rknpu_task *desc(struct fx *f, uint32_t i)
{
	return (struct rknpu_task *)f->tasks.map + i;
}

/* ntasks independent one-task programs; task i writes C block i. */
static void make_programs(struct fx *f, uint32_t ntasks)
{
	struct rb_rknpu *d = &f->dev;

	assert_int_equal(rb_rknpu_bo_create(d, PROGRAM_STRIDE * ntasks, 0, &f->regcmd), 0);
	assert_int_equal(rb_rknpu_bo_create(d, ntasks * sizeof(struct rknpu_task),
					    RKNPU_MEM_KERNEL_MAPPING, &f->tasks),
			 0);
	assert_int_equal(rb_rknpu_bo_create(d, A_BYTES, 0, &f->a), 0);
	assert_int_equal(rb_rknpu_bo_create(d, B_BYTES, 0, &f->b), 0);
	assert_int_equal(rb_rknpu_bo_create(d, C_BYTES * ntasks, 0, &f->c), 0);
	pack_inputs(f);
	for (uint32_t i = 0; i < ntasks; i++) {
		struct rb_npu_task t = matmul_task(f, f->c.dma_addr + i * C_BYTES);
		struct rb_regcmd rc;

		rb_regcmd_init(&rc);
		assert_int_equal(rb_regcmd_emit_task(&rc, &t), 0);
		assert_true(rc.count * 8 <= PROGRAM_STRIDE);
		memcpy((char *)f->regcmd.map + i * PROGRAM_STRIDE, rc.words, rc.count * 8);
		*desc(f, i) = (struct rknpu_task){
		    .enable_mask = 0xd,
		    .int_mask = DPU_IRQ,
		    .int_clear = 0x1ffff,
		    .regcfg_amount = (uint32_t)rc.count - RB_REGCMD_TAIL_WORDS,
		    .regcmd_addr = f->regcmd.dma_addr + i * PROGRAM_STRIDE,
		};
		rb_regcmd_release(&rc);
	}
	f->ntasks = ntasks;
}

static struct rknpu_submit submit_args(const struct fx *f, uint32_t mask)
{
	struct rknpu_submit s;

	memset(&s, 0, sizeof(s));
	s.flags = RKNPU_JOB_PC | RKNPU_JOB_PINGPONG;
	s.timeout = TIMEOUT_MS;
	s.task_number = 1;
	s.task_obj_addr = f->tasks.obj_addr;
	s.core_mask = mask;
	s.fence_fd = -1;
	return s;
}

static void expect_c(const struct fx *f, uint32_t block)
{
	const float *c = (const float *)f->c.map + block * (C_BYTES / 4);

	for (int m = 0; m < M; m++)
		for (int n = 0; n < N; n++) {
			float got = c[(n / 4) * (M * 4) + m * 4 + n % 4];

			if (got != f->expect[m * N + n])
				fail_msg("C block %u [%d][%d] = %g, expected %g", block, m, n, got,
					 f->expect[m * N + n]);
		}
}

static bool c_untouched(const struct fx *f, uint32_t block)
{
	const unsigned char *c = (const unsigned char *)f->c.map + block * C_BYTES;

	for (size_t i = 0; i < C_BYTES; i++)
		if (c[i])
			return false;
	return true;
}

/* The value of the first traced write to `offset` on `core` from index `from`, or -1. */
static int64_t traced(const struct fx *f, int core, enum rb_reg_id reg, size_t from)
{
	for (size_t i = from; i < f->nw; i++)
		if (f->w[i].core == core && f->w[i].offset == reg_off(reg))
			return f->w[i].value;
	return -1;
}

static size_t traced_count(const struct fx *f, int core)
{
	size_t n = 0;

	for (size_t i = 0; i < f->nw; i++)
		n += f->w[i].core == core;
	return n;
}

/* ---- identity ---- */

static void test_versions(void **state)
{
	struct fx *f = *state;

	assert_int_equal(f->dev.drv_version, 908);
	assert_int_equal(f->dev.hw_version, 0x46495245); /* "FIRE" on a Rock 5B (§1) */
}

static void test_drm_version(void **state)
{
	struct fx *f = *state;
	struct drm_version v;
	char name[3], date[64], desc[64];

	memset(&v, 0, sizeof(v));
	assert_int_equal(drv_ioctl(f, DRM_IOCTL_VERSION, &v), 0); /* lengths only */
	assert_int_equal(v.name_len, 5);
	assert_int_equal(v.date_len, 8);
	assert_int_equal(v.desc_len, 12);
	memset(name, 'x', sizeof(name));
	memset(date, 0, sizeof(date));
	memset(desc, 0, sizeof(desc));
	v.name = name;
	v.name_len = sizeof(name); /* truncated, no NUL, full length reported */
	v.date = date;
	v.date_len = sizeof(date) - 1;
	v.desc = desc;
	v.desc_len = sizeof(desc) - 1;
	assert_int_equal(drv_ioctl(f, DRM_IOCTL_VERSION, &v), 0);
	assert_int_equal(v.version_major, 0);
	assert_int_equal(v.version_minor, 9);
	assert_int_equal(v.version_patchlevel, 8);
	assert_memory_equal(name, "rkn", 3);
	assert_int_equal(v.name_len, 5);
	assert_string_equal(date, "20240828");
	assert_string_equal(desc, "RKNPU driver");
}

static void expect_action(struct fx *f, enum rknpu_action_code code, int err, uint32_t value)
{
	uint32_t v = 0xdeadbeef;

	assert_int_equal(rb_rknpu_action(&f->dev, code, &v), err);
	if (!err)
		assert_int_equal(v, value);
}

static void test_actions(void **state)
{
	struct fx *f = *state;

	expect_action(f, RKNPU_GET_DRV_VERSION, 0, 908);
	expect_action(f, RKNPU_GET_FREQ, 0, 1000000000);
	expect_action(f, RKNPU_GET_VOLT, 0, 825000);
	expect_action(f, RKNPU_GET_IOMMU_EN, 0, 1);
	for (int code = RKNPU_GET_DT_WR_AMOUNT; code <= RKNPU_GET_TOTAL_RW_AMOUNT; code++)
		expect_action(f, code, 0, 0);
	expect_action(f, RKNPU_GET_TOTAL_SRAM_SIZE, 0, 0);
	expect_action(f, RKNPU_GET_FREE_SRAM_SIZE, 0, 0);
	for (int code = RKNPU_GET_BW_PRIORITY; code <= RKNPU_SET_BW_TW; code++)
		expect_action(f, code, -EINVAL, 0);
	expect_action(f, RKNPU_SET_VOLT, -EINVAL, 0);
	expect_action(f, RKNPU_POWER_ON, -EINVAL, 0);
	expect_action(f, RKNPU_POWER_OFF, -EINVAL, 0);
	expect_action(f, (enum rknpu_action_code)99, -EINVAL, 0);
	expect_action(f, RKNPU_SET_FREQ, -EINVAL, 0);
	assert_string_equal(rb_last_error(), "RKNPU_ACTION SET_FREQ failed: Invalid argument");
}

static void test_act_reset(void **state)
{
	struct fx *f = *state;
	uint64_t t0 = rb_sim_kmod_now_ns(f->kmod);

	assert_int_equal(rb_rknpu_action(&f->dev, RKNPU_ACT_RESET, NULL), 0);
	/* the driver's soft reset sleeps 100 ms (§d.1) */
	assert_true(rb_sim_kmod_now_ns(f->kmod) - t0 >= 100000000u);
}

/* ---- buffer objects ---- */

static void test_bo_create_map_destroy(void **state)
{
	struct fx *f = *state;
	struct rb_rknpu_bo bo[4];

	for (int i = 0; i < 4; i++) {
		assert_int_equal(rb_rknpu_bo_create(&f->dev, 1000 + 5000 * i, 0, &bo[i]), 0);
		assert_int_equal(bo[i].size % 4096, 0);
		assert_true(bo[i].size >= (uint64_t)(1000 + 5000 * i));
		assert_int_not_equal(bo[i].handle, 0);
		assert_int_not_equal(bo[i].dma_addr, 0);
		assert_int_equal(bo[i].dma_addr % 4096, 0);
		assert_true((uint64_t)bo[i].dma_addr + bo[i].size <= UINT64_C(1) << 32);
		assert_non_null(bo[i].map);
		for (uint64_t j = 0; j < bo[i].size; j++)
			assert_int_equal(((unsigned char *)bo[i].map)[j], 0);
		memset(bo[i].map, 0x40 + i, bo[i].size);
	}
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++) {
			if (i == j)
				continue;
			assert_int_not_equal(bo[i].handle, bo[j].handle);
			assert_int_not_equal(bo[i].obj_addr, bo[j].obj_addr);
			/* NPU ranges never overlap */
			assert_true(bo[i].dma_addr + bo[i].size <= bo[j].dma_addr ||
				    bo[j].dma_addr + bo[j].size <= bo[i].dma_addr);
		}
	for (int i = 0; i < 4; i++) {
		assert_int_equal(((unsigned char *)bo[i].map)[bo[i].size - 1], 0x40 + i);
		assert_int_equal(
		    rb_rknpu_bo_sync(&f->dev, &bo[i], RKNPU_MEM_SYNC_TO_DEVICE, 0, bo[i].size), 0);
		rb_rknpu_bo_destroy(&f->dev, &bo[i]);
		assert_int_equal(bo[i].handle, 0);
		rb_rknpu_bo_destroy(&f->dev, &bo[i]); /* safe on a zeroed bo */
	}
}

/* Host buffers of 2 MiB or more ask for transparent huge pages (the emulator streams
 * big weights), smaller ones do not. Skipped where the kernel gives none, and under
 * qemu-user (make check-aarch64 sets RUNNER), which does not pass the advice on. */
static void test_huge_pages(void **state)
{
	struct fx *f = *state;
	char flags[512];
	struct rb_rknpu_bo big, small;

	if (!thp_available()) {
		print_message("# no transparent huge pages here\n");
		skip();
	}
	assert_int_equal(rb_rknpu_bo_create(&f->dev, (size_t)4 << 20, 0, &big), 0);
	assert_int_equal(rb_rknpu_bo_create(&f->dev, (size_t)64 << 10, 0, &small), 0);
	thp_vm_flags_of(big.map, flags, sizeof(flags));
	assert_non_null(strstr(flags, " hg"));
	thp_vm_flags_of(small.map, flags, sizeof(flags));
	assert_true(flags[0] != '\0');
	assert_null(strstr(flags, " hg"));
	rb_rknpu_bo_destroy(&f->dev, &big);
	rb_rknpu_bo_destroy(&f->dev, &small);
}

static void test_handles(void **state)
{
	struct fx *f = *state;
	struct rb_rknpu_bo a, b, c;
	struct rknpu_mem_create mc;

	assert_int_equal(rb_rknpu_bo_create(&f->dev, 4096, 0, &a), 0);
	assert_int_equal(rb_rknpu_bo_create(&f->dev, 8192, 0, &b), 0);
	/* a non-zero handle naming an object returns that object (§d.1) */
	memset(&mc, 0, sizeof(mc));
	mc.handle = b.handle;
	mc.size = 4096;
	assert_int_equal(drv_ioctl(f, DRM_IOCTL_RKNPU_MEM_CREATE, &mc), 0);
	assert_int_equal(mc.handle, b.handle);
	assert_int_equal(mc.obj_addr, b.obj_addr);
	assert_int_equal(mc.dma_addr, b.dma_addr);
	assert_int_equal(mc.size, 8192);
	/* GEM hands out the lowest free handle again */
	uint32_t ha = a.handle;
	rb_rknpu_bo_destroy(&f->dev, &a);
	assert_int_equal(rb_rknpu_bo_create(&f->dev, 4096, 0, &c), 0);
	assert_int_equal(c.handle, ha);
	rb_rknpu_bo_destroy(&f->dev, &b);
	rb_rknpu_bo_destroy(&f->dev, &c);
}

static void test_budget(void **state)
{
	struct fx *f;
	struct rb_rknpu_bo a, b;

	(void)state;
	assert_int_equal(open_fx((void **)&f, 64 * 1024), 0);
	assert_int_equal(rb_rknpu_bo_create(&f->dev, 48 * 1024, 0, &a), 0);
	assert_int_equal(rb_rknpu_bo_create(&f->dev, 1 << 20, 0, &b), -ENOMEM);
	assert_string_equal(rb_last_error(),
			    "RKNPU_MEM_CREATE of 1048576 bytes failed: Cannot allocate memory");
	assert_int_equal(b.handle, 0);
	assert_null(b.map);
	assert_int_equal(rb_rknpu_bo_create(&f->dev, 16 * 1024 + 1, 0, &b), -ENOMEM);
	assert_int_equal(rb_rknpu_bo_create(&f->dev, 16 * 1024, 0, &b), 0);
	rb_rknpu_bo_destroy(&f->dev, &a);
	rb_rknpu_bo_destroy(&f->dev, &b);
	assert_int_equal(rb_rknpu_bo_create(&f->dev, 64 * 1024, 0, &a), 0);
	rb_rknpu_bo_destroy(&f->dev, &a);
	teardown((void **)&f);
}

static void test_address_space_full(void **state)
{
	struct fx *f = *state;
	struct rb_rknpu_bo big, more;

	/* 4 GiB minus page 0 is all there is; memory is committed lazily */
	assert_int_equal(rb_rknpu_bo_create(&f->dev, (UINT64_C(1) << 32) - 4096, 0, &big), 0);
	assert_int_equal(big.dma_addr, 4096);
	assert_int_equal(rb_rknpu_bo_create(&f->dev, 4096, 0, &more), -ENOMEM);
	rb_rknpu_bo_destroy(&f->dev, &big);
	assert_int_equal(rb_rknpu_bo_create(&f->dev, UINT64_C(1) << 32, 0, &more), -ENOMEM);
}

static void test_bad_mem_args(void **state)
{
	struct fx *f = *state;
	struct rknpu_mem_create mc;
	struct rknpu_mem_map mm;
	struct rknpu_mem_destroy md;
	struct rb_rknpu_bo bo;
	void *p;

	assert_int_equal(rb_rknpu_bo_create(&f->dev, 0, 0, &bo), -EINVAL);
	memset(&mm, 0, sizeof(mm));
	mm.handle = 77;
	assert_int_equal(drv_ioctl(f, DRM_IOCTL_RKNPU_MEM_MAP, &mm), -EINVAL);
	memset(&md, 0, sizeof(md));
	md.handle = 77;
	assert_int_equal(drv_ioctl(f, DRM_IOCTL_RKNPU_MEM_DESTROY, &md), -EINVAL);
	assert_int_equal(drv_ioctl(f, DRM_IOW(DRM_COMMAND_BASE + 0x20, struct rknpu_action), &mc),
			 -EINVAL);
	assert_int_equal(rb_rknpu_bo_create(&f->dev, 8192, 0, &bo), 0);
	assert_int_equal(rb_rknpu_bo_sync(&f->dev, &bo, RKNPU_MEM_SYNC_FROM_DEVICE, 4096, 4097),
			 -EINVAL);
	assert_int_equal(rb_rknpu_bo_sync(&f->dev, &bo, RKNPU_MEM_SYNC_FROM_DEVICE, 8193, 0),
			 -EINVAL);
	assert_int_equal(rb_rknpu_bo_sync(&f->dev, &bo, RKNPU_MEM_SYNC_FROM_DEVICE, 4096, 4096), 0);
	assert_int_equal(f->dev.tr.ops->mmap(f->dev.tr.priv, 4096, 12345, &p), -EINVAL);
	memset(&mm, 0, sizeof(mm));
	mm.handle = bo.handle;
	assert_int_equal(drv_ioctl(f, DRM_IOCTL_RKNPU_MEM_MAP, &mm), 0);
	assert_int_equal(f->dev.tr.ops->mmap(f->dev.tr.priv, 3 * 4096, mm.offset, &p), -EINVAL);
	rb_rknpu_bo_destroy(&f->dev, &bo);
	assert_int_equal(drv_ioctl(f, DRM_IOCTL_RKNPU_MEM_MAP, &mm), -EINVAL);
}

/* The old 40-byte MEM_CREATE (MTX's header) still works: the DRM core copies the bytes
 * both sides know (§d.1). */
static void test_old_mem_create(void **state)
{
	struct fx *f = *state;
	struct rknpu_mem_create mc;
	struct rknpu_mem_destroy md;
	unsigned long cmd = _IOC(_IOC_READ | _IOC_WRITE, DRM_IOCTL_BASE,
				 DRM_COMMAND_BASE + RKNPU_NR_MEM_CREATE, 40);

	assert_int_equal(cmd, 0xC0286442u);
	memset(&mc, 0, sizeof(mc));
	mc.size = 5000;
	mc.iommu_domain_id = 5; /* beyond the old struct: never read (else -EINVAL) */
	mc.reserved = 0xabcd;   /* never written */
	assert_int_equal(drv_ioctl(f, cmd, &mc), 0);
	assert_int_not_equal(mc.handle, 0);
	assert_int_equal(mc.size, 8192);
	assert_int_equal(mc.reserved, 0xabcd);
	memset(&md, 0, sizeof(md));
	md.handle = mc.handle;
	assert_int_equal(drv_ioctl(f, DRM_IOCTL_RKNPU_MEM_DESTROY, &md), 0);
}

/* A BO destroyed while mmapped keeps its memory until munmap, like GEM. */
static void test_destroy_while_mapped(void **state)
{
	struct fx *f = *state;
	struct rb_rknpu_bo bo;
	struct rknpu_mem_destroy md;
	void *map;

	assert_int_equal(rb_rknpu_bo_create(&f->dev, 4096, 0, &bo), 0);
	map = bo.map;
	memset(&md, 0, sizeof(md));
	md.handle = bo.handle;
	assert_int_equal(drv_ioctl(f, DRM_IOCTL_RKNPU_MEM_DESTROY, &md), 0);
	memset(map, 0x5a, 4096);
	assert_int_equal(f->dev.tr.ops->munmap(f->dev.tr.priv, map, 4096), 0);
	assert_int_equal(f->dev.tr.ops->munmap(f->dev.tr.priv, map, 4096), -EINVAL);
}

/* ---- SUBMIT ---- */

static void test_submit_bad_args(void **state)
{
	struct fx *f = *state;
	struct rb_rknpu_bo plain;
	struct rknpu_submit s;

	make_programs(f, 2);
	s = submit_args(f, 1);
	s.flags = RKNPU_JOB_PINGPONG; /* no PC */
	assert_int_equal(rb_rknpu_submit(&f->dev, &s), -EINVAL);
	s = submit_args(f, 1);
	s.task_number = 0;
	assert_int_equal(rb_rknpu_submit(&f->dev, &s), -EINVAL);
	s = submit_args(f, 1);
	s.task_obj_addr = 0x1234;
	assert_int_equal(rb_rknpu_submit(&f->dev, &s), -EINVAL);
	s = submit_args(f, 1);
	s.task_number = 3; /* the task BO holds 102 descriptors: 4096 / 40 */
	s.task_start = 100;
	assert_int_equal(rb_rknpu_submit(&f->dev, &s), -EINVAL);
	s = submit_args(f, 1);
	s.subcore_task[0] = (struct rknpu_subcore_task){0, 0}; /* empty range */
	assert_int_equal(rb_rknpu_submit(&f->dev, &s), -EINVAL);
	s = submit_args(f, 8);
	s.subcore_task[3] = (struct rknpu_subcore_task){0, 1};
	assert_int_equal(rb_rknpu_submit(&f->dev, &s), -EINVAL);
	assert_int_equal(rb_rknpu_bo_create(&f->dev, 4096, 0, &plain), 0);
	s = submit_args(f, 1);
	s.task_obj_addr = plain.obj_addr; /* no KERNEL_MAPPING */
	s.subcore_task[0] = (struct rknpu_subcore_task){0, 1};
	assert_int_equal(rb_rknpu_submit(&f->dev, &s), -EINVAL);
	assert_string_equal(rb_last_error(),
			    "RKNPU_SUBMIT of 1 tasks on core mask 0x1 failed: Invalid argument");
	rb_rknpu_bo_destroy(&f->dev, &plain);
	assert_int_equal(f->nw, 0); /* nothing reached the NPU */
}

/* The exact writes of §a.3 for one pingpong task on core 0, then the interrupt clear. */
static void test_commit_sequence(void **state)
{
	struct fx *f = *state;
	struct rknpu_submit s;
	const struct {
		enum rb_reg_id reg;
		uint32_t value;
	} want[] = {
	    {RB_REG_PC_BASE_ADDRESS, 1},
	    {RB_REG_CNA_S_POINTER, 0xe},
	    {RB_REG_CORE_S_POINTER, 0xe},
	    {RB_REG_PC_BASE_ADDRESS, 0}, /* the task's regcmd_addr, filled in below */
	    {RB_REG_PC_REGISTER_AMOUNTS, 53},
	    {RB_REG_PC_INTERRUPT_MASK, DPU_IRQ},
	    {RB_REG_PC_INTERRUPT_CLEAR, DPU_IRQ},
	    {RB_REG_PC_TASK_CON, 0x7001},
	    {RB_REG_PC_TASK_DMA_BASE_ADDR, 0},
	    {RB_REG_PC_OPERATION_ENABLE, 1},
	    {RB_REG_PC_OPERATION_ENABLE, 0},
	    {RB_REG_PC_INTERRUPT_CLEAR, 0x1ffff},
	};
	size_t n = sizeof(want) / sizeof(want[0]);

	make_programs(f, 1);
	assert_int_equal(desc(f, 0)->regcfg_amount, 104); /* Appendix A: 53 = 0x35 */
	s = submit_args(f, 1);
	s.subcore_task[0] = (struct rknpu_subcore_task){0, 1};
	assert_int_equal(rb_rknpu_submit(&f->dev, &s), 0);
	assert_int_equal(f->nw, n);
	for (size_t i = 0; i < n; i++) {
		uint32_t v = i == 3 ? (uint32_t)desc(f, 0)->regcmd_addr : want[i].value;

		assert_int_equal(f->w[i].core, 0);
		assert_int_equal(f->w[i].offset, reg_off(want[i].reg));
		assert_int_equal(f->w[i].value, v);
	}
	assert_int_equal(s.task_counter, 1);
	assert_true(s.hw_elapse_time > 0);
	/* the interrupt status is written back into the last descriptor */
	assert_int_not_equal(desc(f, 0)->int_status, 0);
	assert_int_equal(desc(f, 0)->int_status & ~DPU_IRQ, 0);
}

static void test_commit_values(void **state)
{
	struct fx *f = *state;
	const uint32_t amounts[] = {0, 1, 2, 3, 12, 13, 104, 105};
	struct rknpu_submit s;

	make_programs(f, 3);
	for (size_t i = 0; i < sizeof(amounts) / sizeof(amounts[0]); i++) {
		desc(f, 0)->regcfg_amount = amounts[i];
		f->nw = 0;
		s = submit_args(f, 1);
		s.subcore_task[0] = (struct rknpu_subcore_task){0, 1};
		rb_rknpu_submit(&f->dev, &s); /* the program may not run: only the writes count */
		assert_int_equal(traced(f, 0, RB_REG_PC_REGISTER_AMOUNTS, 0),
				 rb_regcmd_pc_amount(amounts[i]));
		assert_int_equal(rb_rknpu_action(&f->dev, RKNPU_ACT_RESET, NULL), 0);
	}
	/* without PINGPONG, 3 tasks from task_base_addr 0x100 */
	desc(f, 0)->regcfg_amount = 104;
	f->nw = 0;
	s = submit_args(f, 1);
	s.flags = RKNPU_JOB_PC;
	s.task_number = 3;
	s.task_base_addr = 0x100;
	s.subcore_task[0] = (struct rknpu_subcore_task){0, 3};
	desc(f, 2)->int_mask = 0xc00;
	rb_rknpu_submit(&f->dev, &s);
	assert_int_equal(traced(f, 0, RB_REG_PC_TASK_CON, 0), 0x6003);
	assert_int_equal(traced(f, 0, RB_REG_PC_TASK_DMA_BASE_ADDR, 0), 0x100);
	assert_int_equal(traced(f, 0, RB_REG_PC_INTERRUPT_MASK, 0), 0xc00);    /* last task */
	assert_int_equal(traced(f, 0, RB_REG_PC_INTERRUPT_CLEAR, 0), DPU_IRQ); /* first task */
}

/* Which descriptor each core starts from, for every mask the driver handles (§d.1). */
static void expect_mask(struct fx *f, uint32_t mask, const int first_task[3])
{
	struct rknpu_submit s = submit_args(f, mask);
	int cores = 0;

	memset(f->c.map, 0, f->c.size);
	for (int i = 0; i < MAX_TASKS; i++)
		s.subcore_task[i] = (struct rknpu_subcore_task){(uint32_t)i, 1};
	f->nw = 0;
	assert_int_equal(rb_rknpu_submit(&f->dev, &s), 0);
	for (int c = 0; c < 3; c++) {
		if (first_task[c] < 0) {
			assert_int_equal(traced_count(f, c), 0);
			continue;
		}
		cores++;
		assert_int_equal(traced(f, c, RB_REG_PC_BASE_ADDRESS, 0), 1);
		assert_int_equal(traced(f, c, RB_REG_CNA_S_POINTER, 0), 0xe + c * 0x10000000u);
		assert_int_equal(traced(f, c, RB_REG_CORE_S_POINTER, 0), 0xe + c * 0x10000000u);
		/* the second BASE_ADDRESS write is the first task's regcmd */
		for (size_t i = 0; i < f->nw; i++)
			if (f->w[i].core == c &&
			    f->w[i].offset == reg_off(RB_REG_PC_BASE_ADDRESS) &&
			    f->w[i].value != 1) {
				assert_int_equal(f->w[i].value,
						 desc(f, first_task[c])->regcmd_addr);
				break;
			}
		expect_c(f, first_task[c]);
	}
	assert_int_equal(s.task_counter, cores);
	for (int t = 0; t < MAX_TASKS; t++) {
		bool used = t == first_task[0] || t == first_task[1] || t == first_task[2];

		if (!used)
			assert_true(c_untouched(f, t));
	}
}

static void test_core_masks(void **state)
{
	struct fx *f = *state;

	make_programs(f, MAX_TASKS);
	expect_mask(f, 0, (const int[]){0, -1, -1}); /* auto: idle NPU -> core 0 */
	expect_mask(f, 1, (const int[]){0, -1, -1});
	expect_mask(f, 2, (const int[]){-1, 1, -1});
	expect_mask(f, 4, (const int[]){-1, -1, 2});
	expect_mask(f, 3, (const int[]){0, 1, -1});
	expect_mask(f, 7, (const int[]){2, 3, 4}); /* subcore_task[i + 2] */
}

static void test_unknown_masks(void **state)
{
	struct fx *f = *state;

	make_programs(f, MAX_TASKS);
	for (uint32_t mask = 5; mask <= 6; mask++) {
		struct rknpu_submit s = submit_args(f, mask);
		uint64_t t0 = rb_sim_kmod_now_ns(f->kmod);

		for (int i = 0; i < MAX_TASKS; i++)
			s.subcore_task[i] = (struct rknpu_subcore_task){(uint32_t)i, 1};
		assert_int_equal(rb_rknpu_submit(&f->dev, &s), -ETIMEDOUT);
		assert_true(rb_sim_kmod_now_ns(f->kmod) - t0 >= TIMEOUT_MS * 1000000u);
		assert_int_equal(s.hw_elapse_time, 0);
		assert_int_equal(f->nw, 0);
		assert_non_null(strstr(rb_sim_kmod_last_fault(f->kmod), "unknown core mask"));
		assert_non_null(strstr(rb_last_error(), "Connection timed out"));
	}
}

/* Auto mode picks the least loaded core: with core 0 busy, core 1. */
static void test_auto_least_loaded(void **state)
{
	struct fx *f = *state;
	struct rknpu_submit s1, s2;

	make_programs(f, 2);
	s1 = submit_args(f, 1);
	s1.flags |= RKNPU_JOB_NONBLOCK | RKNPU_JOB_FENCE_OUT;
	s1.subcore_task[0] = (struct rknpu_subcore_task){0, 1};
	assert_int_equal(rb_rknpu_submit(&f->dev, &s1), 0);
	s2 = submit_args(f, 0);
	s2.subcore_task[0] = (struct rknpu_subcore_task){0, 1};
	s2.subcore_task[1] = (struct rknpu_subcore_task){1, 1};
	assert_int_equal(rb_rknpu_submit(&f->dev, &s2), 0);
	assert_int_equal(traced(f, 1, RB_REG_PC_BASE_ADDRESS, 0), 1);
	expect_c(f, 0);
	expect_c(f, 1);
	assert_int_equal(rb_rknpu_fence_wait(&f->dev, s1.fence_fd, 1000), 0);
}

/* ---- failures ---- */

static void expect_timeout(struct fx *f, const char *why)
{
	struct rknpu_submit s = submit_args(f, 1);
	uint64_t t0 = rb_sim_kmod_now_ns(f->kmod);

	s.subcore_task[0] = (struct rknpu_subcore_task){0, 1};
	assert_int_equal(rb_rknpu_submit(&f->dev, &s), -ETIMEDOUT);
	/* timeout, then the soft reset's 100 ms (§d.1) */
	assert_true(rb_sim_kmod_now_ns(f->kmod) - t0 >= (TIMEOUT_MS + 100) * 1000000u);
	assert_int_equal(s.hw_elapse_time, 0);
	if (!strstr(rb_sim_kmod_last_fault(f->kmod), why))
		fail_msg("last fault '%s' does not say '%s'", rb_sim_kmod_last_fault(f->kmod), why);
	assert_non_null(strstr(rb_last_error(), "did not finish within 100 ms"));
}

static void test_iommu_fault(void **state)
{
	struct fx *f = *state;
	struct rknpu_submit s;

	make_programs(f, 1);
	desc(f, 0)->regcmd_addr = 0x2000; /* nothing is mapped this low */
	expect_timeout(f, "iommu fault");
	assert_true(c_untouched(f, 0));
	/* the NPU was reset and works again */
	desc(f, 0)->regcmd_addr = f->regcmd.dma_addr;
	s = submit_args(f, 1);
	s.subcore_task[0] = (struct rknpu_subcore_task){0, 1};
	assert_int_equal(rb_rknpu_submit(&f->dev, &s), 0);
	expect_c(f, 0);
}

static void test_irq_mismatch(void **state)
{
	struct fx *f = *state;

	make_programs(f, 1);
	desc(f, 0)->int_mask = 0xc00; /* the program raises DPU, the mask wants PPU */
	expect_timeout(f, "no interrupt");
}

static void test_slow_job_times_out(void **state)
{
	struct fx *f = *state;
	struct rknpu_submit s;

	make_programs(f, 1);
	s = submit_args(f, 1);
	s.timeout = 0;
	s.subcore_task[0] = (struct rknpu_subcore_task){0, 1};
	assert_int_equal(rb_rknpu_submit(&f->dev, &s), -ETIMEDOUT);
	assert_non_null(strstr(rb_sim_kmod_last_fault(f->kmod), "longer than its timeout"));
}

/* ---- fences and virtual time ---- */

static void test_fences(void **state)
{
	struct fx *f = *state;
	struct rknpu_submit s[3];
	int fence[3];
	uint64_t t0, t_par, t_seq;

	make_programs(f, 3);
	t0 = rb_sim_kmod_now_ns(f->kmod);
	for (int c = 0; c < 3; c++) {
		s[c] = submit_args(f, 1u << c);
		s[c].flags |= RKNPU_JOB_NONBLOCK | RKNPU_JOB_FENCE_OUT;
		s[c].subcore_task[c] = (struct rknpu_subcore_task){(uint32_t)c, 1};
		assert_int_equal(rb_rknpu_submit(&f->dev, &s[c]), 0);
		assert_true(s[c].fence_fd >= 1000);
		for (int j = 0; j < c; j++)
			assert_int_not_equal(s[c].fence_fd, fence[j]);
		fence[c] = s[c].fence_fd;
	}
	assert_int_equal(f->nw, 0); /* nothing runs before a wait */
	for (int c = 0; c < 3; c++)
		assert_int_equal(rb_rknpu_fence_wait(&f->dev, fence[c], 1000), 0);
	t_par = rb_sim_kmod_now_ns(f->kmod) - t0;
	for (int c = 0; c < 3; c++) {
		assert_true(traced_count(f, c) > 0);
		expect_c(f, c);
	}
	/* the same three jobs one after the other take longer */
	t0 = rb_sim_kmod_now_ns(f->kmod);
	for (int c = 0; c < 3; c++) {
		s[c] = submit_args(f, 1u << c);
		s[c].subcore_task[c] = (struct rknpu_subcore_task){(uint32_t)c, 1};
		assert_int_equal(rb_rknpu_submit(&f->dev, &s[c]), 0);
		assert_true((uint64_t)s[c].hw_elapse_time < rb_sim_kmod_now_ns(f->kmod) - t0);
	}
	t_seq = rb_sim_kmod_now_ns(f->kmod) - t0;
	assert_true(t_par < t_seq);
	/* closed fences are gone */
	assert_int_equal(f->dev.tr.ops->wait(f->dev.tr.priv, fence[0], 0), -EBADF);
	assert_int_equal(f->dev.tr.ops->close_fd(f->dev.tr.priv, fence[1]), -EBADF);
}

static void test_fence_wait_timeout(void **state)
{
	struct fx *f = *state;
	struct rknpu_submit s;
	const struct rb_transport_ops *ops = f->dev.tr.ops;
	uint64_t t0;

	make_programs(f, 1);
	s = submit_args(f, 1);
	s.flags |= RKNPU_JOB_NONBLOCK | RKNPU_JOB_FENCE_OUT;
	s.subcore_task[0] = (struct rknpu_subcore_task){0, 1};
	assert_int_equal(rb_rknpu_submit(&f->dev, &s), 0);
	t0 = rb_sim_kmod_now_ns(f->kmod);
	assert_int_equal(ops->wait(f->dev.tr.priv, s.fence_fd, 0), -ETIMEDOUT);
	assert_int_equal(rb_sim_kmod_now_ns(f->kmod), t0);
	assert_int_equal(ops->wait(f->dev.tr.priv, s.fence_fd, -1), 0);
	assert_true(rb_sim_kmod_now_ns(f->kmod) > t0);
	assert_int_equal(ops->wait(f->dev.tr.priv, s.fence_fd, 0), 0); /* stays signalled */
	assert_int_equal(rb_rknpu_fence_wait(&f->dev, s.fence_fd, 0), 0);
	expect_c(f, 0);
}

/* A failed non-blocking job: its fence reports the timeout. */
static void test_fence_of_failed_job(void **state)
{
	struct fx *f = *state;
	struct rknpu_submit s;

	make_programs(f, 1);
	desc(f, 0)->regcmd_addr = 0x2000;
	s = submit_args(f, 4);
	s.flags |= RKNPU_JOB_NONBLOCK | RKNPU_JOB_FENCE_OUT;
	s.subcore_task[2] = (struct rknpu_subcore_task){0, 1};
	assert_int_equal(rb_rknpu_submit(&f->dev, &s), 0);
	assert_int_equal(rb_rknpu_fence_wait(&f->dev, s.fence_fd, 10000), -ETIMEDOUT);
	assert_non_null(strstr(rb_sim_kmod_last_fault(f->kmod), "core 2: iommu fault"));
}

/* FENCE_IN: a job on core 1 waits for a job on core 0 instead of running beside it. */
static void test_fence_in(void **state)
{
	struct fx *f = *state;
	struct rknpu_submit a, b;
	uint64_t t_a;
	size_t done_a = 0;

	make_programs(f, 2);
	a = submit_args(f, 1);
	a.flags |= RKNPU_JOB_NONBLOCK | RKNPU_JOB_FENCE_OUT;
	a.subcore_task[0] = (struct rknpu_subcore_task){0, 1};
	assert_int_equal(rb_rknpu_submit(&f->dev, &a), 0);
	b = submit_args(f, 2);
	b.flags |= RKNPU_JOB_NONBLOCK | RKNPU_JOB_FENCE_IN | RKNPU_JOB_FENCE_OUT;
	b.fence_fd = a.fence_fd;
	b.subcore_task[1] = (struct rknpu_subcore_task){1, 1};
	assert_int_equal(rb_rknpu_submit(&f->dev, &b), 0);
	assert_int_not_equal(b.fence_fd, a.fence_fd);
	assert_int_equal(rb_rknpu_fence_wait(&f->dev, a.fence_fd, 1000), 0);
	t_a = rb_sim_kmod_now_ns(f->kmod);
	assert_int_equal(rb_rknpu_fence_wait(&f->dev, b.fence_fd, 1000), 0);
	assert_true(rb_sim_kmod_now_ns(f->kmod) > t_a);
	/* core 1 was committed only after core 0's interrupt */
	while (done_a < f->nw && !(f->w[done_a].core == 0 && f->w[done_a].value == 0x1ffff))
		done_a++;
	assert_true(done_a < f->nw);
	for (size_t i = 0; i < done_a; i++)
		assert_int_equal(f->w[i].core, 0);
	assert_true(traced_count(f, 1) > 0);
	expect_c(f, 0);
	expect_c(f, 1);
	b = submit_args(f, 2);
	b.flags |= RKNPU_JOB_FENCE_IN;
	b.fence_fd = a.fence_fd; /* closed */
	assert_int_equal(rb_rknpu_submit(&f->dev, &b), -EINVAL);
}

/* More than 4095 tasks: the driver commits them in chunks (§a.3). */
static void test_chunks(void **state)
{
	struct fx *f = *state;
	const uint32_t ntasks = 4097;
	struct rb_npu_task *t = calloc(ntasks, sizeof(*t));
	struct rb_regcmd_layout *lay = calloc(ntasks, sizeof(*lay));
	struct rb_regcmd rc;
	struct rknpu_submit s;
	struct rb_rknpu *d = &f->dev;

	assert_non_null(t);
	assert_non_null(lay);
	make_programs(f, 1);
	rb_rknpu_bo_destroy(d, &f->regcmd);
	rb_rknpu_bo_destroy(d, &f->tasks);
	for (uint32_t i = 0; i < ntasks; i++)
		t[i] = matmul_task(f, f->c.dma_addr);
	assert_int_equal(rb_rknpu_bo_create(d, ntasks * 1024, 0, &f->regcmd), 0);
	assert_int_equal(rb_rknpu_bo_create(d, ntasks * sizeof(struct rknpu_task),
					    RKNPU_MEM_KERNEL_MAPPING, &f->tasks),
			 0);
	rb_regcmd_init(&rc);
	assert_int_equal(rb_regcmd_build_chain(&rc, t, ntasks, f->regcmd.dma_addr, lay), 0);
	assert_true(rc.count * 8 <= f->regcmd.size);
	memcpy(f->regcmd.map, rc.words, rc.count * 8);
	for (uint32_t i = 0; i < ntasks; i++)
		*desc(f, i) = (struct rknpu_task){.int_mask = DPU_IRQ,
						  .regcfg_amount = lay[i].regcfg_amount,
						  .regcmd_addr = lay[i].addr};
	rb_regcmd_release(&rc);
	s = submit_args(f, 1);
	s.task_number = ntasks;
	s.subcore_task[0] = (struct rknpu_subcore_task){0, ntasks};
	f->nw = 0;
	assert_int_equal(rb_rknpu_submit(&f->dev, &s), 0);
	assert_int_equal(s.task_counter, ntasks);
	assert_int_equal(traced(f, 0, RB_REG_PC_TASK_CON, 0), 0x7000 | 4095);
	for (size_t i = 0; i < f->nw; i++)
		if (f->w[i].offset == reg_off(RB_REG_PC_INTERRUPT_CLEAR) &&
		    f->w[i].value == 0x1ffff) {
			assert_int_equal(traced(f, 0, RB_REG_PC_TASK_CON, i), 0x7002);
			assert_int_equal(traced(f, 0, RB_REG_PC_BASE_ADDRESS, i + 2),
					 lay[4095].addr);
			break;
		}
	expect_c(f, 0);
	free(t);
	free(lay);
}

/* Blocking submits from host threads, as the seed backend does (one per core): the
 * kernel serializes them safely and every job completes. */
struct worker {
	struct fx *f;
	int core, submits;
	bool grouped;
	int failures;
};

static void *submit_loop(void *arg)
{
	struct worker *w = arg;

	for (int i = 0; i < w->submits; i++) {
		struct rknpu_submit s = submit_args(w->f, 1u << w->core);

		s.task_start = (uint32_t)w->core;
		s.subcore_task[w->core] = (struct rknpu_subcore_task){(uint32_t)w->core, 1};
		w->failures += rb_rknpu_submit(&w->f->dev, &s) != 0 || s.task_counter != 1;
	}
	if (w->grouped)
		rb_sim_kmod_group_leave(w->f->kmod);
	return NULL;
}

/* Runs one thread per entry of core[] with submits[i] blocking submits each; the
 * virtual time it took. grouped: as one thread group (sim.h). */
static uint64_t run_threads(struct fx *f, int n, const int core[], const int submits[],
			    bool grouped)
{
	uint64_t t0 = rb_sim_kmod_now_ns(f->kmod);
	struct worker w[4];
	pthread_t th[4];

	if (grouped)
		assert_int_equal(rb_sim_kmod_group_begin(f->kmod, (unsigned)n), 0);
	for (int i = 0; i < n; i++) {
		w[i] = (struct worker){f, core[i], submits[i], grouped, 0};
		assert_int_equal(pthread_create(&th[i], NULL, submit_loop, &w[i]), 0);
	}
	for (int i = 0; i < n; i++) {
		assert_int_equal(pthread_join(th[i], NULL), 0);
		assert_int_equal(w[i].failures, 0);
		expect_c(f, (uint32_t)core[i]);
	}
	if (grouped)
		rb_sim_kmod_group_end(f->kmod);
	return rb_sim_kmod_now_ns(f->kmod) - t0;
}

static void test_threads(void **state)
{
	struct fx *f = *state;
	const int cores[3] = {0, 1, 2}, twenty[3] = {20, 20, 20};
	uint64_t one, serial;

	make_programs(f, 3);
	rb_sim_kmod_set_mmio_trace(f->kmod, NULL, NULL);
	one = run_threads(f, 1, cores, twenty, false);
	serial = run_threads(f, 3, cores, twenty, false);
	/* outside a group each blocking submit runs alone, one after another */
	assert_true(serial >= 3 * one - one / 10);
}

/* The hardware time of one job alone on core 0 (the kernel's hw_elapse_time). */
static uint64_t job_hw_ns(struct fx *f)
{
	struct rknpu_submit s = submit_args(f, 1);

	s.subcore_task[0] = (struct rknpu_subcore_task){0, 1};
	assert_int_equal(rb_rknpu_submit(&f->dev, &s), 0);
	assert_true(s.hw_elapse_time > 0);
	return (uint64_t)s.hw_elapse_time;
}

/* In a thread group, cores run at once in virtual time and one core's jobs one after
 * another: two threads on three cores take less than one job's hardware time longer
 * than one thread, two threads on one core at least that much longer (their first
 * jobs are submitted at once, so one waits for the other). The times are the same run
 * after run; a member that submits less leaves early without holding the others. */
static void test_thread_group(void **state)
{
	struct fx *f = *state;
	const int cores[3] = {0, 1, 2}, core0[2] = {0, 0};
	const int twenty[3] = {20, 20, 20}, uneven[2] = {5, 20};
	uint64_t hw, one, three, again, same_core, short_member;

	make_programs(f, 3);
	rb_sim_kmod_set_mmio_trace(f->kmod, NULL, NULL);
	hw = job_hw_ns(f);
	one = run_threads(f, 1, cores, twenty, true);
	three = run_threads(f, 3, cores, twenty, true);
	again = run_threads(f, 3, cores, twenty, true);
	same_core = run_threads(f, 2, core0, twenty, true);
	short_member = run_threads(f, 2, cores, uneven, true);
	assert_true(three < one + hw);
	assert_int_equal(three, again);
	assert_true(same_core >= one + hw);
	assert_int_equal(same_core, run_threads(f, 2, core0, twenty, true));
	assert_true(short_member < one + hw);
	assert_int_equal(rb_sim_kmod_group_begin(f->kmod, 2), 0);
	assert_int_equal(rb_sim_kmod_group_begin(f->kmod, 2), -EBUSY);
	rb_sim_kmod_group_end(f->kmod);
	assert_int_equal(rb_sim_kmod_group_begin(f->kmod, 0), -EINVAL);
}

/* ---- the real thing: Appendix A on the emulated NPU ---- */

static void test_matmul(void **state)
{
	struct fx *f = *state;
	struct rknpu_submit s;

	make_programs(f, 1);
	s = submit_args(f, 1);
	s.timeout = 6000;
	s.subcore_task[0] = (struct rknpu_subcore_task){0, 1};
	assert_int_equal(rb_rknpu_submit(&f->dev, &s), 0);
	assert_int_equal(rb_rknpu_bo_sync(&f->dev, &f->c, RKNPU_MEM_SYNC_FROM_DEVICE, 0, f->c.size),
			 0);
	expect_c(f, 0);
	assert_string_equal(rb_sim_kmod_last_fault(f->kmod), "");
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    T(test_versions),
	    T(test_drm_version),
	    T(test_actions),
	    T(test_act_reset),
	    T(test_bo_create_map_destroy),
	    T(test_huge_pages),
	    T(test_handles),
	    cmocka_unit_test(test_budget),
	    T(test_address_space_full),
	    T(test_bad_mem_args),
	    T(test_old_mem_create),
	    T(test_destroy_while_mapped),
	    T(test_submit_bad_args),
	    T(test_matmul),
	    T(test_commit_sequence),
	    T(test_commit_values),
	    T(test_core_masks),
	    T(test_unknown_masks),
	    T(test_auto_least_loaded),
	    T(test_iommu_fault),
	    T(test_irq_mismatch),
	    T(test_slow_job_times_out),
	    T(test_fences),
	    T(test_fence_wait_timeout),
	    T(test_fence_of_failed_job),
	    T(test_fence_in),
	    T(test_chunks),
	    T(test_threads),
	    T(test_thread_group),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
