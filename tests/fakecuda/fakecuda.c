/* SPDX-License-Identifier: MIT */
/*
 * fakecuda.c - a fake libcuda.so.1 for testing the agent without a GPU.
 *
 * It implements the driver API subset that the agent and tests/fakecuda/app.c
 * use.  "Device" memory is host memory; kernels do not run.  Every module
 * load and launch is recorded, one line each, in $FAKECUDA_LOG:
 *   load MOD KIND BYTES [DUMPFILE]    (KIND: ptx, fatbin, elf)
 *   launch NAME MOD API               (API: the entry point used)
 * and PTX images are written to $FAKECUDA_DUMP/mod-MOD.ptx (a module loaded
 * from the JIT linker's output counts as the PTX that went into the link).
 * $FAKECUDA_FAIL="cuFoo:N,cuBar:M" makes the Nth call of cuFoo fail
 * (CUDA_ERROR_INVALID_PTX for loads, CUDA_ERROR_OUT_OF_MEMORY otherwise);
 * $FAKECUDA_DELAY="cuFoo:MS" makes each compile through cuFoo take MS ms more;
 * a compile that outlives the JIT compiler's exit handler aborts.
 * The device has $FAKECUDA_SMS multiprocessors (default 2; 132 makes the
 * per-SM code an H200's: bench/sass_size.sh).  Virtual memory management
 * reserves the address asked for before any context ($FAKECUDA_VMM:
 * "elsewhere" never does, "unsupported" fails; see cuMemAddressReserve).
 * Not part of gpuext: a test fixture (built by the Makefile as
 * build/fakecuda/libcuda.so.1).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cuda.h>

#define FAKE_API __attribute__((visibility("default")))

static pthread_mutex_t fake_lock = PTHREAD_MUTEX_INITIALIZER;

static void fake_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fake_log(const char *fmt, ...)
{
	const char *path = getenv("FAKECUDA_LOG");
	if (!path)
		return;
	pthread_mutex_lock(&fake_lock);
	FILE *f = fopen(path, "a");
	if (f) {
		va_list ap;
		va_start(ap, fmt);
		vfprintf(f, fmt, ap);
		va_end(ap);
		fputc('\n', f);
		fclose(f);
	}
	pthread_mutex_unlock(&fake_lock);
}

/* Should this call of fn fail (FAKECUDA_FAIL)? Counts calls per name. */
static int fake_fail(const char *fn)
{
	static struct {
		char name[64];
		int calls;
	} counts[64];
	const char *spec = getenv("FAKECUDA_FAIL");
	if (!spec)
		return 0;
	pthread_mutex_lock(&fake_lock);
	int n = 0, i;
	for (i = 0; i < 64 && counts[i].name[0] && strcmp(counts[i].name, fn); i++)
		;
	if (i < 64) {
		snprintf(counts[i].name, sizeof(counts[i].name), "%s", fn);
		n = ++counts[i].calls;
	}
	pthread_mutex_unlock(&fake_lock);
	size_t len = strlen(fn);
	for (const char *p = spec; (p = strstr(p, fn)); p += len)
		if ((p == spec || p[-1] == ',') && p[len] == ':' && atoi(p + len + 1) == n)
			return 1;
	return 0;
}

/* FAKECUDA_DELAY="cuFoo:MS,...": every call of cuFoo that compiles takes MS
 * ms more (a slow JIT compile). */
static void fake_delay(const char *fn)
{
	const char *spec = getenv("FAKECUDA_DELAY");
	size_t len = strlen(fn);
	for (const char *p = spec; p && (p = strstr(p, fn)); p += len)
		if ((p == spec || p[-1] == ',') && p[len] == ':')
			usleep((useconds_t)atoi(p + len + 1) * 1000);
}

struct CUmod_st {
	int id;
	char *ptx; /* NULL for binary images */
	void *globals; /* cuModuleGetGlobal's memory (one variable, 4 KiB) */
};
struct CUfunc_st {
	struct CUmod_st *mod;
	char name[256];
};
static int fake_ctx_storage;
static __thread CUcontext fake_current; /* per thread, as the driver's */
static int fake_next_mod = 1;

/*
 * The JIT linker's "cubin": FAKE_CUBIN_MAGIC, its total length (u64), then
 * each input as {u32 type, u64 size, bytes}.  Self-describing, so that a
 * copy of it (the agent's module cache keeps cubins on disk) loads like the
 * original: as the last PTX that went into the link.
 */
