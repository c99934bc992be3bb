/* libfakenode.so: a fake NPU device node for the unmodified rknn-bench binary.
 *
 *   RKNN_BENCH_FAKENODE=/dev/dri/card1=rknpu LD_PRELOAD=build/tests/libfakenode.so \
 *       build/rknn-bench run --device rknpu:/dev/dri/card1 --shape 4x64x16
 *
 * RKNN_BENCH_FAKENODE is a comma-separated list of PATH=KIND[:OPTION...]. KIND names an
 * emulated kernel (the `kinds` table); the first open of PATH creates the kernel (the
 * device), and every open of PATH while one of its descriptors lives is a file of that
 * kernel (a DRM file: handles, and on rocket NPU addresses and scheduling, are per open;
 * buffers move between files through PRIME). Open, ioctl, mmap, munmap, poll and close
 * on the descriptors are served by it, so the host transport, libdrm's drmGetVersion/drmIoctl,
 * the ioctl numbers and the struct layouts run exactly as on a board. Options inject
 * what a board can do to a user: `eacces`, `ebusy`, `enoent` (open fails so), `name=X`
 * (DRM_IOCTL_VERSION reports driver X: another device, e.g. the display controller),
 * `version=A.B.C` (it reports that version), `mem=BYTES` (the kernel's buffers hold at
 * most BYTES: too little DMA memory). Board failures of an rknpu node (the selftest's
 * tests; the program or descriptor the binary wrote is changed at SUBMIT, as silicon or
 * a kernel that differs from what rknn-bench believes would act on it):
 *   `hang`      word 1 of each submitted task gets an unknown target: the core stops,
 *               the job times out, the output stays unwritten
 *   `iommu`     CNA.FEATURE_DATA_ADDR of each task points at 0x80000000, outside every
 *               buffer: an IOMMU fault, the job times out
 *   `noirq`     each task's int_mask is 0: the NPU finishes and writes the output, but
 *               no interrupt reaches the kernel, whose wait times out
 *   `badfield`  on core 1 only, DPU.BS_OW_CFG SIZE_E is 1 (right for fp16 output, not
 *               fp32): channels 8-15 of every 16 stay unwritten, a wrong result
 * On a rocket node `hang` and `iommu` break the programs of its SUBMIT's jobs the same
 * way (rocket's tasks have no interrupt mask and its jobs no core: no noirq, badfield).
 * With RKNN_BENCH_FAKENODE set, /dev/kmsg is the emulated kernels' log (the fake board's
 * kernel log: one record a line, from the first open or SEEK_END). Every other path
 * and descriptor passes through to the next definition (dlsym RTLD_NEXT).
 *
 * Descriptors are real: an open of a fake path opens /dev/null and the emulated kernel
 * is attached to that fd, so fd numbers never collide with the process's own; the out
 * fences the kernel hands out (numbers of its own, >= 1000) are likewise given a /dev/null
 * fd each, translated in the submit struct both ways, answered by poll (a wait on the
 * emulated fence) and SYNC_IOC_FILE_INFO (its status), and closed with the kernel's
 * fence. The dma-bufs of PRIME (DRM_IOCTL_PRIME_HANDLE_TO_FD / FD_TO_HANDLE) are
 * placeholders the same way, closed with the kernel's dma-buf. Under strace the opens
 * therefore show as openat("/dev/null"); dup, fcntl and fstat on a fake descriptor
 * reach the /dev/null underneath.
 *
 * strace sees syscalls only, and the served ioctls never reach the kernel. So each one
 * is also issued, with the caller's request number and argument, on the /dev/null
 * placeholder (which fails with ENOTTY; the result is ignored and errno restored):
 * `strace -f -e trace=ioctl -e raw=ioctl` shows the exact request numbers the binary
 * used (without raw=ioctl strace prints names it guesses from the numbers).
 *
 * RKNN_BENCH_FAKENODE_STATS=FILE writes, at exit, how many times each ioctl was served
 * ("ioctl 0xc0686441 10000") and what is still open ("open files 0", "open fences 0",
 * "open dma-bufs 0", "open mappings 0"): the leak check counts submits and finds unclosed
 * objects with it.
 *
 * Thread-safe: the descriptor table and the mapping list are under one lock, never held
 * while an emulated kernel runs (each kernel has a lock of its own); a kernel lives until
 * its files, its fences, its dma-bufs and its mappings are all gone (a reference count). */
#undef _FORTIFY_SOURCE /* this file defines open() itself */

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/sync_file.h>

#include "uapi/drm/rknpu_ioctl.h"
#include "uapi/drm/rocket_accel.h"
#include "hw/regs.h"
#include "sim/sim.h"

#define MAX_NODES 8
#define FD_SLOTS  4096 /* fds at or above are refused (EMFILE) for fake nodes */

/* ---- kinds of node ---- */

/* Where an ioctl carries a fence fd, and whether it goes in, comes out, or neither. */
typedef int *fence_field_fn(unsigned long request, void *arg, bool *in, bool *out);

struct kind {
	const char *name;
	struct rb_sim_kmod *(*create)(const struct rb_sim_config *cfg);
	fence_field_fn *fence_field; /* NULL: the driver has no fence fds */
};

