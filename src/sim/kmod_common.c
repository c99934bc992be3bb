/* What the emulated kernels share (kmod_internal.h): the DRM core's ioctl dispatch,
 * buffer objects in a 32-bit NPU address space and their mmaps, the IOMMU, the virtual
 * clock, the fault log, traced MMIO and the scheduler's rounds. */
#include <errno.h>
#include <fcntl.h> /* O_CLOEXEC, O_RDWR: drm.h's DRM_CLOEXEC, DRM_RDWR */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "sim/kmod_internal.h"
#include "hw/soc.h"

/* The NPU address space: 4 KiB pages below 4 GiB (§e: 32-bit NPU addresses). Page 0 is
 * never handed out, so 0 is never a buffer's address. Ranges are taken top-down like
 * Linux's IOVA allocator; MTX printed addresses just below 4 GiB (Appendix A). */
#define IOVA_FIRST     ((uint64_t)KMOD_PAGE_BYTES)
#define DEFAULT_BUDGET (UINT64_C(1) << 32)

/* DRM's fake mmap offsets start above 4 GiB on 64-bit kernels; obj_addr is a kernel
 * address in stock drivers, so the tokens look like one (and are never reused). */
#define MMAP_OFFSET_START (UINT64_C(1) << 32)
#define OBJ_TOKEN_START   UINT64_C(0xffffff8000100000)
#define OBJ_TOKEN_STEP    0x400u

/* A host buffer this big asks for transparent huge pages (bo_new). */
#define HUGE_BO_BYTES ((uint64_t)2 << 20)

void rb_kmod_advance_to(struct rb_sim_kmod *k, uint64_t t)
{
	if (t > atomic_load(&k->now))
		atomic_store(&k->now, t);
}

/* A thread's clock inside a thread group; `k` and `serial` say whose. */
static _Thread_local struct {
	const struct rb_sim_kmod *k;
	uint64_t serial, now;
} thread_clock;

bool rb_kmod_in_group(const struct rb_sim_kmod *k)
{
	return k->group.expected > 0;
}

uint64_t rb_kmod_thread_now(const struct rb_sim_kmod *k)
{
	if (!rb_kmod_in_group(k))
		return atomic_load(&k->now);
	if (thread_clock.k == k && thread_clock.serial == k->group.serial)
		return thread_clock.now;
	return k->group.start_ns;
}

void rb_kmod_thread_advance(struct rb_sim_kmod *k, uint64_t t)
{
	if (rb_kmod_in_group(k)) {
		uint64_t mine = kmod_max(rb_kmod_thread_now(k), t);

		thread_clock.k = k;
		thread_clock.serial = k->group.serial;
		thread_clock.now = mine;
	}
	rb_kmod_advance_to(k, t);
}

/* Every member left or blocked: nothing earlier in virtual time can come. */
static void group_run_if_ready(struct rb_sim_kmod *k)
{
	struct kmod_group *g = &k->group;

	if (!g->blocked || g->blocked + g->left < g->expected)
		return;
	k->ops->run_all(k);
	g->blocked = 0;
	pthread_cond_broadcast(&g->cond);
}

void rb_kmod_block_until(struct rb_sim_kmod *k, const bool *done)
{
	if (!rb_kmod_in_group(k)) {
		k->ops->run_all(k);
		return;
	}
	if (*done)
		return;
	k->group.blocked++;
	group_run_if_ready(k);
	while (!*done)
		pthread_cond_wait(&k->group.cond, &k->lock);
}

int rb_sim_kmod_group_begin(struct rb_sim_kmod *k, unsigned threads)
{
	int ret = 0;

	if (!k->ops->run_all)
		return -EOPNOTSUPP;
	if (!threads)
		return -EINVAL;
	pthread_mutex_lock(&k->lock);
	if (rb_kmod_in_group(k)) {
		ret = -EBUSY;
	} else {
		k->group.expected = threads;
		k->group.blocked = k->group.left = 0;
		k->group.start_ns = atomic_load(&k->now);
		k->group.serial++;
	}
	pthread_mutex_unlock(&k->lock);
	return ret;
}

void rb_sim_kmod_group_leave(struct rb_sim_kmod *k)
{
	pthread_mutex_lock(&k->lock);
	if (rb_kmod_in_group(k)) {
		k->group.left++;
		group_run_if_ready(k);
	}
	pthread_mutex_unlock(&k->lock);
}