#define FAKE_CUBIN_MAGIC "\177ELFFAKELINK"
enum { FAKE_CUBIN_HDR = 12 + 8, FAKE_INPUT_HDR = 4 + 8 };

/* The last PTX input of a fake cubin (a copy), or NULL for other images. */
static char *fake_linked_ptx(const void *image)
{
	const unsigned char *c = image;
	uint64_t total, size;
	uint32_t type;
	char *ptx = NULL;
	if (strncmp((const char *)c, FAKE_CUBIN_MAGIC, 12)) /* stops at a short text's NUL */
		return NULL;
	memcpy(&total, c + 12, 8);
	for (uint64_t at = FAKE_CUBIN_HDR; at + FAKE_INPUT_HDR <= total;
	     at += FAKE_INPUT_HDR + size) {
		memcpy(&type, c + at, 4);
		memcpy(&size, c + at + 4, 8);
		if (size > total - at - FAKE_INPUT_HDR)
			break;
		if (type == CU_JIT_INPUT_PTX) {
			free(ptx);
			ptx = strndup((const char *)c + at + FAKE_INPUT_HDR, size);
		}
	}
	return ptx;
}

/*
 * The JIT compiler, as the driver's behaves at exit: loaded at the
 * process's first PTX compile, which registers its teardown with atexit
 * then; a compile still running when that teardown has run aborts (the
 * H200's driver crashed in free()).  The state is the compiler's.
 */
static int fake_jit_loaded, fake_jit_gone;

static void fake_jit_unload(void)
{
	__atomic_store_n(&fake_jit_gone, 1, __ATOMIC_RELEASE);
}

static void fake_jit_compile(const char *api)
{
	pthread_mutex_lock(&fake_lock);
	if (!fake_jit_loaded++)
		atexit(fake_jit_unload);
	pthread_mutex_unlock(&fake_lock);
	fake_delay(api);
	if (__atomic_load_n(&fake_jit_gone, __ATOMIC_ACQUIRE)) {
		fprintf(stderr, "fakecuda: %s: the JIT compiler was torn down during a compile\n", api);
		abort();
	}
}

static CUresult fake_load(CUmodule *m, const void *image, const char *api)
{
	if (fake_fail(api))
		return CUDA_ERROR_INVALID_PTX;
	struct CUmod_st *mod = calloc(1, sizeof(*mod));
	uint32_t magic;
	memcpy(&magic, image, 4);
	if (magic != 0x464c457fu && magic != 0x466243b1u && magic != 0xba55ed50u)
		fake_jit_compile(api); /* PTX, or a JIT linker's cubin of PTX */
	pthread_mutex_lock(&fake_lock);
	mod->id = fake_next_mod++;
	pthread_mutex_unlock(&fake_lock);
	char *linked = fake_linked_ptx(image);
	if (linked)
		image = linked;
	if (!linked && (magic == 0x464c457fu || magic == 0x466243b1u || magic == 0xba55ed50u)) {
		fake_log("load %d %s 0", mod->id, magic == 0x464c457fu ? "elf" : "fatbin");
	} else {
		mod->ptx = strdup(image);
		char path[512] = "";
		const char *dir = getenv("FAKECUDA_DUMP");
		if (dir) {
			snprintf(path, sizeof(path), "%s/mod-%d.ptx", dir, mod->id);
			FILE *f = fopen(path, "w");
			if (f) {
				fputs(mod->ptx, f);
				fclose(f);
			}
		}
		fake_log("load %d ptx %zu %s", mod->id, strlen(mod->ptx), path);
	}
	free(linked);
	*m = (CUmodule)mod;
	return CUDA_SUCCESS;
}

