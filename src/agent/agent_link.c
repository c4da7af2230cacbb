/* SPDX-License-Identifier: MIT */
/*
 * agent_link.c - PTX given to the JIT linker (cuLinkCreate / cuLinkAddData /
 * cuLinkAddFile / cuLinkComplete: Numba, CuPy's and NVRTC users' linking
 * path).  The linker turns PTX into a cubin, which the application then
 * loads like any ELF image: the PTX inputs are kept per link state and
 * attached to the module loaded from that link's cubin, so its kernels can
 * be instrumented (each kernel from the one input that defines it).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "agent_impl.h"


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

typedef CUresult (*link_create_fn)(unsigned, CUjit_option *, void **, CUlinkState *);
typedef CUresult (*link_add_data_fn)(CUlinkState, CUjitInputType, void *, size_t, const char *,
				     unsigned, CUjit_option *, void **);
typedef CUresult (*link_add_file_fn)(CUlinkState, CUjitInputType, const char *, unsigned,
				     CUjit_option *, void **);
typedef CUresult (*link_complete_fn)(CUlinkState, void **, size_t *);
typedef CUresult (*link_destroy_fn)(CUlinkState);

static link_create_fn real_create, real_create_v2;
static link_add_data_fn real_add_data, real_add_data_v2;
static link_add_file_fn real_add_file, real_add_file_v2;
static link_complete_fn real_complete;
static link_destroy_fn real_destroy;

static CUresult agent_link_created(CUresult r, CUlinkState *st)
{
	struct agent_link *l;
	if (r != CUDA_SUCCESS || !agent_gpu_prog_cnt || !(l = calloc(1, sizeof(*l))))
		return r;
	l->state = *st;
	pthread_mutex_lock(&agent_link_lock);
	l->next = agent_links;
	agent_links = l;
	pthread_mutex_unlock(&agent_link_lock);
	return r;
}

#define LINK_CREATE_PARAMS (unsigned n, CUjit_option *o, void **v, CUlinkState *st)
AGENT_EXPORT CUresult agent_w_link_create LINK_CREATE_PARAMS __asm__("cuLinkCreate");
CUresult agent_w_link_create LINK_CREATE_PARAMS
{
	AGENT_REAL(real_create, "cuLinkCreate");
	return agent_link_created(real_create(n, o, v, st), st);
}
AGENT_EXPORT CUresult agent_w_link_create_v2 LINK_CREATE_PARAMS __asm__("cuLinkCreate_v2");
CUresult agent_w_link_create_v2 LINK_CREATE_PARAMS
{
	AGENT_REAL(real_create_v2, "cuLinkCreate_v2");
	return agent_link_created(real_create_v2(n, o, v, st), st);
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

#define LINK_ADD_DATA_PARAMS                                                             \
	(CUlinkState st, CUjitInputType type, void *data, size_t size, const char *name, \
	 unsigned n, CUjit_option *o, void **v)
AGENT_EXPORT CUresult agent_w_link_add_data LINK_ADD_DATA_PARAMS __asm__("cuLinkAddData");
CUresult agent_w_link_add_data LINK_ADD_DATA_PARAMS
{
	AGENT_REAL(real_add_data, "cuLinkAddData");
	CUresult r = real_add_data(st, type, data, size, name, n, o, v);
	if (r == CUDA_SUCCESS && type == CU_JIT_INPUT_PTX && agent_gpu_prog_cnt)
		agent_link_add_ptx(st, agent_ptx_copy(data, size));
	return r;
}
AGENT_EXPORT CUresult agent_w_link_add_data_v2 LINK_ADD_DATA_PARAMS __asm__("cuLinkAddData_v2");
CUresult agent_w_link_add_data_v2 LINK_ADD_DATA_PARAMS
{
	AGENT_REAL(real_add_data_v2, "cuLinkAddData_v2");
	CUresult r = real_add_data_v2(st, type, data, size, name, n, o, v);
	if (r == CUDA_SUCCESS && type == CU_JIT_INPUT_PTX && agent_gpu_prog_cnt)
		agent_link_add_ptx(st, agent_ptx_copy(data, size));
	return r;
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

#define LINK_ADD_FILE_PARAMS \
	(CUlinkState st, CUjitInputType type, const char *path, unsigned n, CUjit_option *o, void **v)
AGENT_EXPORT CUresult agent_w_link_add_file LINK_ADD_FILE_PARAMS __asm__("cuLinkAddFile");
CUresult agent_w_link_add_file LINK_ADD_FILE_PARAMS
{
	AGENT_REAL(real_add_file, "cuLinkAddFile");
	CUresult r = real_add_file(st, type, path, n, o, v);
	if (r == CUDA_SUCCESS && type == CU_JIT_INPUT_PTX && agent_gpu_prog_cnt)
		agent_link_add_ptx(st, agent_read_ptx_file(path));
	return r;
}
AGENT_EXPORT CUresult agent_w_link_add_file_v2 LINK_ADD_FILE_PARAMS __asm__("cuLinkAddFile_v2");
CUresult agent_w_link_add_file_v2 LINK_ADD_FILE_PARAMS
{
	AGENT_REAL(real_add_file_v2, "cuLinkAddFile_v2");
	CUresult r = real_add_file_v2(st, type, path, n, o, v);
	if (r == CUDA_SUCCESS && type == CU_JIT_INPUT_PTX && agent_gpu_prog_cnt)
		agent_link_add_ptx(st, agent_read_ptx_file(path));
	return r;
}

AGENT_EXPORT CUresult agent_w_link_complete(CUlinkState st, void **cubin, size_t *size)
	__asm__("cuLinkComplete");
CUresult agent_w_link_complete(CUlinkState st, void **cubin, size_t *size)
{
	AGENT_REAL(real_complete, "cuLinkComplete");
	CUresult r = real_complete(st, cubin, size);
	if (r == CUDA_SUCCESS && cubin) {
		pthread_mutex_lock(&agent_link_lock);
		struct agent_link *l = agent_link_find_locked(st);
		if (l)
			l->cubin = *cubin;
		pthread_mutex_unlock(&agent_link_lock);
	}
	return r;
}

AGENT_EXPORT CUresult agent_w_link_destroy(CUlinkState st) __asm__("cuLinkDestroy");
CUresult agent_w_link_destroy(CUlinkState st)
{
	AGENT_REAL(real_destroy, "cuLinkDestroy");
	pthread_mutex_lock(&agent_link_lock);
	for (struct agent_link **p = &agent_links; *p; p = &(*p)->next)
		if ((*p)->state == st) {
			struct agent_link *l = *p;
			*p = l->next;
			agent_link_free(l);
			break;
		}
	pthread_mutex_unlock(&agent_link_lock);
	return real_destroy(st);
}

static const struct agent_hooked agent_link_hooked[] = {
	{"cuLinkCreate", (void *)agent_w_link_create, (void **)&real_create},
	{"cuLinkCreate_v2", (void *)agent_w_link_create_v2, (void **)&real_create_v2},
	{"cuLinkAddData", (void *)agent_w_link_add_data, (void **)&real_add_data},
	{"cuLinkAddData_v2", (void *)agent_w_link_add_data_v2, (void **)&real_add_data_v2},
	{"cuLinkAddFile", (void *)agent_w_link_add_file, (void **)&real_add_file},
	{"cuLinkAddFile_v2", (void *)agent_w_link_add_file_v2, (void **)&real_add_file_v2},
	{"cuLinkComplete", (void *)agent_w_link_complete, (void **)&real_complete},
	{"cuLinkDestroy", (void *)agent_w_link_destroy, (void **)&real_destroy},
};

/* cuGetProcAddress("cuLinkCreate", version >= 6050) hands out the _v2
 * function under the base name: the same prototype, so the base wrapper
 * serves it (its real slot holds whichever the application asked for). */
static void *agent_resolve_link(const char *name, void *real)
{
	const struct agent_hooked *h = agent_hooked_find(
		agent_link_hooked, sizeof(agent_link_hooked) / sizeof(agent_link_hooked[0]), name);
	return h ? agent_hooked_take(h, real) : NULL;
}

__attribute__((constructor(101))) static void agent_link_init(void)
{
	agent_hook_register(agent_resolve_link);
}
