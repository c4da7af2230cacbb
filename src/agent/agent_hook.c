/* SPDX-License-Identifier: MIT */
/*
 * agent_hook.c - the hook registry and the two indirect ways to the driver:
 * dlsym itself and cuGetProcAddress(_v2).
 *
 * cudart finds the driver with dlsym(<libcuda handle>, "cuGetProcAddress_v2"),
 * which no LD_PRELOAD symbol can intercept, so the agent exports dlsym.  Its
 * own lookups (cu_driver.c inside the agent resolves the real driver with
 * dlsym) must get the real functions, or the agent would call its own
 * wrappers: the caller's address tells them apart (code of this library).
 */
#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <cuda.h>

#include "agent.h"
#include "agent_impl.h"


static agent_resolver_fn agent_resolvers[AGENT_MAX_RESOLVERS];
static int agent_resolver_cnt;
static agent_resolver_fn agent_outer_resolvers[AGENT_MAX_RESOLVERS];
static int agent_outer_cnt;

int agent_hook_register(agent_resolver_fn fn)
{
	if (agent_resolver_cnt == AGENT_MAX_RESOLVERS)
		return -ENOSPC;
	agent_resolvers[agent_resolver_cnt++] = fn;
	return 0;
}

int agent_hook_register_outer(agent_resolver_fn fn)
{
	if (agent_outer_cnt == AGENT_MAX_RESOLVERS)
		return -ENOSPC;
	agent_outer_resolvers[agent_outer_cnt++] = fn;
	return 0;
}

void *agent_hook_lookup(const char *name, void *real)
{
	if (!real || !name)
		return real;
	void *got = real;
	for (int i = 0; i < agent_resolver_cnt; i++) {
		void *w = agent_resolvers[i](name, real);
		if (w) {
			got = w;
			break;
		}
	}
	for (int i = 0; i < agent_outer_cnt; i++) {
		void *w = agent_outer_resolvers[i](name, got);
		if (w)
			got = w;
	}
	return got;
}

typedef void *(*dlsym_fn)(void *, const char *);

void *agent_real_dlsym(void *handle, const char *name)
{
	static dlsym_fn real;
	dlsym_fn f = __atomic_load_n(&real, __ATOMIC_ACQUIRE);
	if (!f) {
		f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
		if (!f)
			f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
		__atomic_store_n(&real, f, __ATOMIC_RELEASE);
	}
	return f ? f(handle, name) : NULL;
}

/* Is addr code of this library (the agent calling dlsym for itself)? */
static int agent_owns(const void *addr)
{
	static Dl_info self;
	static int have_self;
	if (!have_self) {
		have_self = dladdr((void *)agent_owns, &self) != 0;
		if (!have_self)
			return 0;
	}
	Dl_info info;
	return dladdr(addr, &info) && info.dli_fbase == self.dli_fbase;
}

const struct agent_hooked *agent_hooked_find(const struct agent_hooked *table, size_t n,
					     const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(name, table[i].name))
			return &table[i];
	return NULL;
}

void *agent_hooked_take(const struct agent_hooked *h, void *real)
{
	if (real != h->wrapper)
		__atomic_store_n(h->real, real, __ATOMIC_RELEASE);
	return h->wrapper;
}

/* The real driver function name (for exported wrappers called before any
 * lookup handed them out): the next definition, else libcuda's own. */
void *agent_real_driver(const char *name)
{
	void *f = agent_real_dlsym(RTLD_NEXT, name);
	if (!f) {
		void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
		if (!h)
			h = dlopen("libcuda.so.1", RTLD_NOW);
		if (h)
			f = agent_real_dlsym(h, name);
	}
	return f;
}

/*
 * dlsym(RTLD_NEXT) means "after the caller's object", but the real dlsym
 * would see this library as the caller.  So for another caller: walk the
 * link map from the caller's object on and look the name up in each later
 * object, as the dynamic linker does for RTLD_NEXT.
 */
static void *agent_dlsym_next(const void *caller, const char *name)
{
	Dl_info info;
	struct link_map *lm = NULL;
	void *main_handle = dlopen(NULL, RTLD_LAZY | RTLD_NOLOAD);
	if (!dladdr(caller, &info) || !main_handle ||
	    dlinfo(main_handle, RTLD_DI_LINKMAP, &lm) || !lm)
		return NULL;
	int after = 0;
	void *sym = NULL;
	for (; lm && !sym; lm = lm->l_next) {
		Dl_info obj;
		if (!dladdr((void *)lm->l_ld, &obj))
			continue;
		if (!after) {
			after = obj.dli_fbase == info.dli_fbase;
			continue;
		}
		void *h = dlopen(lm->l_name[0] ? lm->l_name : NULL, RTLD_LAZY | RTLD_NOLOAD);
		if (!h)
			continue;
		/* dlsym on a handle also searches the object's dependencies:
		 * keep only a definition in this very object */
		void *s = agent_real_dlsym(h, name);
		Dl_info def;
		if (s && dladdr(s, &def) && def.dli_fbase == obj.dli_fbase)
			sym = s;
		dlclose(h);
	}
	return sym;
}