FAKE_API CUresult cuInit(unsigned flags) { return CUDA_SUCCESS; }
FAKE_API CUresult cuDriverGetVersion(int *v) { *v = 13000; return CUDA_SUCCESS; }
FAKE_API CUresult cuDeviceGetCount(int *n) { *n = 1; return CUDA_SUCCESS; }
FAKE_API CUresult cuDeviceGet(CUdevice *d, int ord) { *d = ord; return ord ? CUDA_ERROR_INVALID_DEVICE : CUDA_SUCCESS; }
FAKE_API CUresult cuDeviceGetName(char *name, int len, CUdevice d) { snprintf(name, (size_t)len, "fakecuda"); return CUDA_SUCCESS; }
FAKE_API CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d)
{
	const char *sms = getenv("FAKECUDA_SMS");
	*v = a == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR ? 9
	     : a == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR ? 0
	     : a == CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT    ? (sms ? atoi(sms) : 2) : 1;
	return CUDA_SUCCESS;
}
static int fake_primary_refs; /* retains not released: the primary context is active */
FAKE_API CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) { *c = (CUcontext)&fake_ctx_storage; __atomic_add_fetch(&fake_primary_refs, 1, __ATOMIC_RELAXED); return CUDA_SUCCESS; }
FAKE_API CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) { __atomic_sub_fetch(&fake_primary_refs, 1, __ATOMIC_RELAXED); return CUDA_SUCCESS; }
FAKE_API CUresult cuDevicePrimaryCtxGetState(CUdevice d, unsigned *flags, int *active)
{
	*flags = 0;
	*active = __atomic_load_n(&fake_primary_refs, __ATOMIC_RELAXED) > 0;
	return CUDA_SUCCESS;
}
FAKE_API CUresult cuCtxSetCurrent(CUcontext c) { fake_current = c; return CUDA_SUCCESS; }
FAKE_API CUresult cuCtxGetCurrent(CUcontext *c) { *c = fake_current; return CUDA_SUCCESS; }
FAKE_API CUresult cuCtxSynchronize(void) { return CUDA_SUCCESS; }
FAKE_API CUresult cuStreamQuery(CUstream s) { return CUDA_SUCCESS; }
FAKE_API CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *m) { *m = CU_STREAM_CAPTURE_MODE_GLOBAL; return CUDA_SUCCESS; }
FAKE_API CUresult cuModuleLoadData(CUmodule *m, const void *image) { return fake_load(m, image, "cuModuleLoadData"); }
FAKE_API CUresult cuModuleLoadDataEx(CUmodule *m, const void *image, unsigned n, CUjit_option *o, void **v) { return fake_load(m, image, "cuModuleLoadDataEx"); }
/* A module variable: any name the module's PTX declares (".u64 NAME["),
 * logged as "global MOD NAME"; 4 KiB of host memory per module. */
FAKE_API CUresult cuModuleGetGlobal_v2(CUdeviceptr *p, size_t *bytes, CUmodule m, const char *name)
{
	struct CUmod_st *mod = (struct CUmod_st *)m;
	char pat[300];
	snprintf(pat, sizeof(pat), " %s[", name);
	if (fake_fail("cuModuleGetGlobal_v2") || !mod->ptx || !strstr(mod->ptx, pat))
		return CUDA_ERROR_NOT_FOUND;
	if (!mod->globals && !(mod->globals = calloc(1, 4096)))
		return CUDA_ERROR_OUT_OF_MEMORY;
	*p = (CUdeviceptr)mod->globals;
	if (bytes)
		*bytes = 4096;
	fake_log("global %d %s", mod->id, name);
	return CUDA_SUCCESS;
}
FAKE_API CUresult cuModuleUnload(CUmodule m)
{
	free(((struct CUmod_st *)m)->globals);
	free(((struct CUmod_st *)m)->ptx);
	free(m);
	return CUDA_SUCCESS;
}
FAKE_API CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
	struct CUmod_st *mod = (struct CUmod_st *)m;
	char pat[300];
	snprintf(pat, sizeof(pat), ".entry %s(", name);
	if (mod->ptx && !strstr(mod->ptx, pat))
		return CUDA_ERROR_NOT_FOUND;
	struct CUfunc_st *fn = calloc(1, sizeof(*fn));
	fn->mod = mod;
	snprintf(fn->name, sizeof(fn->name), "%s", name);
	*f = (CUfunction)fn;
	return CUDA_SUCCESS;
}
FAKE_API CUresult cuLibraryLoadData(CUlibrary *l, const void *code, CUjit_option *jo, void **jv, unsigned jn, CUlibraryOption *lo, void **lv, unsigned ln)
{
	return fake_load((CUmodule *)l, code, "cuLibraryLoadData");
}
FAKE_API CUresult cuLibraryUnload(CUlibrary l) { return cuModuleUnload((CUmodule)l); }
/* A library is its module here, in every context. */
FAKE_API CUresult cuLibraryGetModule(CUmodule *m, CUlibrary l) { *m = (CUmodule)l; return CUDA_SUCCESS; }
FAKE_API CUresult cuLibraryGetKernel(CUkernel *k, CUlibrary l, const char *name) { return cuModuleGetFunction((CUfunction *)k, (CUmodule)l, name); }
FAKE_API CUresult cuKernelGetFunction(CUfunction *f, CUkernel k)
{
	struct CUfunc_st *fn = malloc(sizeof(*fn));
	*fn = *(struct CUfunc_st *)k;
	*f = (CUfunction)fn;
	return CUDA_SUCCESS;
}