void rb_sim_kmod_group_end(struct rb_sim_kmod *k)
{
	pthread_mutex_lock(&k->lock);
	k->group.expected = 0;
	pthread_mutex_unlock(&k->lock);
}

static void log_line(struct rb_sim_kmod *k, const char *text)
{
	uint64_t t = atomic_load(&k->now);
	char line[640];
	int n = snprintf(line, sizeof(line), "[%5llu.%06llu] %s\n",
			 (unsigned long long)(t / 1000000000u),
			 (unsigned long long)(t / 1000u % 1000000u), text);
	size_t len = n < 0 ? 0 : (size_t)n >= sizeof(line) ? sizeof(line) - 1 : (size_t)n;

	while (k->log_len && k->log_len + len >= sizeof(k->log)) { /* drop the oldest line */
		char *nl = memchr(k->log, '\n', k->log_len);
		size_t drop = nl ? (size_t)(nl - k->log) + 1 : k->log_len;

		memmove(k->log, k->log + drop, k->log_len - drop);
		k->log_len -= drop;
	}
	memcpy(k->log + k->log_len, line, len);
	k->log_len += len;
	k->log[k->log_len] = '\0';
}

void rb_kmod_fault(struct rb_sim_kmod *k, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(k->last_fault, sizeof(k->last_fault), fmt, ap);
	va_end(ap);
	log_line(k, k->last_fault);
}

void rb_kmod_log(struct rb_sim_kmod *k, const char *fmt, ...)
{
	char text[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	log_line(k, text);
}

/* ---- MMIO ---- */

void rb_kmod_wr(struct rb_sim_kmod *k, int core, enum rb_reg_id reg, uint32_t value)
{
	uint32_t offset = rb_reg(reg)->offset;

	rb_sim_npu_mmio_write(k->npu, core, offset, value);
	if (k->trace)
		k->trace(k->trace_ctx, core, offset, value);
}

uint32_t rb_kmod_rd(struct rb_sim_kmod *k, int core, enum rb_reg_id reg)
{
	return rb_sim_npu_mmio_read(k->npu, core, rb_reg(reg)->offset);
}

/* 0xE + core·0x10000000: bit 28+ is the core index in bits the TRM calls reserved. */
uint32_t rb_kmod_s_pointer(int core)
{
	uint32_t v = 0;

	rb_field_pack(RB_FIELD_CNA_S_POINTER_POINTER_PP_EN, 1, &v);
	rb_field_pack(RB_FIELD_CNA_S_POINTER_EXECUTER_PP_EN, 1, &v);
	rb_field_pack(RB_FIELD_CNA_S_POINTER_POINTER_PP_MODE, 1, &v);
	rb_field_pack(RB_FIELD_CNA_S_POINTER_RESERVED_28, (uint64_t)core, &v);
	return v;
}

/* ((0x6 | pingpong) << 12) | tasks: bits 14 and 13 always, bit 12 = PINGPONG. */
uint32_t rb_kmod_task_con(bool pingpong, uint32_t tasks)
{
	uint32_t v = 0;

	rb_field_pack(RB_FIELD_PC_TASK_CON_RESERVED_14, 1, &v);
	rb_field_pack(RB_FIELD_PC_TASK_CON_TASK_COUNT_CLEAR, 1, &v);
	rb_field_pack(RB_FIELD_PC_TASK_CON_TASK_PP_EN, pingpong, &v);
	rb_field_pack(RB_FIELD_PC_TASK_CON_TASK_NUMBER, tasks, &v);
	return v;
}

void rb_kmod_reset_all(struct rb_sim_kmod *k)
{
	for (int c = 0; c < k->cores; c++)
		rb_sim_npu_reset(k->npu, c);
}

/* As the DRM core does: copy what fits the user's buffer (no terminating NUL) and
 * report the full length, so a caller can ask again with a bigger buffer. */
static void copy_field(char *buf, __kernel_size_t *len, const char *value)
{
	size_t n = strlen(value);
	size_t copy = n < *len ? n : *len;

	if (copy && buf)
		memcpy(buf, value, copy);
	*len = n;
}

/* DRM_IOCTL_VERSION: the driver's numbers and strings (kmod_ops.version). */
static int drm_version(struct rb_sim_kmod *k, void *arg)
{
	const struct kmod_version *ver = &k->ops->version;
	struct drm_version *v = arg;

	v->version_major = ver->major;
	v->version_minor = ver->minor;
	v->version_patchlevel = ver->patch;
	copy_field(v->name, &v->name_len, ver->name);
	copy_field(v->date, &v->date_len, ver->date);
	copy_field(v->desc, &v->desc_len, ver->desc);
	return 0;
}

/* ---- buffer objects and the IOMMU ---- */

static int list_insert(struct bo_list *l, size_t at, struct kbo *bo)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		struct kbo **v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	memmove(&l->v[at + 1], &l->v[at], (l->n - at) * sizeof(*l->v));
	l->v[at] = bo;
	l->n++;
	return 0;
}