static int *rknpu_fence_field(unsigned long request, void *arg, bool *in, bool *out)
{
	struct rknpu_submit *s = arg;

	if (request != DRM_IOCTL_RKNPU_SUBMIT)
		return NULL;
	*in = s->flags & RKNPU_JOB_FENCE_IN;
	*out = s->flags & RKNPU_JOB_FENCE_OUT;
	return &s->fence_fd;
}

/* Adding an emulated kernel is a line here. */
static const struct kind kinds[] = {
    {"rknpu", rb_sim_kmod_rknpu_new, rknpu_fence_field},
    {"rocket", rb_sim_kmod_rocket_new, NULL},
};

struct kfile;

/* Board failures injected at SUBMIT (rknpu nodes; see the top of the file). */
enum { INJ_HANG = 1, INJ_IOMMU = 2, INJ_NOIRQ = 4, INJ_BADFIELD = 8 };

struct node {
	char path[256];
	struct kfile *dev; /* its kernel while a descriptor of it lives (under lock) */
	const struct kind *kind;
	int open_err;  /* errno open fails with; 0: opens */
	char name[32]; /* DRM name override; "": the kernel's */
	int version[3];
	bool version_set;
	uint64_t mem_budget; /* mem=BYTES; 0: the emulator's default */
	unsigned inject;     /* INJ_* */
};

static struct node nodes[MAX_NODES];
static size_t n_nodes;

/* ---- the next definitions ---- */

static struct {
	int (*open)(const char *, int, ...);
	int (*openat)(int, const char *, int, ...);
	int (*ioctl)(int, unsigned long, ...);
	void *(*mmap)(void *, size_t, int, int, int, off_t);
	int (*munmap)(void *, size_t);
	int (*poll)(struct pollfd *, nfds_t, int);
	int (*close)(int);
	int (*flock)(int, int);
} real;

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void die(const char *what, const char *detail)
{
	fprintf(stderr, "libfakenode: %s '%s'\n", what, detail);
	abort();
}

/* A.B.C of non-negative decimal integers, nothing else. */
static bool parse_version(const char *text, int version[3])
{
	const char *p = text;
	char *end;

	for (int i = 0; i < 3; i++) {
		long v;

		errno = 0;
		v = strtol(p, &end, 10);
		if (errno || end == p || v < 0 || v > INT_MAX || *end != (i < 2 ? '.' : '\0'))
			return false;
		version[i] = (int)v;
		p = end + 1;
	}
	return true;
}

static void parse_option(struct node *n, const char *opt)
{
	if (strcmp(opt, "eacces") == 0)
		n->open_err = EACCES;
	else if (strcmp(opt, "ebusy") == 0)
		n->open_err = EBUSY;
	else if (strcmp(opt, "enoent") == 0)
		n->open_err = ENOENT;
	else if (strncmp(opt, "name=", 5) == 0)
		snprintf(n->name, sizeof(n->name), "%s", opt + 5);
	else if (strncmp(opt, "version=", 8) == 0 && parse_version(opt + 8, n->version))
		n->version_set = true;
	else if (strncmp(opt, "mem=", 4) == 0 && (n->mem_budget = strtoull(opt + 4, NULL, 10)))
		;
	else if (strcmp(opt, "hang") == 0)
		n->inject |= INJ_HANG;
	else if (strcmp(opt, "iommu") == 0)
		n->inject |= INJ_IOMMU;
	else if (strcmp(opt, "noirq") == 0)
		n->inject |= INJ_NOIRQ;
	else if (strcmp(opt, "badfield") == 0)
		n->inject |= INJ_BADFIELD;
	else
		die("RKNN_BENCH_FAKENODE: unknown option", opt);
}

static const struct kind *find_kind(const char *name)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strcmp(kinds[i].name, name) == 0)
			return &kinds[i];
	die("RKNN_BENCH_FAKENODE: unknown kind", name);
	return NULL;
}

/* One PATH=KIND[:OPTION...] entry, modified in place; PATH ends at the first '='. */
static void parse_node(char *entry)
{
	char *eq = strchr(entry, '='), *opt, *save = NULL;
	struct node *n = &nodes[n_nodes];

	if (n_nodes == MAX_NODES || !eq || eq == entry || (size_t)(eq - entry) >= sizeof(n->path))
		die("RKNN_BENCH_FAKENODE: bad entry (PATH=KIND[:OPTION...])", entry);
	*eq = '\0';
	snprintf(n->path, sizeof(n->path), "%s", entry);
	opt = strtok_r(eq + 1, ":", &save);
	n->kind = find_kind(opt ? opt : "");
	while ((opt = strtok_r(NULL, ":", &save)))
		parse_option(n, opt);
	n_nodes++;
}

/* Read at the first open, not at the first interposed call: a sanitizer runtime calls
 * mmap before libc has set up the environment. */
static void parse_config(void)
{
	const char *env = getenv("RKNN_BENCH_FAKENODE");
	char *copy, *entry, *save = NULL;

	if (!env)
		return;
	copy = strdup(env);
	if (!copy)
		die("out of memory parsing", env);
	for (entry = strtok_r(copy, ",", &save); entry; entry = strtok_r(NULL, ",", &save))
		parse_node(entry);
	free(copy);
}