/* The JIT linker: the cubin (FAKE_CUBIN_MAGIC above) holds the inputs.
 * Each cuLinkComplete is logged as "link". */
struct fake_link {
	unsigned char *cubin;
	uint64_t len;
};
FAKE_API CUresult fake_link_create(unsigned n, CUjit_option *o, void **v, CUlinkState *st) __asm__("cuLinkCreate_v2");
CUresult fake_link_create(unsigned n, CUjit_option *o, void **v, CUlinkState *st)
{
	struct fake_link *l = calloc(1, sizeof(*l));
	l->len = FAKE_CUBIN_HDR;
	l->cubin = calloc(1, l->len);
	memcpy(l->cubin, FAKE_CUBIN_MAGIC, 12);
	*st = (CUlinkState)l;
	return CUDA_SUCCESS;
}
FAKE_API CUresult fake_link_add_data(CUlinkState st, CUjitInputType type, void *data, size_t size, const char *name, unsigned n, CUjit_option *o, void **v) __asm__("cuLinkAddData_v2");
CUresult fake_link_add_data(CUlinkState st, CUjitInputType type, void *data, size_t size, const char *name, unsigned n, CUjit_option *o, void **v)
{
	struct fake_link *l = (struct fake_link *)st;
	if (fake_fail("cuLinkAddData_v2"))
		return CUDA_ERROR_NO_BINARY_FOR_GPU;
	uint32_t t = (uint32_t)type;
	uint64_t sz = size;
	l->cubin = realloc(l->cubin, l->len + FAKE_INPUT_HDR + size);
	memcpy(l->cubin + l->len, &t, 4);
	memcpy(l->cubin + l->len + 4, &sz, 8);
	memcpy(l->cubin + l->len + FAKE_INPUT_HDR, data, size);
	l->len += FAKE_INPUT_HDR + size;
	memcpy(l->cubin + 12, &l->len, 8);
	return CUDA_SUCCESS;
}
FAKE_API CUresult cuLinkComplete(CUlinkState st, void **cubin, size_t *size)
{
	struct fake_link *l = (struct fake_link *)st;
	if (fake_fail("cuLinkComplete"))
		return CUDA_ERROR_INVALID_PTX;
	*cubin = l->cubin;
	*size = l->len;
	fake_log("link");
	return CUDA_SUCCESS;
}
FAKE_API CUresult cuLinkDestroy(CUlinkState st)
{
	/* the cubin stays: applications load it after destroying the link
	 * (the real driver frees it; this fixture's processes are short) */
	free(st);
	return CUDA_SUCCESS;
}

/*
 * The parameters of kernel NAME in ptx: how many, and whether the last is
 * the launch id the agent appends (a name ending in "_lid").
 */
static int fake_params(const char *ptx, const char *name, int *lid)
{
	char key[300];
	snprintf(key, sizeof(key), ".entry %s(", name);
	const char *p = ptx ? strstr(ptx, key) : NULL, *end = p ? strchr(p, ')') : NULL;
	int n = 0;
	*lid = 0;
	for (const char *q = p; q && (q = strstr(q, ".param")) && q < end; q += 6) {
		n++;
		const char *e = q;
		while (e < end && *e != ',')
			e++;
		while (e > q && (e[-1] == ' ' || e[-1] == '\n' || e[-1] == '\t'))
			e--;
		*lid = e - q > 4 && !memcmp(e - 4, "_lid", 4);
	}
	return n;
}

/*
 * A launch (or graph node) of f: logged, and for an instrumented kernel the
 * launch id it was passed read as the driver would read it, with the
 * application's first parameter (kernelParams: its first 8 bytes) or the
 * buffer's size and first bytes (extra), so that tests see both arrive.
 */
