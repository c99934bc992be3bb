/* Tests of the vendor rknpu userspace driver (src/dev/rknpu.c) and the host transport
 * (src/dev/transport_host.c): the ioctl numbers of npu-facts §d.1 at run time, the host
 * transport on a missing node and on ordinary files, and the wrappers' libdrm shape
 * (zeroed structs, error messages naming the ioctl, unwinding) against a scripted mock
 * transport that needs no kernel at all. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "dev/rknpu.h"

/* ---- the ABI ---- */

static void expect_ioctl(unsigned long cmd, unsigned nr, size_t size, unsigned long number)
{
	assert_int_equal(cmd, number);
	assert_int_equal(_IOC_TYPE(cmd), 'd');
	assert_int_equal(_IOC_NR(cmd), DRM_COMMAND_BASE + nr);
	assert_int_equal(_IOC_SIZE(cmd), size);
	assert_int_equal(_IOC_DIR(cmd), _IOC_READ | _IOC_WRITE);
}

static void test_ioctl_numbers(void **state)
{
	(void)state;
	expect_ioctl(DRM_IOCTL_RKNPU_ACTION, 0x00, 8, 0xC0086440u);
	expect_ioctl(DRM_IOCTL_RKNPU_SUBMIT, 0x01, 104, 0xC0686441u);
	expect_ioctl(DRM_IOCTL_RKNPU_MEM_CREATE, 0x02, 48, 0xC0306442u);
	expect_ioctl(DRM_IOCTL_RKNPU_MEM_MAP, 0x03, 16, 0xC0106443u);
	expect_ioctl(DRM_IOCTL_RKNPU_MEM_DESTROY, 0x04, 16, 0xC0106444u);
	expect_ioctl(DRM_IOCTL_RKNPU_MEM_SYNC, 0x05, 32, 0xC0206445u);
	assert_int_equal(offsetof(struct rknpu_submit, subcore_task[4]), 96);
	assert_int_equal(offsetof(struct rknpu_task, regcmd_addr), 32);
}

/* ---- the host transport ---- */

static void test_host_missing_node(void **state)
{
	struct rb_transport t;

	(void)state;
	assert_int_equal(rb_transport_open_host(&t, "/nonexistent/dri/renderD129"), -ENOENT);
	assert_null(t.ops);
	assert_non_null(strstr(rb_last_error(), "cannot open '/nonexistent/dri/renderD129': "
						"no such device node"));
	assert_non_null(strstr(rb_last_error(), "--device sim"));
	rb_transport_close(&t); /* safe on a failed open */
}

/* /dev/null is not an rknpu node: the driver says which ioctl failed and closes it. */
static void test_host_not_rknpu(void **state)
{
	/* /dev/null answers ENOTTY; qemu-user (make check-aarch64 sets RUNNER) does not
	 * forward ioctls it does not know and answers ENOSYS itself. */
	const char *runner = getenv("RUNNER");
	int want = runner && *runner ? -ENOSYS : -ENOTTY;
	struct rb_transport t;
	struct rb_rknpu dev;

	(void)state;
	assert_int_equal(rb_transport_open_host(&t, "/dev/null"), 0);
	assert_string_equal(t.ops->name, "host");
	assert_null(rb_transport_sim_kmod(&t));

	assert_int_equal(rb_rknpu_open(&dev, &t), want);
	assert_null(t.ops); /* taken over, and closed on failure */
	assert_null(dev.tr.ops);
	assert_non_null(strstr(rb_last_error(), "RKNPU_ACTION GET_DRV_VERSION failed: "));
	assert_non_null(strstr(rb_last_error(), strerror(-want)));
}

/* wait/close_fd/now_ns on ordinary fds: a pipe stands in for a fence. */
static void test_host_wait_clock(void **state)
{
	struct rb_transport t;
	int p[2];
	uint64_t t0, t1;

	(void)state;
	assert_int_equal(rb_transport_open_host(&t, "/dev/null"), 0);
	assert_int_equal(pipe(p), 0);
	t0 = t.ops->now_ns(t.priv);
	assert_int_equal(t.ops->wait(t.priv, p[0], 20), -ETIMEDOUT);
	t1 = t.ops->now_ns(t.priv);
	assert_true(t1 - t0 >= 15000000u);
	assert_int_equal(write(p[1], "x", 1), 1);
	assert_int_equal(t.ops->wait(t.priv, p[0], 1000), 0); /* not a sync_file: poll says */
	assert_int_equal(t.ops->close_fd(t.priv, p[0]), 0);
	assert_int_equal(t.ops->close_fd(t.priv, p[0]), -EBADF);
	assert_int_equal(t.ops->wait(t.priv, p[0], 0), -EBADF);
	close(p[1]);
	rb_transport_close(&t);
	assert_null(t.ops);
}

