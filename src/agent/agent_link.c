/* SPDX-License-Identifier: MIT */
/*
 * agent_link.c - PTX given to the JIT linker (cuLinkCreate / cuLinkAddData /
 * cuLinkAddFile / cuLinkComplete: Numba, CuPy's and NVRTC users' linking
 * path).  The linker turns PTX into a cubin, which the application then
 * loads like any ELF image: the PTX inputs are kept per link state and
 * attached to the module loaded from that link's cubin, so its kernels can
 * be instrumented (each kernel from the one input that defines it).  The
 * wrappers are agent_wrap.h's; these functions are what they call.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "agent_impl.h"
#include "agent_wrap.h"


struct agent_link {
	struct agent_link *next;
	CUlinkState state;
	const void *cubin;  /* after cuLinkComplete */
	char **ptx;
	size_t ptx_cnt;
};

static pthread_mutex_t agent_link_lock = PTHREAD_MUTEX_INITIALIZER;
static struct agent_link *agent_links;

static struct agent_link *agent_link_find_locked(CUlinkState st)
{
	struct agent_link *l = agent_links;
	while (l && l->state != st)
		l = l->next;
	return l;
}

static void agent_link_add_ptx(CUlinkState st, char *ptx)
{
	if (!ptx)
		return;
	pthread_mutex_lock(&agent_link_lock);
	struct agent_link *l = agent_link_find_locked(st);
	char **a = l ? realloc(l->ptx, (l->ptx_cnt + 1) * sizeof(*a)) : NULL;
	if (a) {
		l->ptx = a;
		l->ptx[l->ptx_cnt++] = ptx;
		ptx = NULL;
	}
	pthread_mutex_unlock(&agent_link_lock);
	free(ptx);
}

static void agent_link_free(struct agent_link *l)
{
	for (size_t i = 0; i < l->ptx_cnt; i++)
		free(l->ptx[i]);
	free(l->ptx);
	free(l);
}

int agent_link_take(const void *cubin, char ***ptx, size_t *cnt)
{
	int found = 0;
	pthread_mutex_lock(&agent_link_lock);
	for (struct agent_link *l = agent_links; l && !found; l = l->next)
		if (l->cubin == cubin && l->ptx_cnt) {
			/* the module gets copies: the link may be destroyed first */
			char **a = calloc(l->ptx_cnt, sizeof(*a));
			size_t n = 0;
			for (size_t i = 0; a && i < l->ptx_cnt; i++)
				if ((a[n] = strdup(l->ptx[i])))
					n++;
			if (a && n == l->ptx_cnt) {
				*ptx = a;
				*cnt = n;
				found = 1;
			} else {
				while (a && n)
					free(a[--n]);
				free(a);
			}
		}
	pthread_mutex_unlock(&agent_link_lock);
	return found;
}

void agent_link_created(CUlinkState st)
{
	struct agent_link *l;
	if (!agent_gpu_prog_cnt || !(l = calloc(1, sizeof(*l))))
		return;
	l->state = st;
	pthread_mutex_lock(&agent_link_lock);
	l->next = agent_links;
	agent_links = l;
	pthread_mutex_unlock(&agent_link_lock);
}

/* A PTX input's text (NUL-terminated copy; size may count the NUL). */
static char *agent_ptx_copy(const void *data, size_t size)
{
	const char *s = data;
	size_t len = strnlen(s, size);
	char *c = malloc(len + 1);
	if (c) {
		memcpy(c, s, len);
		c[len] = 0;
	}
	return c;
}

void agent_link_data_added(CUlinkState st, CUjitInputType type, const void *data, size_t size)
{
	if (type == CU_JIT_INPUT_PTX && agent_gpu_prog_cnt)
		agent_link_add_ptx(st, agent_ptx_copy(data, size));
}

static char *agent_read_ptx_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t len = 0, cap = 0, got;
	do {
		if (len + 4096 + 1 > cap) {
			char *b = realloc(buf, cap = (cap + 4096) * 2);
			if (!b)
				break;
			buf = b;
		}
		got = fread(buf + len, 1, cap - len - 1, f);
		len += got;
	} while (got);
	fclose(f);
	if (buf)
		buf[len] = 0;
	return buf;
}

void agent_link_file_added(CUlinkState st, CUjitInputType type, const char *path)
{
	if (type == CU_JIT_INPUT_PTX && agent_gpu_prog_cnt)
		agent_link_add_ptx(st, agent_read_ptx_file(path));
}

void agent_link_completed(CUlinkState st, void **cubin)
{
	if (!cubin)
		return;
	pthread_mutex_lock(&agent_link_lock);
	struct agent_link *l = agent_link_find_locked(st);
	if (l)
		l->cubin = *cubin;
	pthread_mutex_unlock(&agent_link_lock);
}

void agent_link_destroyed(CUlinkState st)
{
	pthread_mutex_lock(&agent_link_lock);
	for (struct agent_link **p = &agent_links; *p; p = &(*p)->next)
		if ((*p)->state == st) {
			struct agent_link *l = *p;
			*p = l->next;
			agent_link_free(l);
			break;
		}
	pthread_mutex_unlock(&agent_link_lock);
}