static CUresult fake_launch(CUfunction f, const char *api, void **p, void **x)
{
	if (fake_fail(api))
		return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
	struct CUfunc_st *fn = (struct CUfunc_st *)f;
	int lid, n = fake_params(fn->mod->ptx, fn->name, &lid);
	uint64_t id = 0, p0 = 0;
	if (lid && p) {
		memcpy(&id, p[n - 1], 8);
		if (n > 1 && p[0])
			memcpy(&p0, p[0], 8);
		fake_log("launch %s %d %s lid=%llu p0=%llx", fn->name, fn->mod->id, api,
			 (unsigned long long)id, (unsigned long long)p0);
		return CUDA_SUCCESS;
	}
	if (lid && x) {
		const unsigned char *buf = NULL;
		size_t size = 0;
		for (int i = 0; x[i] != CU_LAUNCH_PARAM_END; i += 2)
			if (x[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
				buf = x[i + 1];
			else if (x[i] == CU_LAUNCH_PARAM_BUFFER_SIZE)
				size = *(size_t *)x[i + 1];
		char head[80] = "";
		if (buf && size >= 8) {
			memcpy(&id, buf + size - 8, 8);
			for (size_t i = 0; i < size - 8 && i < 32; i++)
				snprintf(head + 2 * i, 3, "%02x", buf[i]);
		}
		fake_log("launch %s %d %s lid=%llu size=%zu head=%s", fn->name, fn->mod->id, api,
			 (unsigned long long)id, size, head);
		return CUDA_SUCCESS;
	}
	fake_log("launch %s %d %s", fn->name, fn->mod->id, api);
	return CUDA_SUCCESS;
}
#define FAKE_LAUNCH_PARAMS (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned sh, CUstream s, void **p, void **x)
#define FAKE_COOP_PARAMS (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned sh, CUstream s, void **p)
FAKE_API CUresult fake_cuLaunchKernel FAKE_LAUNCH_PARAMS __asm__("cuLaunchKernel");
CUresult fake_cuLaunchKernel FAKE_LAUNCH_PARAMS { return fake_launch(f, "cuLaunchKernel", p, x); }
FAKE_API CUresult cuLaunchKernel_ptsz FAKE_LAUNCH_PARAMS { return fake_launch(f, "cuLaunchKernel_ptsz", p, x); }
FAKE_API CUresult fake_cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **p, void **x) __asm__("cuLaunchKernelEx");
CUresult fake_cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **p, void **x) { return fake_launch(f, "cuLaunchKernelEx", p, x); }
FAKE_API CUresult cuLaunchCooperativeKernel FAKE_COOP_PARAMS { return fake_launch(f, "cuLaunchCooperativeKernel", p, NULL); }

/* A graph kernel node: logged like a launch of its function. */
FAKE_API CUresult cuGraphAddKernelNode_v2(CUgraphNode *n, CUgraph g, const CUgraphNode *d, size_t nd, const CUDA_KERNEL_NODE_PARAMS_v2 *p)
{
	*n = (CUgraphNode)p;
	return fake_launch(p->func ? p->func : (CUfunction)p->kern, "cuGraphAddKernelNode_v2",
			   p->kernelParams, p->extra);
}

FAKE_API CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
	if (fake_fail("cuMemAlloc_v2"))
		return CUDA_ERROR_OUT_OF_MEMORY;
	void *m = aligned_alloc(256, (n + 255) & ~(size_t)255);
	*p = (CUdeviceptr)m;
	return m ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
static uintptr_t fake_managed_va;
static size_t fake_managed_len;
FAKE_API CUresult cuMemFree_v2(CUdeviceptr p)
{
	if (p && p == fake_managed_va) {
		munmap((void *)fake_managed_va, fake_managed_len);
		fake_managed_va = 0;
		return CUDA_SUCCESS;
	}
	free((void *)p);
	return CUDA_SUCCESS;
}
FAKE_API CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n) { memcpy((void *)d, s, n); return CUDA_SUCCESS; }
FAKE_API CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n) { memcpy(d, (void *)s, n); return CUDA_SUCCESS; }
FAKE_API CUresult cuMemcpyDtoHAsync_v2(void *d, CUdeviceptr s, size_t n, CUstream st) { fake_log("dtoh async %zu", n); return cuMemcpyDtoH_v2(d, s, n); }
FAKE_API CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n) { memset((void *)d, v, n); return CUDA_SUCCESS; }
FAKE_API CUresult cuMemHostAlloc(void **p, size_t n, unsigned flags) { *p = aligned_alloc(4096, (n + 4095) & ~(size_t)4095); return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY; }
FAKE_API CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *d, void *p, unsigned flags) { *d = (CUdeviceptr)p; return CUDA_SUCCESS; }
FAKE_API CUresult cuMemFreeHost(void *p) { free(p); return CUDA_SUCCESS; }
/* Memory, copy and synchronisation calls of the host tools' tests
 * (tests/fakecuda/memapp.c): copies are memcpy, syncs return at once. */