static void list_remove(struct bo_list *l, size_t at)
{
	memmove(&l->v[at], &l->v[at + 1], (l->n - at - 1) * sizeof(*l->v));
	l->n--;
}

/* The object handle `handle` of `file` names; *at: its index in `live`. */
static struct kbo *bo_find(const struct rb_sim_kmod *k, int file, uint32_t handle, size_t *at)
{
	for (size_t i = 0; handle && i < k->live.n; i++)
		if (k->live.v[i]->handles[file] == handle) {
			if (at)
				*at = i;
			return k->live.v[i];
		}
	return NULL;
}

struct kbo *rb_kmod_bo_by_handle(const struct rb_sim_kmod *k, uint32_t handle)
{
	return bo_find(k, k->cur_file, handle, NULL);
}

struct kbo *rb_kmod_bo_by_token(const struct rb_sim_kmod *k, uint64_t obj_addr)
{
	for (size_t i = 0; i < k->live.n; i++)
		if (k->live.v[i]->obj_addr == obj_addr)
			return k->live.v[i];
	return NULL;
}

static size_t list_index(const struct bo_list *l, const struct kbo *bo)
{
	size_t i = 0;

	while (i < l->n && l->v[i] != bo)
		i++;
	return i;
}

/* NPU address range -> host memory, if it lies inside one buffer object of the address
 * space the core's IOMMU has attached (core_domain). */
static void *iommu_map(void *ctx, int core, uint32_t iova, uint64_t len)
{
	const struct rb_sim_kmod *k = ctx;
	const struct bo_list *d = &k->files[k->core_domain[core]].domain;
	size_t lo = 0, hi = d->n;
	const struct kbo *bo;
	uint64_t off;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->v[mid]->iova <= iova)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	bo = d->v[lo - 1];
	off = iova - bo->iova;
	if (off >= bo->size || len > bo->size - off)
		return NULL;
	return (char *)bo->mem + off;
}

/* Bottom-up first fit from address 0: the lowest gap that holds `size`. */
static int iova_alloc_low(const struct bo_list *d, uint64_t size, uint32_t *iova, size_t *at)
{
	for (size_t i = 0; i <= d->n; i++) {
		uint64_t start = i > 0 ? d->v[i - 1]->iova + d->v[i - 1]->size : 0;
		uint64_t end = i == d->n ? KMOD_IOVA_END : d->v[i]->iova;

		if (end - start >= size) {
			*iova = (uint32_t)start;
			*at = i;
			return 0;
		}
	}
	return -ENOMEM;
}

/* Top-down first fit in one address space: the highest gap that holds `size`; *at is
 * where the new object goes in the sorted list. */
static int iova_alloc(const struct bo_list *d, uint64_t size, uint32_t *iova, size_t *at)
{
	for (size_t i = d->n + 1; i-- > 0;) {
		uint64_t end = i == d->n ? KMOD_IOVA_END : d->v[i]->iova;
		uint64_t start = IOVA_FIRST;

		if (i > 0)
			start = d->v[i - 1]->iova + d->v[i - 1]->size;
		if (end - start >= size) {
			*iova = (uint32_t)(end - size);
			*at = i;
			return 0;
		}
	}
	return -ENOMEM;
}

/* GEM handles: the lowest free one of the file, from 1. */
static uint32_t handle_alloc(const struct rb_sim_kmod *k, int file)
{
	uint32_t h = 1;

	while (bo_find(k, file, h, NULL))
		h++;
	return h;
}