static void init(void)
{
	real.open = dlsym(RTLD_NEXT, "open");
	real.openat = dlsym(RTLD_NEXT, "openat");
	real.ioctl = dlsym(RTLD_NEXT, "ioctl");
	real.mmap = dlsym(RTLD_NEXT, "mmap");
	real.munmap = dlsym(RTLD_NEXT, "munmap");
	real.poll = dlsym(RTLD_NEXT, "poll");
	real.close = dlsym(RTLD_NEXT, "close");
	real.flock = dlsym(RTLD_NEXT, "flock");
}

static void init_once_(void)
{
	pthread_once(&init_once, init);
}

/* ---- descriptors ---- */

/* An emulated kernel and what keeps it alive: its files, fences, dma-bufs, mappings. */
struct kbo; /* a buffer the kernel made (rknpu MEM_CREATE), for the injections */

struct kfile {
	struct rb_sim_kmod *kmod;
	struct node *node;
	int refs;
	struct kbo *bos; /* under lock */
	size_t n_bos, cap_bos;
};

enum slot_type { SLOT_FREE = 0, SLOT_FILE, SLOT_FENCE, SLOT_DMABUF, SLOT_TYPES };

struct slot {
	enum slot_type type;
	struct kfile *file;
	int kfence; /* SLOT_FENCE, SLOT_DMABUF: the kernel's number for it; SLOT_FILE: the
		       kernel's file */
	int status; /* SLOT_FENCE: for SYNC_IOC_FILE_INFO: 0 active, 1 signalled, <0 error */
};

struct mapping {
	void *addr;
	size_t len;
	struct kfile *file;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct slot slots[FD_SLOTS];
static struct mapping *maps;
static size_t n_maps, cap_maps;

/* ---- statistics ---- */

#define MAX_REQUESTS 64

static struct {
	unsigned long request;
	unsigned long count;
} served[MAX_REQUESTS];

static void count_request(unsigned long request)
{
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < MAX_REQUESTS; i++) {
		if (served[i].count && served[i].request != request)
			continue;
		served[i].request = request;
		served[i].count++;
		break;
	}
	pthread_mutex_unlock(&lock);
}

__attribute__((destructor)) static void write_stats(void)
{
	const char *path = getenv("RKNN_BENCH_FAKENODE_STATS");
	size_t live[SLOT_TYPES] = {0};
	FILE *f;

	if (!path || !(f = fopen(path, "w")))
		return;
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < MAX_REQUESTS && served[i].count; i++)
		fprintf(f, "ioctl 0x%lx %lu\n", served[i].request, served[i].count);
	for (size_t i = 0; i < FD_SLOTS; i++)
		live[slots[i].type]++;
	fprintf(f, "open files %zu\nopen fences %zu\nopen dma-bufs %zu\nopen mappings %zu\n",
		live[SLOT_FILE], live[SLOT_FENCE], live[SLOT_DMABUF], n_maps);
	pthread_mutex_unlock(&lock);
	fclose(f);
}

static void file_put(struct kfile *f)
{
	int refs;

	pthread_mutex_lock(&lock);
	refs = --f->refs;
	if (refs == 0 && f->node->dev == f)
		f->node->dev = NULL; /* the next open creates a kernel again */
	pthread_mutex_unlock(&lock);
	if (refs == 0) {
		rb_sim_kmod_free(f->kmod);
		free(f->bos);
		free(f);
	}
}

/* The slot of fd if it is of `type` (SLOT_FREE: any fake), with a reference on its
 * file taken; false if fd is not ours. */
static bool slot_get(int fd, enum slot_type type, struct slot *out)
{
	bool ours;

	if (fd < 0 || fd >= FD_SLOTS)
		return false;
	pthread_mutex_lock(&lock);
	ours = slots[fd].type != SLOT_FREE && (type == SLOT_FREE || slots[fd].type == type);
	if (ours) {
		*out = slots[fd];
		out->file->refs++;
	}
	pthread_mutex_unlock(&lock);
	return ours;
}

static bool is_ours(int fd)
{
	bool ours;

	if (fd < 0 || fd >= FD_SLOTS)
		return false;
	pthread_mutex_lock(&lock);
	ours = slots[fd].type != SLOT_FREE;
	pthread_mutex_unlock(&lock);
	return ours;
}

/* A /dev/null fd standing for a fake file or fence, registered in the table (the
 * reference on `file` passes to the slot); -1 with errno. */
static int placeholder(int flags, enum slot_type type, struct kfile *file, int kfence)
{
	int fd = real.open("/dev/null", O_RDWR | (flags & O_CLOEXEC));

	if (fd < 0)
		return -1;
	if (fd >= FD_SLOTS) {
		real.close(fd);
		errno = EMFILE;
		return -1;
	}
	pthread_mutex_lock(&lock);
	slots[fd] = (struct slot){.type = type, .file = file, .kfence = kfence};
	pthread_mutex_unlock(&lock);
	return fd;
}

/* ---- board failures at SUBMIT (rknpu) ---- */

struct kbo {
	uint32_t handle;
	int file; /* the kernel's file the handle belongs to */
	uint64_t obj_addr, dma_addr, size;
	uint64_t offset; /* rocket: its mmap offset; rknpu: asked for with MEM_MAP */
};