/* Managed memory (test_agent_mem): with FAKECUDA_MANAGED_AT=ADDR the first
 * managed allocation is mapped at ADDR, so that the fake libcupti's
 * unified-memory records (0x7f0000000000 + i MiB) fall inside it; logged
 * "managed ADDR LEN".  Prefetches are logged "prefetch ADDR LEN gpu|cpu". */
FAKE_API CUresult cuMemAllocManaged(CUdeviceptr *p, size_t n, unsigned flags)
{
	const char *at = getenv("FAKECUDA_MANAGED_AT");
	if (fake_fail("cuMemAllocManaged"))
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (!at || fake_managed_va)
		return cuMemAlloc_v2(p, n);
	void *m = mmap((void *)(uintptr_t)strtoull(at, NULL, 0), n, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (m == MAP_FAILED)
		return CUDA_ERROR_OUT_OF_MEMORY;
	fake_managed_va = (uintptr_t)m;
	fake_managed_len = n;
	fake_log("managed %#llx %zu", (unsigned long long)fake_managed_va, n);
	*p = (CUdeviceptr)m;
	return CUDA_SUCCESS;
}
FAKE_API CUresult cuMemPrefetchAsync_v2(CUdeviceptr d, size_t n, CUmemLocation loc,
					unsigned flags, CUstream s)
{
	if (fake_fail("cuMemPrefetchAsync_v2"))
		return CUDA_ERROR_INVALID_VALUE;
	fake_log("prefetch %#llx %zu %s", (unsigned long long)d, n,
		 loc.type == CU_MEM_LOCATION_TYPE_DEVICE ? "gpu" : "cpu");
	return CUDA_SUCCESS;
}
/*
 * Virtual memory management (the agent's map arena, ptx_arena.c): an
 * address range is a PROT_NONE mapping, mapping memory into it makes it
 * read-write (zeroed).  As the driver behaves on the H200: a reservation
 * gets the address asked for only while no context is active (else one of
 * its own); FAKECUDA_VMM=elsewhere always gives one of its own,
 * =unsupported fails every call (CUDA_ERROR_NOT_SUPPORTED).  Logged as
 * "vmm reserve ADDR LEN", "vmm map ADDR LEN", "vmm free ADDR LEN".
 */
static int fake_vmm(void)
{
	const char *v = getenv("FAKECUDA_VMM");
	return !v ? 0 : !strcmp(v, "elsewhere") ? 1 : !strcmp(v, "unsupported") ? 2 : 0;
}
FAKE_API CUresult cuMemAddressReserve(CUdeviceptr *p, size_t n, size_t align, CUdeviceptr addr,
				      unsigned long long flags)
{
	if (fake_vmm() == 2)
		return CUDA_ERROR_NOT_SUPPORTED;
	int anywhere = fake_vmm() == 1 || !addr ||
		       __atomic_load_n(&fake_primary_refs, __ATOMIC_RELAXED) > 0;
	void *m = anywhere ? MAP_FAILED
			   : mmap((void *)(uintptr_t)addr, n, PROT_NONE,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE | MAP_NORESERVE,
				  -1, 0);
	if (m == MAP_FAILED) /* taken (or not asked for): elsewhere */
		m = mmap(NULL, n, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*p = (CUdeviceptr)m;
	fake_log("vmm reserve %#llx %zu", (unsigned long long)*p, n);
	return CUDA_SUCCESS;
}
FAKE_API CUresult cuMemAddressFree(CUdeviceptr p, size_t n)
{
	fake_log("vmm free %#llx %zu", (unsigned long long)p, n);
	return munmap((void *)p, n) ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}
FAKE_API CUresult cuMemGetAllocationGranularity(size_t *g, const CUmemAllocationProp *prop,
						CUmemAllocationGranularity_flags o)
{
	*g = 2u << 20;
	return fake_vmm() == 2 ? CUDA_ERROR_NOT_SUPPORTED : CUDA_SUCCESS;
}
/* A handle is its size (memory appears where it is mapped). */
FAKE_API CUresult cuMemCreate(CUmemGenericAllocationHandle *h, size_t n,
			      const CUmemAllocationProp *prop, unsigned long long flags)
{
	if (fake_vmm() == 2)
		return CUDA_ERROR_NOT_SUPPORTED;
	if (fake_fail("cuMemCreate"))
		return CUDA_ERROR_OUT_OF_MEMORY;
	*h = n;
	return CUDA_SUCCESS;
}
FAKE_API CUresult cuMemRelease(CUmemGenericAllocationHandle h) { return CUDA_SUCCESS; }
FAKE_API CUresult cuMemMap(CUdeviceptr p, size_t n, size_t off, CUmemGenericAllocationHandle h,
			   unsigned long long flags)
{
	if (n + off > h || mprotect((void *)p, n, PROT_READ | PROT_WRITE))
		return CUDA_ERROR_INVALID_VALUE;
	fake_log("vmm map %#llx %zu", (unsigned long long)p, n);
	return CUDA_SUCCESS;
}
FAKE_API CUresult cuMemUnmap(CUdeviceptr p, size_t n)
{
	return mprotect((void *)p, n, PROT_NONE) ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}
FAKE_API CUresult cuMemSetAccess(CUdeviceptr p, size_t n, const CUmemAccessDesc *d, size_t cnt)
{
	return fake_fail("cuMemSetAccess") ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}
FAKE_API CUresult cuCtxGetDevice(CUdevice *d) { *d = 0; return CUDA_SUCCESS; }
FAKE_API CUresult cuMemAllocHost_v2(void **p, size_t n) { return cuMemHostAlloc(p, n, 0); }
FAKE_API CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *s, size_t n, CUstream st) { return cuMemcpyHtoD_v2(d, s, n); }
FAKE_API CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr d, const void *s, size_t n, CUstream st) { return cuMemcpyHtoD_v2(d, s, n); }
FAKE_API CUresult cuMemcpyDtoD_v2(CUdeviceptr d, CUdeviceptr s, size_t n) { memmove((void *)d, (void *)s, n); return CUDA_SUCCESS; }
FAKE_API CUresult cuMemcpy(CUdeviceptr d, CUdeviceptr s, size_t n) { memmove((void *)d, (void *)s, n); return CUDA_SUCCESS; }
FAKE_API CUresult cuMemcpy2D_v2(const CUDA_MEMCPY2D *c)
{
	for (size_t y = 0; y < c->Height; y++) /* host or device pointers: both host memory here */
		memcpy((char *)(c->dstMemoryType == CU_MEMORYTYPE_HOST ? (uintptr_t)c->dstHost : c->dstDevice) + c->dstXInBytes + (c->dstY + y) * c->dstPitch,
		       (const char *)(c->srcMemoryType == CU_MEMORYTYPE_HOST ? (uintptr_t)c->srcHost : c->srcDevice) + c->srcXInBytes + (c->srcY + y) * c->srcPitch,
		       c->WidthInBytes);
	return CUDA_SUCCESS;
}
FAKE_API CUresult cuMemsetD32_v2(CUdeviceptr d, unsigned v, size_t n) { for (size_t i = 0; i < n; i++) memcpy((char *)d + 4 * i, &v, 4); return CUDA_SUCCESS; }
FAKE_API CUresult cuStreamSynchronize(CUstream s) { return CUDA_SUCCESS; }
/* Scheduling (test_sched.c): the fake's work completes at once, so a host
 * function runs at once; stream creation logs the priority it got. */