AGENT_EXPORT void *dlsym(void *handle, const char *name)
{
	const void *caller = __builtin_return_address(0);
	if (handle == RTLD_NEXT && !agent_owns(caller)) {
		void *next = agent_dlsym_next(caller, name);
		if (!next || name[0] != 'c' || name[1] != 'u')
			return next;
		return agent_hook_lookup(name, next);
	}
	void *real = agent_real_dlsym(handle, name);
	if (!real || name[0] != 'c' || name[1] != 'u' || agent_owns(caller))
		return real;
	return agent_hook_lookup(name, real);
}

/*
 * cuGetProcAddress: the caller asks for a base name ("cuLaunchKernel"), a
 * CUDA version and flags; with CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
 * the driver hands out the _ptsz variant, so the registry is asked for
 * that name first (a hook of the plain name must not receive the per-thread
 * real function unless no one hooks the _ptsz name).
 */
static void *agent_proc_lookup(const char *symbol, void *real, cuuint64_t flags)
{
	if (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) {
		char ptsz[128];
		if (snprintf(ptsz, sizeof(ptsz), "%s_ptsz", symbol) < (int)sizeof(ptsz)) {
			void *w = agent_hook_lookup(ptsz, real);
			if (w != real)
				return w;
		}
	}
	return agent_hook_lookup(symbol, real);
}

typedef CUresult (*get_proc_v2_fn)(const char *, void **, int, cuuint64_t,
				   CUdriverProcAddressQueryResult *);
typedef CUresult (*get_proc_fn)(const char *, void **, int, cuuint64_t);
static get_proc_v2_fn real_get_proc_v2;
static get_proc_fn real_get_proc;

/* Exported under the driver's symbol names (asm labels: cuda.h #defines
 * cuGetProcAddress to cuGetProcAddress_v2 with another prototype). */
AGENT_EXPORT CUresult agent_get_proc_v2(const char *symbol, void **pfn, int version,
					cuuint64_t flags, CUdriverProcAddressQueryResult *status)
	__asm__("cuGetProcAddress_v2");
AGENT_EXPORT CUresult agent_get_proc(const char *symbol, void **pfn, int version,
				     cuuint64_t flags) __asm__("cuGetProcAddress");

CUresult agent_get_proc_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
			   CUdriverProcAddressQueryResult *status)
{
	if (!real_get_proc_v2)
		real_get_proc_v2 = (get_proc_v2_fn)agent_real_driver("cuGetProcAddress_v2");
	if (!real_get_proc_v2)
		return CUDA_ERROR_NOT_FOUND;
	CUresult r = real_get_proc_v2(symbol, pfn, version, flags, status);
	if (r == CUDA_SUCCESS && pfn && *pfn && symbol)
		*pfn = agent_proc_lookup(symbol, *pfn, flags);
	return r;
}

CUresult agent_get_proc(const char *symbol, void **pfn, int version, cuuint64_t flags)
{
	if (!real_get_proc)
		real_get_proc = (get_proc_fn)agent_real_driver("cuGetProcAddress");
	if (!real_get_proc)
		return CUDA_ERROR_NOT_FOUND;
	CUresult r = real_get_proc(symbol, pfn, version, flags);
	if (r == CUDA_SUCCESS && pfn && *pfn && symbol)
		*pfn = agent_proc_lookup(symbol, *pfn, flags);
	return r;
}

/* cuGetProcAddress handed out through the other paths is our own. */
static void *agent_resolve_get_proc(const char *name, void *real)
{
	if (!strcmp(name, "cuGetProcAddress_v2")) {
		real_get_proc_v2 = (get_proc_v2_fn)real;
		return (void *)agent_get_proc_v2;
	}
	if (!strcmp(name, "cuGetProcAddress")) {
		/* Asked for by name through cuGetProcAddress with a CUDA 12+
		 * version, the driver hands out cuGetProcAddress_v2 (five
		 * arguments) under the plain name: the wrapper must match the
		 * ABI of what the driver returned, not the name asked for. */
		if (real == agent_real_driver("cuGetProcAddress_v2")) {
			real_get_proc_v2 = (get_proc_v2_fn)real;
			return (void *)agent_get_proc_v2;
		}
		real_get_proc = (get_proc_fn)real;
		return (void *)agent_get_proc;
	}
	return NULL;
}

__attribute__((constructor(101))) static void agent_hook_init(void)
{
	agent_hook_register(agent_resolve_get_proc);
}

void agent_notice(const char *fmt, ...)
{
	char buf[SESSION_MSG_LEN];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "gpuext: %s\n", buf);
	session_note(agent_session, "%s", buf);
}