static void bo_free(struct rb_sim_kmod *k, struct kbo *bo)
{
	if (bo->cpu)
		munmap(bo->cpu, bo->size);
	munmap(bo->mem, bo->size);
	k->mem_used -= bo->size;
	free(bo);
}

/* Anonymous memory: zeroed (as both drivers hand out) and committed lazily; NULL if
 * there is none. */
static void *host_pages(uint64_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	/* Huge pages where the kernel gives them on request (THP "madvise", as here): the
	 * emulator streams a decode's weights once per run, and on 4 KiB pages its direct
	 * kernel spent about 20% of its time more (1x2048x8192). Advice only: no error. */
	if (size >= HUGE_BO_BYTES)
		madvise(p, size, MADV_HUGEPAGE);
	return p;
}

/* Objects this big or bigger stay coherent: their CPU view would be a second copy, and
 * the large shapes of tests/e2e/mem.sh hold the emulator to 1.3x their buffers. The
 * syncs of the runner are the same for every size, so small shapes check them. */
#define CACHE_MAX_BYTES ((uint64_t)16 << 20)

static bool bo_cached(const struct rb_sim_kmod *k, uint64_t size, uint32_t flags)
{
	return k->cpu_cache && size < CACHE_MAX_BYTES &&
	       (!k->ops->cached_flag || (flags & k->ops->cached_flag));
}

static struct kbo *bo_new(struct rb_sim_kmod *k, uint64_t size, uint32_t flags)
{
	struct kbo *bo = calloc(1, sizeof(*bo));

	if (!bo)
		return NULL;
	bo->mem = host_pages(size);
	if (bo->mem && bo_cached(k, size, flags) && !(bo->cpu = host_pages(size))) {
		munmap(bo->mem, size);
		bo->mem = NULL;
	}
	if (!bo->mem) {
		free(bo);
		return NULL;
	}
	bo->size = size;
	bo->flags = flags;
	bo->space = k->ops->space_per_file ? k->cur_file : 0;
	bo->handles[k->cur_file] = handle_alloc(k, k->cur_file);
	bo->obj_addr = k->next_token;
	k->next_token += OBJ_TOKEN_STEP;
	k->mem_used += size;
	return bo;
}

int rb_kmod_bo_create(struct rb_sim_kmod *k, uint64_t size, uint32_t flags, struct kbo **out)
{
	struct bo_list *d = &k->files[k->ops->space_per_file ? k->cur_file : 0].domain;
	struct kbo *bo;
	uint32_t iova;
	size_t at;

	if (!size)
		return -EINVAL;
	if (size > KMOD_IOVA_END)
		return -ENOMEM;
	size = (size + KMOD_PAGE_BYTES - 1) & ~(uint64_t)(KMOD_PAGE_BYTES - 1);
	if (size > k->mem_budget - k->mem_used ||
	    (k->ops->iova_from_zero ? iova_alloc_low : iova_alloc)(d, size, &iova, &at))
		return -ENOMEM;
	bo = bo_new(k, size, flags);
	if (!bo)
		return -ENOMEM;
	bo->iova = iova;
	if (list_insert(d, at, bo)) {
		bo_free(k, bo);
		return -ENOMEM;
	}
	if (list_insert(&k->live, k->live.n, bo)) {
		list_remove(d, at);
		bo_free(k, bo);
		return -ENOMEM;
	}
	*out = bo;
	return 0;
}

void *rb_kmod_bo_cpu(const struct kbo *bo)
{
	return bo->cpu ? bo->cpu : bo->mem;
}

void rb_kmod_bo_sync(struct kbo *bo, uint64_t offset, uint64_t len, bool to_device)
{
	char *mem, *cpu;

	if (!bo->cpu || !len) /* coherent: nothing to copy */
		return;
	mem = (char *)bo->mem + offset;
	cpu = (char *)bo->cpu + offset;
	if (to_device)
		memcpy(mem, cpu, len);
	else
		memcpy(cpu, mem, len);
}

uint64_t rb_kmod_bo_mmap_offset(struct rb_sim_kmod *k, struct kbo *bo)
{
	if (!bo->mmap_offset) {
		bo->mmap_offset = k->next_offset;
		k->next_offset += bo->size;
	}
	return bo->mmap_offset;
}