FAKE_API CUresult cuLaunchHostFunc(CUstream s, CUhostFn fn, void *arg) { fake_log("hostfunc"); fn(arg); return CUDA_SUCCESS; }
FAKE_API CUresult cuLaunchHostFunc_ptsz(CUstream s, CUhostFn fn, void *arg) { return cuLaunchHostFunc(s, fn, arg); }
FAKE_API CUresult cuStreamCreateWithPriority(CUstream *s, unsigned flags, int prio)
{
	static int n;
	if (fake_fail("cuStreamCreate"))
		return CUDA_ERROR_OUT_OF_MEMORY;
	fake_log("stream prio %d", prio);
	*s = (CUstream)(uintptr_t)(0x1000 + ++n);
	return CUDA_SUCCESS;
}
FAKE_API CUresult cuStreamCreate(CUstream *s, unsigned flags) { return cuStreamCreateWithPriority(s, flags, 0); }
FAKE_API CUresult cuStreamDestroy_v2(CUstream s) { return CUDA_SUCCESS; }
FAKE_API CUresult cuStreamSynchronize_ptsz(CUstream s) { return CUDA_SUCCESS; }
FAKE_API CUresult cuEventSynchronize(CUevent e) { return CUDA_SUCCESS; }
FAKE_API CUresult cuFuncGetName(const char **name, CUfunction f) { *name = ((struct CUfunc_st *)f)->name; return CUDA_SUCCESS; }