static void bo_track(struct kfile *f, const struct kbo *bo)
{
	pthread_mutex_lock(&lock);
	if (f->n_bos == f->cap_bos) {
		size_t cap = f->cap_bos ? 2 * f->cap_bos : 16;
		struct kbo *v = realloc(f->bos, cap * sizeof(*v));

		if (v) {
			f->bos = v;
			f->cap_bos = cap;
		}
	}
	if (f->n_bos < f->cap_bos)
		f->bos[f->n_bos++] = *bo;
	pthread_mutex_unlock(&lock);
}

/* By object token (rknpu), or by file and handle (rocket: obj_addr 0). */
static void bo_untrack(struct kfile *f, uint64_t obj_addr, int file, uint32_t handle)
{
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < f->n_bos; i++)
		if (obj_addr ? f->bos[i].obj_addr == obj_addr
			     : f->bos[i].file == file && f->bos[i].handle == handle) {
			f->bos[i] = f->bos[--f->n_bos];
			break;
		}
	pthread_mutex_unlock(&lock);
}

/* The buffer with this object token, or (obj 0) the one holding NPU address dma in
 * `file` (rocket: every file has an address space of its own; -1: any file). */
static bool bo_find(struct kfile *f, uint64_t obj, uint64_t dma, int file, struct kbo *out)
{
	bool found = false;

	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < f->n_bos && !found; i++) {
		const struct kbo *b = &f->bos[i];

		found = obj ? b->obj_addr == obj
			    : (file < 0 || b->file == file) && dma >= b->dma_addr &&
				  dma < b->dma_addr + b->size;
		if (found)
			*out = *b;
	}
	pthread_mutex_unlock(&lock);
	return found;
}

/* The kernel's pages of a buffer, mapped here as the binary maps them; NULL if not. */
static void *bo_map(struct kfile *f, const struct kbo *b)
{
	struct rknpu_mem_map m = {.handle = b->handle, .offset = b->offset};
	void *p;

	if (!b->offset && rb_sim_kmod_file_ioctl(f->kmod, b->file, DRM_IOCTL_RKNPU_MEM_MAP, &m) < 0)
		return NULL;
	if (rb_sim_kmod_file_mmap(f->kmod, b->file, b->size, m.offset, &p) < 0)
		return NULL;
	return p;
}

static uint64_t *find_word(uint64_t *words, size_t n, enum rb_reg_id id)
{
	const struct rb_reg_info *reg = rb_reg(id);

	for (size_t i = 0; i < n; i++)
		if (rb_word_offset(words[i]) == reg->offset &&
		    rb_word_target(words[i]) == rb_block(reg->block)->target)
			return &words[i];
	return NULL;
}

/* Changes the program of one task (n words at NPU address addr in `file`, -1: any) as
 * the injection says. */
static void break_program(struct kfile *f, unsigned inject, uint64_t addr, size_t n, int file)
{
	struct kbo b;
	uint64_t *words, *w;
	void *map;

	if (!bo_find(f, 0, addr, file, &b) || !(map = bo_map(f, &b)))
		return;
	if (n > (b.dma_addr + b.size - addr) / 8)
		n = (size_t)((b.dma_addr + b.size - addr) / 8);
	words = (uint64_t *)((char *)map + (addr - b.dma_addr));
	if ((inject & INJ_HANG) && n > 1) /* an unknown target code (0x0003) */
		words[1] = (words[1] & ~(UINT64_C(0xffff) << 48)) | (UINT64_C(0x0003) << 48);
	if ((inject & INJ_IOMMU) && (w = find_word(words, n, RB_REG_CNA_FEATURE_DATA_ADDR)))
		*w = rb_word_reg(RB_REG_CNA_FEATURE_DATA_ADDR, 0x80000000u);
	if ((inject & INJ_BADFIELD) && (w = find_word(words, n, RB_REG_DPU_BS_OW_CFG))) {
		uint32_t v = rb_word_value(*w);

		rb_field_pack(RB_FIELD_DPU_BS_OW_CFG_SIZE_E_0, 1, &v);
		rb_field_pack(RB_FIELD_DPU_BS_OW_CFG_SIZE_E_1, 1, &v);
		rb_field_pack(RB_FIELD_DPU_BS_OW_CFG_SIZE_E_2, 1, &v);
		*w = rb_word_reg(RB_REG_DPU_BS_OW_CFG, v);
	}
	rb_sim_kmod_munmap(f->kmod, map, b.size);
}

/* The subcore_task entry core c of a submit's core_mask takes (the kernel's reading,
 * npu-facts §d.1); -1 when c does not take part. */
static int subcore_index(uint32_t mask, int c)
{
	if (!(mask & (1u << c)))
		return -1;
	return mask == 7 ? c + 2 : c;
}

static void inject_submit(struct kfile *f, int file, const struct rknpu_submit *s)
{
	unsigned inject = f->node->inject;
	struct rknpu_task *tasks;
	struct kbo tb;

	if (!bo_find(f, s->task_obj_addr, 0, -1, &tb) || !(tasks = bo_map(f, &tb)))
		return;
	(void)file;
	for (int c = 0; c < 3; c++) {
		int i = subcore_index(s->core_mask, c);
		unsigned what = c == 1 ? inject : inject & ~(unsigned)INJ_BADFIELD;

		if (i < 0)
			continue;
		for (uint32_t t = 0; t < s->subcore_task[i].task_number; t++) {
			struct rknpu_task *d = &tasks[s->subcore_task[i].task_start + t];

			if ((char *)(d + 1) > (char *)tasks + tb.size)
				break;
			if (what & INJ_NOIRQ)
				d->int_mask = 0;
			if (what & (INJ_HANG | INJ_IOMMU | INJ_BADFIELD))
				break_program(f, what, d->regcmd_addr, d->regcfg_amount, -1);
		}
	}
	rb_sim_kmod_munmap(f->kmod, tasks, tb.size);
}