static bool bo_held(const struct kbo *bo)
{
	for (int f = 0; f < KMOD_MAX_FILES; f++)
		if (bo->handles[f])
			return true;
	return bo->exports || bo->jobs;
}

/* Nothing holds the object any more: its NPU range goes at once, its memory when the
 * last user mapping does (without room to remember it, the memory stays for good
 * rather than being pulled from under the user's mapping). */
static void bo_release(struct rb_sim_kmod *k, struct kbo *bo)
{
	struct bo_list *d = &k->files[bo->space].domain;

	if (bo_held(bo))
		return;
	list_remove(&k->live, list_index(&k->live, bo));
	list_remove(d, list_index(d, bo));
	if (!bo->maps)
		bo_free(k, bo);
	else
		(void)list_insert(&k->zombies, k->zombies.n, bo);
}

int rb_kmod_bo_destroy(struct rb_sim_kmod *k, uint32_t handle)
{
	struct kbo *bo = bo_find(k, k->cur_file, handle, NULL);

	if (!bo)
		return -EINVAL;
	bo->handles[k->cur_file] = 0;
	bo_release(k, bo);
	return 0;
}

void rb_kmod_bo_get(struct kbo *bo)
{
	bo->jobs++;
}

void rb_kmod_bo_put(struct rb_sim_kmod *k, struct kbo *bo)
{
	bo->jobs--;
	bo_release(k, bo);
}

/* ---- PRIME (the DRM core's drm_prime.c) ---- */

#define DMABUF_FD_START 2000 /* the numbers standing for dma-buf fds */

/* HANDLE_TO_FD: a dma-buf of the object, as a new number each time. */
static int prime_handle_to_fd(struct rb_sim_kmod *k, void *arg)
{
	struct drm_prime_handle *a = arg;
	struct kbo *bo;

	if (a->flags & ~(uint32_t)(DRM_CLOEXEC | DRM_RDWR))
		return -EINVAL;
	bo = rb_kmod_bo_by_handle(k, a->handle);
	if (!bo)
		return -ENOENT;
	for (size_t i = 0; i < sizeof(k->dmabufs) / sizeof(k->dmabufs[0]); i++) {
		if (k->dmabufs[i].bo)
			continue;
		k->dmabufs[i] = (struct kmod_dmabuf){DMABUF_FD_START + k->next_dmabuf++, bo};
		bo->exports++;
		a->fd = k->dmabufs[i].fd;
		return 0;
	}
	return -EMFILE;
}

static struct kmod_dmabuf *dmabuf_find(struct rb_sim_kmod *k, int fd)
{
	for (size_t i = 0; i < sizeof(k->dmabufs) / sizeof(k->dmabufs[0]); i++)
		if (k->dmabufs[i].bo && k->dmabufs[i].fd == fd)
			return &k->dmabufs[i];
	return NULL;
}

/* FD_TO_HANDLE: a dma-buf of this device gives the file a handle to the same object
 * (the one it has if it has one). Neither upstream driver maps an import into the
 * importer's NPU address space (rocket sets no gem_prime_import and no GEM open hook;
 * the importer cannot even ask for an address): the object keeps its one NPU range, in
 * its creator's address space. */
static int prime_fd_to_handle(struct rb_sim_kmod *k, void *arg)
{
	struct drm_prime_handle *a = arg;
	struct kmod_dmabuf *buf = dmabuf_find(k, a->fd);
	struct kbo *bo;

	if (!buf)
		return -EBADF;
	bo = buf->bo;
	if (!bo->handles[k->cur_file])
		bo->handles[k->cur_file] = handle_alloc(k, k->cur_file);
	a->handle = bo->handles[k->cur_file];
	return 0;
}

/* Closes a dma-buf number; -EBADF if it is none. */
static int dmabuf_close(struct rb_sim_kmod *k, int fd)
{
	struct kmod_dmabuf *buf = dmabuf_find(k, fd);
	struct kbo *bo;

	if (!buf)
		return -EBADF;
	bo = buf->bo;
	buf->bo = NULL;
	bo->exports--;
	bo_release(k, bo);
	return 0;
}

/* ---- files ---- */