/* ---- the wrappers, against a scripted transport ---- */

struct call {
	unsigned long request;
	unsigned char arg[128]; /* what the driver passed in */
};

struct mock {
	struct call calls[16];
	int ncalls;
	unsigned long fail_request; /* 0 or the request that fails */
	int fail_err;
	uint64_t dma_addr;
	unsigned char mem[8192];
	int mapped, unmapped, closed_fds, released;
};

static int mock_ioctl(void *priv, unsigned long request, void *arg)
{
	struct mock *m = priv;
	struct call *c = &m->calls[m->ncalls++];

	c->request = request;
	memcpy(c->arg, arg, _IOC_SIZE(request));
	if (m->fail_request == request)
		return m->fail_err;
	if (request == DRM_IOCTL_RKNPU_MEM_CREATE) {
		struct rknpu_mem_create *mc = arg;

		mc->handle = 7;
		mc->size = (mc->size + 4095) & ~4095ull;
		mc->obj_addr = 0xffffff80deadbeefull;
		mc->dma_addr = m->dma_addr;
	} else if (request == DRM_IOCTL_RKNPU_MEM_MAP) {
		((struct rknpu_mem_map *)arg)->offset = 0x100000000ull;
	} else if (request == DRM_IOCTL_RKNPU_ACTION) {
		((struct rknpu_action *)arg)->value = 900 + ((struct rknpu_action *)arg)->flags;
	}
	return 0;
}

static int mock_mmap(void *priv, size_t len, uint64_t offset, void **addr)
{
	struct mock *m = priv;

	if (offset != 0x100000000ull || len > sizeof(m->mem))
		return -EINVAL;
	m->mapped++;
	*addr = m->mem;
	return 0;
}

static int mock_munmap(void *priv, void *addr, size_t len)
{
	struct mock *m = priv;

	(void)len;
	assert_ptr_equal(addr, m->mem);
	m->unmapped++;
	return 0;
}

static int mock_wait(void *priv, int fd, int timeout_ms)
{
	(void)priv;
	(void)timeout_ms;
	return fd == 1001 ? -ETIMEDOUT : 0;
}

static uint64_t mock_now(void *priv)
{
	(void)priv;
	return 42;
}

static int mock_close_fd(void *priv, int fd)
{
	(void)fd;
	((struct mock *)priv)->closed_fds++;
	return 0;
}

static void mock_release(void *priv)
{
	((struct mock *)priv)->released++;
}

static const struct rb_transport_ops mock_ops = {
    .name = "mock",
    .ioctl = mock_ioctl,
    .mmap = mock_mmap,
    .munmap = mock_munmap,
    .wait = mock_wait,
    .now_ns = mock_now,
    .close_fd = mock_close_fd,
    .release = mock_release,
};

static struct mock *open_mock(struct rb_rknpu *dev)
{
	struct mock *m = calloc(1, sizeof(*m));
	struct rb_transport t = {.ops = &mock_ops, .priv = m};

	assert_non_null(m);
	m->dma_addr = 0xffff8000u;
	assert_int_equal(rb_rknpu_open(dev, &t), 0);
	assert_int_equal(dev->drv_version, 901);
	assert_int_equal(dev->hw_version, 900);
	m->ncalls = 0;
	return m;
}

static void test_bo_create_shape(void **state)
{
	struct rb_rknpu dev;
	struct mock *m = open_mock(&dev);
	struct rb_rknpu_bo bo;
	const struct rknpu_mem_create *mc = (const void *)m->calls[0].arg;

	(void)state;
	memset(&bo, 0xff, sizeof(bo)); /* garbage in: the struct passed is still zeroed */
	assert_int_equal(rb_rknpu_bo_create(&dev, 5000, RKNPU_MEM_KERNEL_MAPPING, &bo), 0);
	assert_int_equal(m->ncalls, 2);
	assert_int_equal(m->calls[0].request, DRM_IOCTL_RKNPU_MEM_CREATE);
	assert_int_equal(mc->handle, 0);
	assert_int_equal(mc->flags, RKNPU_MEM_KERNEL_MAPPING);
	assert_int_equal(mc->size, 5000);
	assert_int_equal(mc->iommu_domain_id, 0);
	assert_int_equal(m->calls[1].request, DRM_IOCTL_RKNPU_MEM_MAP);
	assert_int_equal(((const struct rknpu_mem_map *)m->calls[1].arg)->handle, 7);
	assert_int_equal(bo.handle, 7);
	assert_int_equal(bo.size, 8192);
	assert_int_equal(bo.dma_addr, 0xffff8000u);
	assert_ptr_equal(bo.map, m->mem);
	rb_rknpu_bo_destroy(&dev, &bo);
	assert_int_equal(m->unmapped, 1);
	assert_int_equal(m->calls[2].request, DRM_IOCTL_RKNPU_MEM_DESTROY);
	assert_int_equal(((const struct rknpu_mem_destroy *)m->calls[2].arg)->handle, 7);
	assert_int_equal(((const struct rknpu_mem_destroy *)m->calls[2].arg)->obj_addr,
			 0xffffff80deadbeefull);
	rb_rknpu_close(&dev);
	assert_int_equal(m->released, 1);
	free(m);
}