/* Rocket's jobs carry their tasks in the caller's memory (this process's): hang and
 * iommu break their programs in the submitting file's buffers. */
static void inject_rocket_submit(struct kfile *f, int file, const struct drm_rocket_submit *s)
{
	unsigned inject = f->node->inject & (INJ_HANG | INJ_IOMMU);

	for (uint32_t j = 0; inject && j < s->job_count; j++) {
		const struct drm_rocket_job *job =
		    (const void *)(uintptr_t)(s->jobs + (uint64_t)j * s->job_struct_size);

		for (uint32_t t = 0; t < job->task_count; t++) {
			const struct drm_rocket_task *task =
			    (const void *)(uintptr_t)(job->tasks +
						      (uint64_t)t * job->task_struct_size);

			break_program(f, inject, task->regcmd, task->regcmd_count, file);
		}
	}
}

/* Before and after an ioctl of a node with injections: the buffers it makes and
 * frees, and its submits. */
static void inject_before(struct kfile *f, int file, unsigned long request, void *arg)
{
	if (request == DRM_IOCTL_RKNPU_SUBMIT)
		inject_submit(f, file, arg);
	else if (request == DRM_IOCTL_ROCKET_SUBMIT)
		inject_rocket_submit(f, file, arg);
	else if (request == DRM_IOCTL_RKNPU_MEM_DESTROY)
		bo_untrack(f, ((struct rknpu_mem_destroy *)arg)->obj_addr, file, 0);
	else if (request == DRM_IOCTL_GEM_CLOSE)
		bo_untrack(f, 0, file, ((struct drm_gem_close *)arg)->handle);
}

static void inject_after(struct kfile *f, int file, unsigned long request, void *arg)
{
	if (request == DRM_IOCTL_RKNPU_MEM_CREATE) {
		const struct rknpu_mem_create *c = arg;

		bo_track(f, &(struct kbo){c->handle, file, c->obj_addr, c->dma_addr, c->size, 0});
	} else if (request == DRM_IOCTL_ROCKET_CREATE_BO) {
		const struct drm_rocket_create_bo *c = arg;

		bo_track(f, &(struct kbo){c->handle, file, 0, c->dma_address, c->size, c->offset});
	}
}

/* ---- /dev/kmsg: the emulated kernels' log ---- */

#define KMSG_READERS 8

static struct {
	int fd; /* 0: free */
	struct rb_sim_kmod *kmod;
	size_t pos; /* bytes of kmod's log read */
	unsigned long seq;
} kmsg[KMSG_READERS];

/* The live kernel of the first node that has one (under lock). */
static struct rb_sim_kmod *live_kernel(void)
{
	for (size_t i = 0; i < n_nodes; i++)
		if (nodes[i].dev)
			return nodes[i].dev->kmod;
	return NULL;
}

static int kmsg_slot(int fd)
{
	for (int i = 0; fd > 0 && i < KMSG_READERS; i++)
		if (kmsg[i].fd == fd)
			return i;
	return -1;
}

static int kmsg_open(int flags)
{
	int fd = real.open("/dev/null", O_RDONLY | (flags & O_CLOEXEC));

	pthread_mutex_lock(&lock);
	for (int i = 0; fd > 0 && i < KMSG_READERS; i++)
		if (!kmsg[i].fd) {
			kmsg[i].fd = fd;
			kmsg[i].kmod = live_kernel();
			kmsg[i].pos = 0;
			break;
		}
	pthread_mutex_unlock(&lock);
	return fd;
}

/* One record ("6,SEQ,USEC,-;TEXT\n") of the next line, 0 at the end (EAGAIN). */
static ssize_t kmsg_read(int i, char *buf, size_t size)
{
	struct rb_sim_kmod *k;
	const char *log, *line, *nl;
	unsigned long long s = 0, us = 0;
	int n;

	pthread_mutex_lock(&lock);
	k = live_kernel();
	if (k != kmsg[i].kmod) { /* a new kernel: its log from the start */
		kmsg[i].kmod = k;
		kmsg[i].pos = 0;
	}
	log = k ? rb_sim_kmod_log(k) : "";
	if (kmsg[i].pos > strlen(log))
		kmsg[i].pos = 0;
	line = log + kmsg[i].pos;
	nl = strchr(line, '\n');
	if (!nl) {
		pthread_mutex_unlock(&lock);
		errno = EAGAIN;
		return -1;
	}
	kmsg[i].pos += (size_t)(nl - line) + 1;
	if (line[0] == '[') { /* "[SECONDS.MICROS] TEXT", the emulated kernel's stamp */
		char *end;

		s = strtoull(line + 1, &end, 10);
		us = *end == '.' ? strtoull(end + 1, &end, 10) : 0;
		if (end[0] == ']' && end[1] == ' ')
			line = end + 2;
	}
	n = snprintf(buf, size, "6,%lu,%llu,-;%.*s\n", kmsg[i].seq++, s * 1000000 + us,
		     (int)(nl - line), line);
	pthread_mutex_unlock(&lock);
	return n < 0 ? -1 : (size_t)n < size ? n : (ssize_t)size;
}