int rb_sim_kmod_file_open(struct rb_sim_kmod *k)
{
	int ret = -EMFILE;

	pthread_mutex_lock(&k->lock);
	for (int f = 0; f < KMOD_MAX_FILES && ret < 0; f++)
		if (!k->files[f].open && !k->files[f].domain.n) {
			k->files[f].open = true;
			ret = f;
		}
	pthread_mutex_unlock(&k->lock);
	return ret;
}

/* As the DRM core's postclose: every handle of the file goes; objects others still
 * hold (a handle, a dma-buf, a queued job) stay, mapped where they were, so the file's
 * queued jobs still run. */
void rb_sim_kmod_file_close(struct rb_sim_kmod *k, int file)
{
	if (file < 0 || file >= KMOD_MAX_FILES)
		return;
	pthread_mutex_lock(&k->lock);
	if (k->files[file].open) {
		int saved = k->cur_file;

		k->cur_file = file;
		for (size_t i = k->live.n; i-- > 0;)
			if (i < k->live.n && k->live.v[i]->handles[file])
				rb_kmod_bo_destroy(k, k->live.v[i]->handles[file]);
		k->files[file].open = false;
		k->cur_file = saved;
	}
	pthread_mutex_unlock(&k->lock);
}

static bool file_owns(int file, const struct kbo *bo)
{
	return file >= 0 && file < KMOD_MAX_FILES && bo->handles[file];
}

/* drm_gem_mmap: the offset of an object the file has a handle to (-EACCES for one it
 * has none to), no larger than the object. */
int rb_sim_kmod_file_mmap(struct rb_sim_kmod *k, int file, size_t len, uint64_t offset, void **addr)
{
	int ret = -EINVAL;

	pthread_mutex_lock(&k->lock);
	for (size_t i = 0; i < k->live.n; i++) {
		struct kbo *bo = k->live.v[i];

		if (!bo->mmap_offset || bo->mmap_offset != offset)
			continue;
		if (!file_owns(file, bo)) {
			ret = -EACCES;
		} else if (len && len <= bo->size) { /* DRM refuses a mapping larger than it */
			bo->maps++;
			*addr = rb_kmod_bo_cpu(bo);
			ret = 0;
		}
		break;
	}
	pthread_mutex_unlock(&k->lock);
	return ret;
}

int rb_sim_kmod_mmap(struct rb_sim_kmod *k, size_t len, uint64_t offset, void **addr)
{
	return rb_sim_kmod_file_mmap(k, 0, len, offset, addr);
}

static struct kbo *mapped_bo(struct bo_list *l, void *addr, size_t *at)
{
	for (size_t i = 0; i < l->n; i++)
		if (rb_kmod_bo_cpu(l->v[i]) == addr && l->v[i]->maps) {
			*at = i;
			return l->v[i];
		}
	return NULL;
}

int rb_sim_kmod_munmap(struct rb_sim_kmod *k, void *addr, size_t len)
{
	struct kbo *bo;
	size_t at;
	int ret = 0;

	if (!len)
		return -EINVAL;
	pthread_mutex_lock(&k->lock);
	if ((bo = mapped_bo(&k->live, addr, &at))) {
		bo->maps--;
	} else if ((bo = mapped_bo(&k->zombies, addr, &at))) {
		if (--bo->maps == 0) {
			list_remove(&k->zombies, at);
			bo_free(k, bo);
		}
	} else {
		ret = -EINVAL;
	}
	pthread_mutex_unlock(&k->lock);
	return ret;
}

/* ---- the scheduler's rounds ---- */

bool rb_kmod_run_round(struct rb_sim_kmod *k)
{
	struct rb_sim_core_result res[RB_SIM_MAX_CORES];
	uint64_t kick[RB_SIM_MAX_CORES] = {0};
	bool progress = false, reset = false;
	uint32_t mask = 0;
	int err = 0;

	memset(res, 0, sizeof(res));
	for (int c = 0; c < k->cores; c++) {
		int r = k->ops->commit(k, c, &kick[c]);

		progress |= r >= 0;
		if (r > 0)
			mask |= 1u << c;
	}
	if (mask)
		err = rb_sim_npu_run_at(k->npu, mask, kick, res);
	for (int c = 0; c < k->cores; c++) {
		if (!(mask & (1u << c)))
			continue;
		if (err) {
			res[c].status = RB_SIM_HANG;
			snprintf(res[c].reason, sizeof(res[c].reason),
				 "the emulated NPU failed: %s", strerror(-err));
		}
		reset |= k->ops->complete(k, c, &res[c], kick[c]);
	}
	if (reset)
		rb_kmod_reset_all(k);
	k->ops->retire(k);
	return progress;
}