FAKE_API CUresult cuGetErrorString(CUresult r, const char **s) { *s = "fake error"; return CUDA_SUCCESS; }
FAKE_API CUresult cuGetErrorName(CUresult r, const char **s) { *s = r == CUDA_ERROR_INVALID_PTX ? "CUDA_ERROR_INVALID_PTX" : "CUDA_ERROR_FAKE"; return CUDA_SUCCESS; }

/* dlsym(RTLD_NEXT) from this library: objects after it define no cuInit,
 * so NULL, also with the agent's dlsym in between (test of its RTLD_NEXT). */
FAKE_API void *fakecuda_next_cuinit(void)
{
	/* volatile: no tail call, dlsym must see this library as its caller */
	void *volatile sym = dlsym(RTLD_NEXT, "cuInit");
	return sym;
}

static const struct {
	const char *name;
	void *fn, *ptsz;
} fake_procs[] = {
	{"cuInit", (void *)cuInit, NULL},
	{"cuModuleLoadData", (void *)cuModuleLoadData, NULL},
	{"cuModuleLoadDataEx", (void *)cuModuleLoadDataEx, NULL},
	{"cuModuleGetFunction", (void *)cuModuleGetFunction, NULL},
	{"cuModuleUnload", (void *)cuModuleUnload, NULL},
	{"cuLibraryLoadData", (void *)cuLibraryLoadData, NULL},
	{"cuLibraryGetKernel", (void *)cuLibraryGetKernel, NULL},
	{"cuLibraryGetModule", (void *)cuLibraryGetModule, NULL},
	{"cuKernelGetFunction", (void *)cuKernelGetFunction, NULL},
	{"cuLaunchKernel", (void *)fake_cuLaunchKernel, (void *)cuLaunchKernel_ptsz},
	{"cuLaunchKernelEx", (void *)fake_cuLaunchKernelEx, NULL},
	{"cuCtxGetCurrent", (void *)cuCtxGetCurrent, NULL},
	{"cuMemAlloc", (void *)cuMemAlloc_v2, NULL},
	{"cuMemFree", (void *)cuMemFree_v2, NULL},
	{"cuMemcpyHtoD", (void *)cuMemcpyHtoD_v2, NULL},
	{"cuMemcpyHtoDAsync", (void *)cuMemcpyHtoDAsync_v2, (void *)cuMemcpyHtoDAsync_v2_ptsz},
	{"cuStreamSynchronize", (void *)cuStreamSynchronize, (void *)cuStreamSynchronize_ptsz},
};

FAKE_API CUresult fake_get_proc_v2(const char *sym, void **pfn, int ver, cuuint64_t flags,
				   CUdriverProcAddressQueryResult *st) __asm__("cuGetProcAddress_v2");
CUresult fake_get_proc_v2(const char *sym, void **pfn, int ver, cuuint64_t flags,
			  CUdriverProcAddressQueryResult *st)
{
	for (size_t i = 0; i < sizeof(fake_procs) / sizeof(fake_procs[0]); i++)
		if (!strcmp(sym, fake_procs[i].name)) {
			*pfn = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) &&
					       fake_procs[i].ptsz
				       ? fake_procs[i].ptsz
				       : fake_procs[i].fn;
			if (st)
				*st = CU_GET_PROC_ADDRESS_SUCCESS;
			return CUDA_SUCCESS;
		}
	*pfn = NULL;
	if (st)
		*st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	return CUDA_ERROR_NOT_FOUND;
}
FAKE_API CUresult fake_get_proc(const char *sym, void **pfn, int ver, cuuint64_t flags) __asm__("cuGetProcAddress");
CUresult fake_get_proc(const char *sym, void **pfn, int ver, cuuint64_t flags)
{
	return fake_get_proc_v2(sym, pfn, ver, flags, NULL);
}
