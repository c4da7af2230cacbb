/* SPDX-License-Identifier: MIT */
#include "jit_mem.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int jit_mem_alloc(struct jit_mem *m, size_t size, struct err *e)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t len = (size + page - 1) / page * page;

	m->base = NULL;
	m->mapped = 0;
	if (len == 0)
		len = page;
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return err_set(e, errno, "jit: cannot map %zu bytes of code memory: %s", len,
			       strerror(errno));
	m->base = p;
	m->mapped = len;
	return 0;
}

int jit_mem_seal(struct jit_mem *m, struct err *e)
{
	if (mprotect(m->base, m->mapped, PROT_READ | PROT_EXEC))
		return err_set(e, errno, "jit: cannot make code memory executable: %s",
			       strerror(errno));
	return 0;
}

void jit_mem_free(struct jit_mem *m)
{
	if (m->base)
		munmap(m->base, m->mapped);
	m->base = NULL;
	m->mapped = 0;
}