/* ---- the generic entry points (sim.h) ---- */

static const struct kmod_ioctl core_ioctls[] = {
    {DRM_IOCTL_VERSION, drm_version},
    {DRM_IOCTL_PRIME_HANDLE_TO_FD, prime_handle_to_fd},
    {DRM_IOCTL_PRIME_FD_TO_HANDLE, prime_fd_to_handle},
};

/* The DRM core looks at the number only (not the type or size); unknown: -EINVAL. Of
 * the DRM core's own ioctls VERSION, the two PRIME ones and (where the driver has it)
 * GEM_CLOSE are emulated. */
static const struct kmod_ioctl *find_ioctl(const struct rb_sim_kmod *k, unsigned long request)
{
	unsigned nr = _IOC_NR(request);

	for (size_t i = 0; i < sizeof(core_ioctls) / sizeof(core_ioctls[0]); i++)
		if (nr == _IOC_NR(core_ioctls[i].cmd))
			return &core_ioctls[i];
	return k->ops->find_ioctl(nr);
}

/* Runs the ioctl for `file` under the lock; -EBADF for a file that is not open. */
static int call_locked(struct rb_sim_kmod *k, int file, const struct kmod_ioctl *io, void *kbuf)
{
	int ret = -EBADF;

	pthread_mutex_lock(&k->lock);
	if (file >= 0 && file < KMOD_MAX_FILES && k->files[file].open) {
		k->cur_file = file;
		ret = io->fn(k, kbuf);
		k->cur_file = 0;
	}
	pthread_mutex_unlock(&k->lock);
	return ret;
}

int rb_sim_kmod_ioctl(struct rb_sim_kmod *k, unsigned long request, void *arg)
{
	return rb_sim_kmod_file_ioctl(k, 0, request, arg);
}

/* Copies in the bytes the caller's size gives when both sides say "in", out likewise,
 * through a zeroed kernel buffer as large as the larger of the two structs. */
int rb_sim_kmod_file_ioctl(struct rb_sim_kmod *k, int file, unsigned long request, void *arg)
{
	const struct kmod_ioctl *io = find_ioctl(k, request);
	unsigned char stack[128];
	size_t in, out, ksize;
	void *kbuf = stack;
	int ret;

	if (!io || !io->fn)
		return -EINVAL;
	in = out = _IOC_SIZE(request);
	if (!(request & io->cmd & IOC_IN))
		in = 0;
	if (!(request & io->cmd & IOC_OUT))
		out = 0;
	ksize = kmod_max(kmod_max(in, out), _IOC_SIZE(io->cmd));
	if ((in || out) && !arg)
		return -EFAULT;
	if (ksize > sizeof(stack) && !(kbuf = malloc(ksize)))
		return -ENOMEM;
	memset(kbuf, 0, ksize);
	if (in)
		memcpy(kbuf, arg, in);
	ret = call_locked(k, file, io, kbuf);
	if (out)
		memcpy(arg, kbuf, out);
	if (kbuf != stack)
		free(kbuf);
	return ret;
}

int rb_sim_kmod_wait(struct rb_sim_kmod *k, int fence_fd, int timeout_ms)
{
	int ret = -EBADF;

	pthread_mutex_lock(&k->lock);
	if (k->ops->wait)
		ret = k->ops->wait(k, fence_fd, timeout_ms);
	pthread_mutex_unlock(&k->lock);
	return ret;
}

int rb_sim_kmod_close_fd(struct rb_sim_kmod *k, int fd)
{
	int ret = -EBADF;

	pthread_mutex_lock(&k->lock);
	ret = dmabuf_close(k, fd);
	if (ret == -EBADF && k->ops->close_fd)
		ret = k->ops->close_fd(k, fd);
	pthread_mutex_unlock(&k->lock);
	return ret;
}

uint64_t rb_sim_kmod_now_ns(const struct rb_sim_kmod *k)
{
	return atomic_load(&k->now);
}

void rb_sim_kmod_spend(struct rb_sim_kmod *k, uint64_t ns)
{
	pthread_mutex_lock(&k->lock);
	rb_kmod_thread_advance(k, rb_kmod_thread_now(k) + ns);
	pthread_mutex_unlock(&k->lock);
}