ssize_t read(int fd, void *buf, size_t size)
{
	static ssize_t (*next)(int, void *, size_t);
	int i;

	if (!next)
		next = (ssize_t(*)(int, void *, size_t))dlsym(RTLD_NEXT, "read");
	pthread_mutex_lock(&lock);
	i = kmsg_slot(fd);
	pthread_mutex_unlock(&lock);
	return i < 0 ? next(fd, buf, size) : kmsg_read(i, buf, size);
}

off_t lseek(int fd, off_t offset, int whence)
{
	static off_t (*next)(int, off_t, int);
	int i;

	if (!next)
		next = (off_t(*)(int, off_t, int))dlsym(RTLD_NEXT, "lseek");
	pthread_mutex_lock(&lock);
	i = kmsg_slot(fd);
	if (i >= 0 && whence == SEEK_END) {
		kmsg[i].kmod = live_kernel();
		kmsg[i].pos = kmsg[i].kmod ? strlen(rb_sim_kmod_log(kmsg[i].kmod)) : 0;
	}
	pthread_mutex_unlock(&lock);
	return i < 0 ? next(fd, offset, whence) : 0;
}

off_t lseek64(int fd, off_t offset, int whence) __attribute__((alias("lseek")));

static void kmsg_close(int fd)
{
	pthread_mutex_lock(&lock);
	for (int i = 0; fd > 0 && i < KMSG_READERS; i++)
		if (kmsg[i].fd == fd)
			kmsg[i].fd = 0;
	pthread_mutex_unlock(&lock);
}

/* ---- open ---- */

static struct node *find_node(const char *path)
{
	static pthread_once_t config_once = PTHREAD_ONCE_INIT;

	pthread_once(&config_once, parse_config);
	for (size_t i = 0; i < n_nodes; i++)
		if (strcmp(nodes[i].path, path) == 0)
			return &nodes[i];
	return NULL;
}

/* A file of the node's live kernel, with a reference on it taken; NULL if none lives. */
static struct kfile *join_node(struct node *n, int *kfile_no)
{
	struct kfile *f;

	pthread_mutex_lock(&lock);
	f = n->dev;
	if (f)
		f->refs++;
	pthread_mutex_unlock(&lock);
	if (!f)
		return NULL;
	*kfile_no = rb_sim_kmod_file_open(f->kmod);
	if (*kfile_no < 0) {
		file_put(f);
		return NULL;
	}
	return f;
}

/* A new kernel for the node, as its file 0. Two first opens at once each make one; the
 * node keeps the later, and the earlier serves its own descriptor alone. */
static struct kfile *create_node(struct node *n)
{
	struct rb_sim_config cfg;
	struct kfile *f = calloc(1, sizeof(*f));

	rb_sim_config_init(&cfg);
	/* the injections rewrite programs through the node's own mapping, standing for
	 * what memory holds: no emulated CPU cache between (tests/unit/test_cache.c) */
	cfg.cpu_cache = false;
	cfg.mem_budget = n->mem_budget;
	if (f)
		f->kmod = n->kind->create(&cfg);
	if (!f || !f->kmod) {
		free(f);
		return NULL;
	}
	f->node = n;
	f->refs = 1;
	pthread_mutex_lock(&lock);
	n->dev = f;
	pthread_mutex_unlock(&lock);
	return f;
}

static int open_node(struct node *n, int flags)
{
	struct kfile *f;
	int kfile_no = 0, fd;

	if (n->open_err) {
		errno = n->open_err;
		return -1;
	}
	f = join_node(n, &kfile_no);
	if (!f)
		f = create_node(n);
	if (!f) {
		errno = ENOMEM;
		return -1;
	}
	fd = placeholder(flags, SLOT_FILE, f, kfile_no);
	if (fd < 0) {
		rb_sim_kmod_file_close(f->kmod, kfile_no);
		file_put(f);
	}
	return fd;
}

