/* prime-probe: what PRIME does between two fds of one rocket node, with the fake node
 * (libfakenode.so) or on a board:
 *
 *   RKNN_BENCH_FAKENODE=/dev/accel/accel0=rocket LD_PRELOAD=build/tests/libfakenode.so \
 *       build/tests/prime-probe /dev/accel/accel0
 *
 * It opens the node twice, creates a buffer on the first fd, exports it
 * (DRM_IOCTL_PRIME_HANDLE_TO_FD) and imports the dma-buf on the second
 * (DRM_IOCTL_PRIME_FD_TO_HANDLE): the import is a handle to the same memory, which the
 * second fd can map and wait on (PREP_BO), but CREATE_BO is the only ioctl that hands
 * out an NPU address, so the second fd has none for it. Prints what it found; exit 0 if
 * every step worked, 1 if one failed (named on stderr). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "uapi/drm/rocket_accel.h"

#define BO_BYTES 4096u

static int fail(const char *what)
{
	fprintf(stderr, "prime-probe: %s failed: %s\n", what, strerror(errno));
	return 1;
}

static void *map(int fd, uint64_t offset)
{
	void *p = mmap(NULL, BO_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)offset);

	return p == MAP_FAILED ? NULL : p;
}

/* Exports the buffer of fd0, imports it on fd1, and compares what both fds see. */
static int probe(int fd0, int fd1)
{
	struct drm_rocket_create_bo create = {.size = BO_BYTES};
	struct drm_prime_handle exp = {.flags = DRM_CLOEXEC}, imp = {0};
	struct drm_rocket_prep_bo prep = {0};
	struct drm_gem_close close0 = {0}, close1 = {0};
	unsigned char *a, *b;
	int same;

	if (ioctl(fd0, DRM_IOCTL_ROCKET_CREATE_BO, &create) < 0)
		return fail("ROCKET_CREATE_BO");
	exp.handle = create.handle;
	if (ioctl(fd0, DRM_IOCTL_PRIME_HANDLE_TO_FD, &exp) < 0)
		return fail("DRM_IOCTL_PRIME_HANDLE_TO_FD");
	imp.fd = exp.fd;
	if (ioctl(fd1, DRM_IOCTL_PRIME_FD_TO_HANDLE, &imp) < 0)
		return fail("DRM_IOCTL_PRIME_FD_TO_HANDLE");
	a = map(fd0, create.offset);
	b = map(fd1, create.offset); /* the object's offset, the same on every fd */
	if (!a || !b)
		return fail("mmap");
	memset(a, 0x5a, BO_BYTES);
	same = memcmp(a, b, BO_BYTES) == 0;
	prep.handle = imp.handle;
	if (ioctl(fd1, DRM_IOCTL_ROCKET_PREP_BO, &prep) < 0) /* idle: at once */
		return fail("ROCKET_PREP_BO on the imported handle");
	printf("handle %u on the first fd is handle %u on the second\n", create.handle, imp.handle);
	printf("same memory through both fds: %s\n", same ? "yes" : "no");
	printf("NPU address: 0x%llx on the first fd, none on the second (only CREATE_BO gives "
	       "one)\n",
	       (unsigned long long)create.dma_address);
	munmap(a, BO_BYTES);
	munmap(b, BO_BYTES);
	close(exp.fd);
	close1.handle = imp.handle;
	close0.handle = create.handle;
	if (ioctl(fd1, DRM_IOCTL_GEM_CLOSE, &close1) < 0 ||
	    ioctl(fd0, DRM_IOCTL_GEM_CLOSE, &close0) < 0)
		return fail("DRM_IOCTL_GEM_CLOSE");
	return same ? 0 : 1;
}

int main(int argc, char **argv)
{
	int fd0, fd1, ret;

	if (argc != 2) {
		fprintf(stderr, "usage: prime-probe NODE (a rocket accel node)\n");
		return 2;
	}
	fd0 = open(argv[1], O_RDWR | O_CLOEXEC);
	fd1 = open(argv[1], O_RDWR | O_CLOEXEC);
	if (fd0 < 0 || fd1 < 0)
		return fail(argv[1]);
	ret = probe(fd0, fd1);
	close(fd1);
	close(fd0);
	return ret;
}