static void test_bo_create_unwinds(void **state)
{
	struct rb_rknpu dev;
	struct mock *m = open_mock(&dev);
	struct rb_rknpu_bo bo;

	(void)state;
	m->fail_request = DRM_IOCTL_RKNPU_MEM_CREATE;
	m->fail_err = -ENOMEM;
	assert_int_equal(rb_rknpu_bo_create(&dev, 1048576, 0, &bo), -ENOMEM);
	assert_string_equal(rb_last_error(),
			    "RKNPU_MEM_CREATE of 1048576 bytes failed: Cannot allocate memory");
	assert_int_equal(bo.handle, 0);
	assert_int_equal(m->ncalls, 1);
	/* MEM_MAP fails: the object is destroyed again */
	m->ncalls = 0;
	m->fail_request = DRM_IOCTL_RKNPU_MEM_MAP;
	m->fail_err = -EINVAL;
	assert_int_equal(rb_rknpu_bo_create(&dev, 4096, 0, &bo), -EINVAL);
	assert_string_equal(rb_last_error(), "RKNPU_MEM_MAP of handle 7 failed: Invalid argument");
	assert_int_equal(m->calls[2].request, DRM_IOCTL_RKNPU_MEM_DESTROY);
	assert_int_equal(bo.handle, 0);
	/* an NPU address above 4 GiB is refused */
	m->ncalls = 0;
	m->fail_request = 0;
	m->dma_addr = 0x100001000ull;
	assert_int_equal(rb_rknpu_bo_create(&dev, 4096, 0, &bo), -ERANGE);
	assert_non_null(strstr(rb_last_error(), "0x100001000"));
	assert_int_equal(m->calls[1].request, DRM_IOCTL_RKNPU_MEM_DESTROY);
	assert_int_equal(m->mapped, 0);
	rb_rknpu_close(&dev);
	free(m);
}

static void test_sync_submit_fence(void **state)
{
	struct rb_rknpu dev;
	struct mock *m = open_mock(&dev);
	struct rb_rknpu_bo bo = {.handle = 3, .obj_addr = 0x1234};
	const struct rknpu_mem_sync *ms = (const void *)m->calls[0].arg;
	struct rknpu_submit s;

	(void)state;
	assert_int_equal(rb_rknpu_bo_sync(&dev, &bo, RKNPU_MEM_SYNC_FROM_DEVICE, 64, 128), 0);
	assert_int_equal(ms->flags, RKNPU_MEM_SYNC_FROM_DEVICE);
	assert_int_equal(ms->obj_addr, 0x1234);
	assert_int_equal(ms->offset, 64);
	assert_int_equal(ms->size, 128);
	memset(&s, 0, sizeof(s));
	s.task_number = 2;
	s.core_mask = 4;
	s.timeout = 500;
	m->fail_request = DRM_IOCTL_RKNPU_SUBMIT;
	m->fail_err = -ETIMEDOUT;
	assert_int_equal(rb_rknpu_submit(&dev, &s), -ETIMEDOUT);
	assert_non_null(strstr(rb_last_error(), "RKNPU_SUBMIT of 2 tasks on core mask 0x4 failed: "
						"Connection timed out (the NPU did not finish "
						"within 500 ms"));
	assert_int_equal(rb_rknpu_fence_wait(&dev, 1000, 10), 0);
	assert_int_equal(rb_rknpu_fence_wait(&dev, 1001, 10), -ETIMEDOUT);
	assert_string_equal(rb_last_error(),
			    "waiting for NPU fence 1001 failed: Connection timed out");
	assert_int_equal(m->closed_fds, 2); /* closed either way */
	rb_rknpu_close(&dev);
	free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ioctl_numbers),     cmocka_unit_test(test_host_missing_node),
	    cmocka_unit_test(test_host_not_rknpu),    cmocka_unit_test(test_host_wait_clock),
	    cmocka_unit_test(test_bo_create_shape),   cmocka_unit_test(test_bo_create_unwinds),
	    cmocka_unit_test(test_sync_submit_fence),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