static mode_t mode_arg(int flags, va_list ap)
{
	return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

int open(const char *path, int flags, ...)
{
	struct node *n;
	va_list ap;
	mode_t mode;

	init_once_();
	n = find_node(path);
	if (n)
		return open_node(n, flags);
	if (strcmp(path, "/dev/kmsg") == 0 && getenv("RKNN_BENCH_FAKENODE"))
		return kmsg_open(flags);
	va_start(ap, flags);
	mode = mode_arg(flags, ap);
	va_end(ap);
	return real.open(path, flags, mode);
}

int openat(int dirfd, const char *path, int flags, ...)
{
	struct node *n;
	va_list ap;
	mode_t mode;

	init_once_();
	n = (dirfd == AT_FDCWD || path[0] == '/') ? find_node(path) : NULL;
	if (n)
		return open_node(n, flags);
	va_start(ap, flags);
	mode = mode_arg(flags, ap);
	va_end(ap);
	return real.openat(dirfd, path, flags, mode);
}

/* The 64-bit and fortified aliases glibc may route calls through. */
int open64(const char *path, int flags, ...) __attribute__((alias("open")));
int openat64(int dirfd, const char *path, int flags, ...) __attribute__((alias("openat")));

int __open_2(const char *path, int flags)
{
	return open(path, flags);
}

int __open64_2(const char *path, int flags) __attribute__((alias("__open_2")));

/* ---- ioctl ---- */

/* The same request on the placeholder, for strace; result ignored. */
static void trace_ioctl(int fd, unsigned long request, void *arg)
{
	int saved = errno;

	real.ioctl(fd, request, arg);
	errno = saved;
}

static void override_version(const struct node *n, struct drm_version *v, size_t name_size)
{
	size_t len = strlen(n->name);

	if (n->name[0]) {
		if (v->name && name_size)
			memcpy(v->name, n->name, len < name_size ? len : name_size);
		v->name_len = len;
	}
	if (n->version_set) {
		v->version_major = n->version[0];
		v->version_minor = n->version[1];
		v->version_patchlevel = n->version[2];
	}
}

/* An fd field the kernel reads or writes: an in/out fence (rknpu SUBMIT) or a dma-buf
 * (PRIME, the DRM core's, any kind). */
static int *fd_field(const struct kind *kind, unsigned long request, void *arg, bool *in, bool *out,
		     enum slot_type *type)
{
	struct drm_prime_handle *prime = arg;

	*type = SLOT_DMABUF;
	if (request == DRM_IOCTL_PRIME_FD_TO_HANDLE || request == DRM_IOCTL_PRIME_HANDLE_TO_FD) {
		*in = request == DRM_IOCTL_PRIME_FD_TO_HANDLE;
		*out = !*in;
		return &prime->fd;
	}
	*type = SLOT_FENCE;
	return kind->fence_field ? kind->fence_field(request, arg, in, out) : NULL;
}

/* A placeholder fd -> the kernel's number; -EINVAL if it is not of `type` (a dma-buf of
 * another kernel is refused too: the emulated kernels share nothing). */
static int fd_in(const struct kfile *f, int *field, enum slot_type type)
{
	struct slot s;
	bool same;

	if (!slot_get(*field, type, &s))
		return type == SLOT_DMABUF ? -EBADF : -EINVAL;
	same = s.file == f;
	*field = s.kfence;
	file_put(s.file);
	return same ? 0 : -EINVAL;
}

/* The kernel's number -> a new placeholder fd holding a reference on the kernel. */
static int fd_out(struct kfile *f, int *field, enum slot_type type)
{
	int fd;

	pthread_mutex_lock(&lock);
	f->refs++;
	pthread_mutex_unlock(&lock);
	fd = placeholder(O_CLOEXEC, type, f, *field);
	if (fd < 0) {
		rb_sim_kmod_close_fd(f->kmod, *field);
		file_put(f);
		return -EMFILE;
	}
	*field = fd;
	return 0;
}

static int kernel_ioctl(struct kfile *f, int kfile_no, unsigned long request, void *arg)
{
	bool in = false, out = false;
	enum slot_type type;
	int *field = fd_field(f->node->kind, request, arg, &in, &out, &type);
	int saved = field ? *field : 0, ret = 0;
	bool version = _IOC_NR(request) == _IOC_NR(DRM_IOCTL_VERSION);
	size_t name_size = version ? ((struct drm_version *)arg)->name_len : 0;

	if (field && in)
		ret = fd_in(f, field, type);
	if (ret == 0 && f->node->inject)
		inject_before(f, kfile_no, request, arg);
	if (ret == 0)
		ret = rb_sim_kmod_file_ioctl(f->kmod, kfile_no, request, arg);
	if (ret == 0 && f->node->inject)
		inject_after(f, kfile_no, request, arg);
	if (ret == 0 && version)
		override_version(f->node, arg, name_size);
	if (ret == 0 && field && out)
		ret = fd_out(f, field, type);
	else if (field)
		*field = saved;
	return ret;
}

static int fence_ioctl(const struct slot *s, unsigned long request, void *arg)
{
	struct sync_file_info *info = arg;

	if (request != SYNC_IOC_FILE_INFO)
		return -ENOTTY;
	memset(info->name, 0, sizeof(info->name));
	snprintf(info->name, sizeof(info->name), "%s", s->file->node->kind->name);
	info->status = s->status;
	info->num_fences = 0;
	return 0;
}

int ioctl(int fd, unsigned long request, ...)
{
	struct slot s;
	va_list ap;
	void *arg;
	int ret;

	va_start(ap, request);
	arg = va_arg(ap, void *);
	va_end(ap);
	init_once_();
	if (!slot_get(fd, SLOT_FREE, &s))
		return real.ioctl(fd, request, arg);
	trace_ioctl(fd, request, arg);
	count_request(request);
	if (s.type == SLOT_FENCE)
		ret = fence_ioctl(&s, request, arg);
	else if (s.type == SLOT_DMABUF)
		ret = -ENOTTY; /* no dma-buf ioctls are served */
	else
		ret = kernel_ioctl(s.file, s.kfence, request, arg);
	file_put(s.file);
	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	return ret;
}

/* ---- mmap, munmap ---- */

static int map_add(void *addr, size_t len, struct kfile *f)
{
	int ret = 0;

	pthread_mutex_lock(&lock);
	if (n_maps == cap_maps) {
		size_t cap = cap_maps ? 2 * cap_maps : 64;
		struct mapping *v = realloc(maps, cap * sizeof(*v));

		if (v) {
			maps = v;
			cap_maps = cap;
		}
	}
	if (n_maps < cap_maps)
		maps[n_maps++] = (struct mapping){addr, len, f};
	else
		ret = -ENOMEM;
	pthread_mutex_unlock(&lock);
	return ret;
}

/* Removes and returns the mapping at addr; false if it is not ours. */
static bool map_take(void *addr, struct mapping *out)
{
	bool found = false;

	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < n_maps && !found; i++) {
		if (maps[i].addr != addr)
			continue;
		*out = maps[i];
		maps[i] = maps[--n_maps];
		found = true;
	}
	pthread_mutex_unlock(&lock);
	return found;
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t offset)
{
	struct slot s;
	void *p;
	int ret;

	init_once_();
	if (!slot_get(fd, SLOT_FILE, &s))
		return real.mmap(addr, len, prot, flags, fd, offset);
	ret = rb_sim_kmod_file_mmap(s.file->kmod, s.kfence, len, (uint64_t)offset, &p);
	if (ret == 0) {
		ret = map_add(p, len, s.file); /* the mapping keeps the reference */
		if (ret < 0)
			rb_sim_kmod_munmap(s.file->kmod, p, len);
	}
	if (ret < 0) {
		file_put(s.file);
		errno = -ret;
		return MAP_FAILED;
	}
	return p;
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t offset)
    __attribute__((alias("mmap")));

