/* SPDX-License-Identifier: MIT */
/*
 * helpers_probe.c - probe_read and friends: reads of arbitrary addresses of
 * this process that never crash.
 *
 * A program may hand any address to probe_read.  The kernel reads it with
 * page-fault handling; in user space the same effect comes from letting the
 * kernel do the copy: process_vm_readv() on our own pid fails with EFAULT
 * instead of raising SIGSEGV.  Where a sandbox forbids that call (some
 * container seccomp profiles do), write() of the bytes into a pipe gives the
 * same guarantee, one page at a time, at the cost of a second copy.
 */
#include "helpers_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

enum { PROBE_CHUNK = 4096 };

/* The pipe for the fallback path, one per thread, opened on first use. */
static _Thread_local int probe_pipe[2] = {-1, -1};

int helper_read_via_pipe(void *dst, const void *src, size_t len)
{
	if (probe_pipe[0] < 0 && pipe2(probe_pipe, O_CLOEXEC | O_NONBLOCK))
		return -EFAULT;
	for (size_t done = 0; done < len;) {
		size_t n = len - done < PROBE_CHUNK ? len - done : PROBE_CHUNK;
		ssize_t w = write(probe_pipe[1], (const char *)src + done, n);
		if (w <= 0)
			return -EFAULT;
		if (read(probe_pipe[0], (char *)dst + done, (size_t)w) != w)
			return -EFAULT;
		done += (size_t)w;
	}
	return 0;
}

static int probe_read_raw(void *dst, const void *src, size_t len)
{
	static _Atomic int vm_readv_blocked;
	struct iovec local = {dst, len}, remote = {(void *)src, len};

	if (!vm_readv_blocked) {
		ssize_t n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
		if (n == (ssize_t)len)
			return 0;
		if (n >= 0 || errno == EFAULT)
			return -EFAULT;
		if (errno != EPERM && errno != ENOSYS)
			return -EFAULT;
		vm_readv_blocked = 1;
	}
	return helper_read_via_pipe(dst, src, len);
}

int helper_safe_read(void *dst, const void *src, size_t len)
{
	if (!len)
		return 0;
	if (probe_read_raw(dst, src, len)) {
		memset(dst, 0, len);
		return -EFAULT;
	}
	return 0;
}

long helper_safe_read_str(char *dst, size_t size, const void *src)
{
	const char *s = src;
	size_t done = 0;

	if (!size)
		return 0;
	/* Page by page: the string may end just before an unmapped page. */
	while (done < size - 1) {
		size_t to_page = PROBE_CHUNK - ((uintptr_t)(s + done) & (PROBE_CHUNK - 1));
		size_t n = size - 1 - done < to_page ? size - 1 - done : to_page;
		if (probe_read_raw(dst + done, s + done, n)) {
			memset(dst, 0, size);
			return -EFAULT;
		}
		char *nul = memchr(dst + done, '\0', n);
		if (nul)
			return nul - dst + 1;
		done += n;
	}
	dst[done] = '\0';
	return (long)done + 1;
}

uint64_t helper_probe_read(uint64_t dst, uint64_t size, uint64_t src, uint64_t r4, uint64_t r5)
{
	return (uint64_t)(int64_t)helper_safe_read((void *)(uintptr_t)dst,
						   (const void *)(uintptr_t)src, (uint32_t)size);
}

uint64_t helper_probe_read_str(uint64_t dst, uint64_t size, uint64_t src, uint64_t r4,
			       uint64_t r5)
{
	return (uint64_t)helper_safe_read_str((char *)(uintptr_t)dst, (uint32_t)size,
					      (const void *)(uintptr_t)src);
}