uint64_t rb_sim_kmod_longest_job_ns(const struct rb_sim_kmod *k)
{
	return k->longest_job_ns;
}

const char *rb_sim_kmod_last_fault(const struct rb_sim_kmod *k)
{
	return k->last_fault;
}

const char *rb_sim_kmod_log(const struct rb_sim_kmod *k)
{
	return k->log;
}

void rb_sim_kmod_set_mmio_trace(struct rb_sim_kmod *k, rb_sim_mmio_trace_fn *fn, void *ctx)
{
	pthread_mutex_lock(&k->lock);
	k->trace = fn;
	k->trace_ctx = ctx;
	pthread_mutex_unlock(&k->lock);
}

/* ---- lifecycle ---- */

static uint64_t ns(double v)
{
	return (uint64_t)llround(v);
}

/* The NPU accepted the profile (rb_sim_npu_new), so it is there. */
static void set_costs(struct rb_sim_kmod *k, const struct rb_soc_profile *soc)
{
	k->cost.submit = ns(soc->submit_ioctl_ns);
	k->cost.commit = ns(soc->submit_commit_ns);
	k->cost.irq = ns(soc->submit_irq_ns);
	k->cost.wake = ns(soc->submit_wake_ns);
	k->freq_hz = (uint64_t)llround(soc->clock_mhz * 1e6);
}

static struct rb_sim_kmod *new_failed(struct rb_sim_kmod *k, int err, const char *what)
{
	char why[256];

	/* the NPU says what is wrong with the configuration, if it was that */
	snprintf(why, sizeof(why), "%s", *rb_last_error() ? rb_last_error() : strerror(err));
	if (k) {
		pthread_cond_destroy(&k->group.cond);
		pthread_mutex_destroy(&k->lock);
		free(k);
	}
	rb_set_error(-err, "cannot create the emulated %s: %s", what, why);
	errno = err;
	return NULL;
}

struct rb_sim_kmod *rb_kmod_new(const struct rb_sim_config *cfg, const struct kmod_ops *ops)
{
	struct rb_sim_kmod *k;

	if (cfg->cores < 1 || cfg->cores > RB_SIM_MAX_CORES) {
		rb_set_error(-EINVAL, "emulator: %d NPU cores asked for; RK3588 has 3 (1 to 3)",
			     cfg->cores);
		errno = EINVAL;
		return NULL;
	}
	rb_set_error(0, "%s", "");
	k = calloc(1, sizeof(*k));
	if (!k)
		return new_failed(NULL, ENOMEM, ops->name);
	pthread_mutex_init(&k->lock, NULL);
	pthread_cond_init(&k->group.cond, NULL);
	k->ops = ops;
	k->mem_budget = cfg->mem_budget ? cfg->mem_budget : DEFAULT_BUDGET;
	k->cpu_cache = cfg->cpu_cache && !cfg->model_only; /* no data moves without data */
	k->vendor_cleanup = cfg->vendor_cleanup;
	k->next_token = OBJ_TOKEN_START;
	k->next_offset = MMAP_OFFSET_START;
	k->files[0].open = true;
	k->iommu.map = iommu_map;
	k->iommu.ctx = k;
	k->npu = rb_sim_npu_new(cfg, &k->iommu);
	if (!k->npu)
		return new_failed(k, errno ? errno : ENOMEM, "NPU");
	k->cores = rb_sim_npu_cores(k->npu);
	set_costs(k, cfg->soc ? cfg->soc : rb_soc_default());
	return k;
}

static void free_bos(struct rb_sim_kmod *k, struct bo_list *l)
{
	while (l->n)
		bo_free(k, l->v[--l->n]);
	free(l->v);
}

void rb_sim_kmod_free(struct rb_sim_kmod *k)
{
	if (!k)
		return;
	if (k->ops->release)
		k->ops->release(k);
	free_bos(k, &k->live);
	free_bos(k, &k->zombies);
	for (int f = 0; f < KMOD_MAX_FILES; f++)
		free(k->files[f].domain.v);
	rb_sim_npu_free(k->npu);
	pthread_cond_destroy(&k->group.cond);
	pthread_mutex_destroy(&k->lock);
	free(k);
}