int munmap(void *addr, size_t len)
{
	struct mapping m;
	int ret;

	init_once_();
	if (!map_take(addr, &m))
		return real.munmap(addr, len);
	ret = rb_sim_kmod_munmap(m.file->kmod, addr, len);
	file_put(m.file);
	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	return 0;
}

/* ---- poll ---- */

/* 1: the fence signalled (its status kept for SYNC_IOC_FILE_INFO), 0: the wait timed out,
 * -EBADF: not a live fence. A job that failed with -ETIMEDOUT looks like a timed-out
 * wait to a caller with a timeout (the emulated kernel does not tell them apart). */
static int fence_wait(int fd, const struct slot *s, int timeout_ms)
{
	int ret = rb_sim_kmod_wait(s->file->kmod, s->kfence, timeout_ms);

	if (ret == -EBADF)
		return ret;
	if (ret == -ETIMEDOUT && timeout_ms >= 0)
		return 0;
	pthread_mutex_lock(&lock);
	if (slots[fd].type == SLOT_FENCE && slots[fd].kfence == s->kfence)
		slots[fd].status = ret < 0 ? ret : 1;
	pthread_mutex_unlock(&lock);
	return 1;
}

/* Fake fences are waited on one after the other; real fds in the same set are not
 * polled (the binary never mixes them) and report no event. */
int poll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	bool any = false;
	int ready = 0;

	init_once_();
	for (nfds_t i = 0; i < nfds && !any; i++)
		any = is_ours(fds[i].fd);
	if (!any)
		return real.poll(fds, nfds, timeout);
	for (nfds_t i = 0; i < nfds; i++) {
		struct slot s;
		int ret = 0;

		fds[i].revents = 0;
		if (!slot_get(fds[i].fd, SLOT_FENCE, &s))
			continue;
		ret = fence_wait(fds[i].fd, &s, timeout);
		file_put(s.file);
		if (ret < 0)
			fds[i].revents = POLLNVAL;
		else if (ret > 0)
			fds[i].revents = (short)(fds[i].events & (POLLIN | POLLRDNORM));
		ready += fds[i].revents != 0;
	}
	return ready;
}

/* ---- close ---- */

/* rknn-bench takes an exclusive flock on the device node (dev/npu_device.c). A fake
 * node's descriptor is /dev/null underneath, one inode for every fake node of every
 * process, so a real flock would make unrelated tests running side by side (and any
 * other user of /dev/null) hold each other's "NPU": on a fake descriptor the lock is
 * granted at once. The fake node is one board per process; the lock between processes
 * is tested on the emulator's node file (tests/e2e/device_lock.sh). */
int flock(int fd, int op)
{
	bool fake = false;

	init_once_();
	if (fd >= 0 && fd < FD_SLOTS) {
		pthread_mutex_lock(&lock);
		fake = slots[fd].type != SLOT_FREE;
		pthread_mutex_unlock(&lock);
	}
	return fake ? 0 : real.flock(fd, op);
}

int close(int fd)
{
	struct slot s = {0};

	init_once_();
	kmsg_close(fd);
	if (fd >= 0 && fd < FD_SLOTS) {
		pthread_mutex_lock(&lock);
		s = slots[fd];
		slots[fd].type = SLOT_FREE;
		pthread_mutex_unlock(&lock);
	}
	if (s.type == SLOT_FENCE || s.type == SLOT_DMABUF)
		rb_sim_kmod_close_fd(s.file->kmod, s.kfence);
	if (s.type == SLOT_FILE)
		rb_sim_kmod_file_close(s.file->kmod, s.kfence);
	if (s.type != SLOT_FREE)
		file_put(s.file);
	return real.close(fd);
}
