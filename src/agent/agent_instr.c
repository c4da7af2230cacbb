/* SPDX-License-Identifier: MIT */
/*
 * agent_instr.c - lazy instrumentation and the device side of the session.
 *
 * At the first launch of a kernel that a GPU program targets: extract its
 * module's PTX (fatbins: the best PTX for the device, parsed in process),
 * inject the probes of the programs that target it, load the result in the
 * current context and launch that function instead from then on.  Results
 * are cached by content hash (module PTX, kernel, probe code), so a module
 * loaded twice is compiled once.  Any failure: one notice naming the kernel
 * and the reason, and the kernel runs unchanged (fail-open).
 *
 * Device maps are created once, on the first GPU use, in the device's
 * primary context (which is what cudart uses; another current context
 * makes instrumentation fail open).  A background thread mirrors them into
 * the session's host maps per the session contract (session.h): after
 * redirected launches and every AGENT_MIRROR_MS, and once more at exit; it
 * drains the device ring buffers every AGENT_RING_MS, so that a kernel
 * that writes records faster than that finds room (a full ring drops).
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "agent_impl.h"
#include "agent_mem_signal.h"
#include "cuda/fatbin.h"
#include "ptx/ptx_buf.h"
#include "ptx/ptx_cache.h"
#include "ptx/ptx_inject.h"
#include "ptx/ptx_rt.h"
#include "ptx/ptx_wrap.h"

enum { AGENT_MIRROR_MS = 100, AGENT_RING_MS = 2, AGENT_MAX_MAPS = SESSION_MAX_MAPS };

typedef CUresult (*ctx_get_current_fn)(CUcontext *);
typedef CUresult (*capture_mode_fn)(CUstreamCaptureMode *);

static pthread_mutex_t agent_gpu_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	int tried;
	struct ptx_rt *rt;              /* NULL: GPU side unavailable */
	struct ptx_rt_map *maps[AGENT_MAX_MAPS];
	struct ptx_map_ref refs[AGENT_MAX_MAPS];
	int mirrored[AGENT_MAX_MAPS];   /* referenced by a GPU program */
	ctx_get_current_fn ctx_get_current;
	capture_mode_fn capture_mode;
	pthread_t mirror_thread;
	int mirror_running;
	pid_t mirror_pid;               /* a forked child has no mirror thread */
	int dirty;
	int stop;
} agent_gpu;

struct agent_cached {
	struct agent_cached *next;
	uint64_t hash;
	CUcontext ctx;
	CUfunction fn;
	struct ptx_launch_param lid; /* fn's launch id parameter */
	/* made ahead of the first launch (agent_ahead.c) and not yet claimed by
	 * a launch: what the launch says then (the JIT time, what the module
	 * cache did, or why it failed) */
	int ahead;
	double jit;
	const char *cache;
	char *msg;
};
static struct agent_cached *agent_cache;

/* Compiles ahead from process start (agent_ahead.c), before any context
 * exists: GPU 0 described without one, and the device maps' references as
 * they will be. */
static struct {
	int tried;
	struct ptx_rt *rt;
	struct ptx_map_ref refs[AGENT_MAX_MAPS];
} agent_noctx;

/* GPU 0 as the choice of PTX and the module cache's tag see it: the device
 * side's, or, before it exists, the description the compiles ahead use. */
static const struct ptx_rt *agent_gpu0(void)
{
	return agent_gpu.rt ? agent_gpu.rt : agent_noctx.rt;
}

/* The maps' references the probes are translated with (the code reads the
 * addresses from the module's map table: only the layout matters). */
static const struct ptx_map_ref *agent_refs(void)
{
	return agent_gpu.rt ? agent_gpu.refs : agent_noctx.refs;
}

static uint64_t agent_hash(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull; /* FNV-1a */
	return h;
}

/* ---- mirroring (session contract, points 3 and 4) -------------------- */

static int agent_forward_record(void *arg, const void *data, size_t size)
{
	map_ringbuf_output(arg, data, size, 0); /* host full: counted as a host drop */
	return 0;
}

/* The ring buffers' records only (from pinned host memory: no driver
 * call), or every map with the drop counts (copies from the device). */
enum agent_mirror_what { AGENT_RINGS, AGENT_ALL };

static void agent_mirror_some(enum agent_mirror_what what)
{
	struct session *s = agent_session;
	struct err e = {{0}};
	for (size_t i = 0; i < s->obj->map_cnt && i < AGENT_MAX_MAPS; i++) {
		struct ptx_rt_map *dm = agent_gpu.maps[i];
		struct map *host = s->obj->maps[i].map;
		if (!dm || !agent_gpu.mirrored[i])
			continue;
		if (map_get_def(host)->type == MAP_TYPE_RINGBUF) {
			uint64_t drops;
			ptx_rt_ringbuf_poll(dm, agent_forward_record, host);
			if (what != AGENT_RINGS && !ptx_rt_map_drops(dm, &drops, &e))
				__atomic_store_n(&s->hdr->status.rb_drops[i], drops, __ATOMIC_RELAXED);
		} else if (what == AGENT_ALL && ptx_rt_map_sync_to_host(dm, host, &e)) {
			static int told;
			if (!told++)
				agent_notice("map '%s' not mirrored: %s", s->obj->maps[i].def.name,
					     e.msg);
		}
	}
}

/* Every map; the memory runtime's device signal is read around it. */
static void agent_mirror(void)
{
	agent_mem_signal_snapshot();
	agent_mirror_some(AGENT_ALL);
}

static void *agent_mirror_main(void *arg)
{
	/* relaxed capture mode: our copies must not break another thread's
	 * stream capture (nor be refused by it) */
	CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
	if (agent_gpu.capture_mode)
		agent_gpu.capture_mode(&mode);
	agent_gpu.rt->cu->ctx_set_current(agent_gpu.rt->ctx);
	for (;;) {
		struct timespec ts = {0, AGENT_RING_MS * 1000000L};
		int waited = 0;
		while (!__atomic_load_n(&agent_gpu.stop, __ATOMIC_ACQUIRE) &&
		       !__atomic_load_n(&agent_gpu.dirty, __ATOMIC_ACQUIRE) &&
		       waited < AGENT_MIRROR_MS) {
			nanosleep(&ts, NULL);
			waited += AGENT_RING_MS;
			/* a drain never waits for an instrumentation in progress */
			if (!pthread_mutex_trylock(&agent_gpu_lock)) {
				agent_mirror_some(AGENT_RINGS);
				pthread_mutex_unlock(&agent_gpu_lock);
			}
		}
		if (__atomic_load_n(&agent_gpu.stop, __ATOMIC_ACQUIRE))
			break;
		__atomic_store_n(&agent_gpu.dirty, 0, __ATOMIC_RELEASE);
		pthread_mutex_lock(&agent_gpu_lock);
		agent_mirror();
		pthread_mutex_unlock(&agent_gpu_lock);
	}
	return NULL;
}

/* Stop the mirror thread; 0 if there was none (or it belongs to a parent). */
static int agent_mirror_stop(void)
{
	if (!agent_gpu.mirror_running || agent_gpu.mirror_pid != getpid())
		return 0;
	__atomic_store_n(&agent_gpu.stop, 1, __ATOMIC_RELEASE);
	pthread_join(agent_gpu.mirror_thread, NULL);
	agent_gpu.mirror_running = 0;
	return 1;
}

/*
 * The application unloads a module or tears its context down.  cudart does
 * both from its atexit handler, which runs before this library's destructor
 * and before the driver shuts down: by the destructor, the driver answers
 * CUDA_ERROR_DEINITIALIZED and the last kernels' counts would be lost.  So
 * the maps are copied here, and at a teardown for the last time (the device
 * maps live in the primary context, which a reset or the exit destroys).
 */
void agent_before_unload(int teardown)
{
	if (teardown)
		agent_cupti_flush();
	if (!agent_gpu.mirror_running || agent_gpu.mirror_pid != getpid())
		return;
	if (teardown)
		agent_mirror_stop();
	pthread_mutex_lock(&agent_gpu_lock);
	agent_mirror();
	pthread_mutex_unlock(&agent_gpu_lock);
}

static void agent_gpu_atexit(void)
{
	agent_before_unload(1);
}

__attribute__((destructor)) static void agent_gpu_fini(void)
{
	if (!agent_mirror_stop())
		return;
	/* the last kernels' results: the application has normally synchronized
	 * before exiting; the copies wait for the rest */
	CUcontext cur = NULL;
	if (agent_gpu.ctx_get_current)
		agent_gpu.ctx_get_current(&cur);
	if (!cur)
		agent_gpu.rt->cu->ctx_set_current(agent_gpu.rt->ctx);
	agent_mirror();
}

/* ---- the GPU side, once ---------------------------------------------- */

static void agent_mark_mirrored(const struct prog *p)
{
	for (size_t i = 0; i < p->insn_cnt; i++) {
		const struct isa_insn *in = &p->insns[i];
		if (in->code == 0x18 &&
		    (in->src == ISA_PSEUDO_MAP_FD || in->src == ISA_PSEUDO_MAP_VALUE) &&
		    in->imm >= 0 && in->imm < AGENT_MAX_MAPS)
			agent_gpu.mirrored[in->imm] = 1;
	}
}

/* Called with agent_gpu_lock held: 0 when the device side is ready. */
static int agent_gpu_init(struct err *e)
{
	if (agent_gpu.tried)
		return agent_gpu.rt ? 0 : err_set(e, ENODEV, "GPU side unavailable (see above)");
	agent_gpu.tried = 1;
	agent_gpu.ctx_get_current = (ctx_get_current_fn)agent_real_driver("cuCtxGetCurrent");
	agent_gpu.capture_mode =
		(capture_mode_fn)agent_real_driver("cuThreadExchangeStreamCaptureMode");
	CUcontext app = NULL;
	if (agent_gpu.ctx_get_current)
		agent_gpu.ctx_get_current(&app);
	struct ptx_rt *rt;
	int err = ptx_rt_open(0, &rt, e);
	if (err) {
		agent_notice("device probes disabled, kernels run unchanged: %s", e->msg);
		return err;
	}
	if (app && app != rt->ctx) {
		rt->cu->ctx_set_current(app);
		ptx_rt_close(rt);
		agent_notice("device probes disabled, kernels run unchanged: the application's "
			     "context is not GPU 0's primary context");
		return err_set(e, ENOTSUP, "not the primary context");
	}
	struct session *s = agent_session;
	for (size_t i = 0; i < s->obj->map_cnt && !err; i++) {
		const struct object_map *om = &s->obj->maps[i];
		if (i >= AGENT_MAX_MAPS) {
			err = err_set(e, E2BIG, "too many maps");
			break;
		}
		if ((err = ptx_rt_map_create(rt, &om->def, &agent_gpu.maps[i], e))) {
			err_prefix(e, "map '%s': ", om->def.name);
			break;
		}
		agent_gpu.refs[i] = ptx_rt_map_ref(agent_gpu.maps[i]);
		if (om->init) /* global data: the session's current value */
			err = ptx_rt_map_array_set(agent_gpu.maps[i], 0, map_array_base(om->map), e);
	}
	long signal_map = -1;
	if (!err) /* while the primary context is current */
		signal_map = agent_mem_signal_bind(agent_gpu.maps);
	if (!app)
		rt->cu->ctx_set_current(NULL);
	if (err) {
		for (size_t i = 0; i < AGENT_MAX_MAPS; i++)
			ptx_rt_map_free(agent_gpu.maps[i]), agent_gpu.maps[i] = NULL;
		ptx_rt_close(rt);
		agent_notice("device probes disabled, kernels run unchanged: %s", e->msg);
		return err;
	}
	for (size_t i = 0; i < agent_gpu_prog_cnt; i++)
		agent_mark_mirrored(agent_gpu_progs[i]);
	if (signal_map >= 0) /* the memory runtime reads its part itself */
		agent_gpu.mirrored[signal_map] = 0;
	agent_gpu.rt = rt;
	agent_gpu.mirror_pid = getpid();
	agent_gpu.mirror_running = !pthread_create(&agent_gpu.mirror_thread, NULL,
						   agent_mirror_main, NULL);
	/* exit() runs atexit handlers newest first, all before any library
	 * destructor: registered now (after cudart registered its teardown at
	 * the application's first CUDA call), the last copy runs while the
	 * driver and the context are still alive; libcuda's own destructor
	 * would otherwise shut the driver down before agent_gpu_fini. */
	if (agent_gpu.mirror_running)
		atexit(agent_gpu_atexit);
	return 0;
}

/* ---- building the instrumented module ---------------------------------- */

int agent_next_entry(const char **at, char *name, size_t len)
{
	for (const char *p; (p = strstr(*at, ".entry ")); *at = p + 7) {
		const char *q = p + 7;
		while (*q == ' ' || *q == '\t')
			q++;
		size_t n = strcspn(q, "( \t\r\n");
		if (!n || !q[n] || n >= len)
			continue;
		memcpy(name, q, n);
		name[n] = '\0';
		*at = q + n;
		return 1;
	}
	return 0;
}

/* Does ptx define kernel name? */
static int agent_defines(const char *ptx, const char *name)
{
	char found[512];
	for (const char *at = ptx; agent_next_entry(&at, found, sizeof(found));)
		if (!strcmp(found, name))
			return 1;
	return 0;
}

static const char *agent_module_ptx(struct agent_module *m, const char *kernel, struct err *e)
{
	if (m->kind == AGENT_IMAGE_LINKED) {
		for (size_t i = 0; i < m->input_cnt; i++)
			if (agent_defines(m->inputs[i], kernel))
				return m->inputs[i];
		err_set(e, ENOENT, "no PTX input of the link defines it");
		return NULL;
	}
	if (m->ptx)
		return m->ptx;
	unsigned sm = (unsigned)(agent_gpu0()->cc_major * 10 + agent_gpu0()->cc_minor);
	size_t len;
	switch (m->kind) {
	case AGENT_IMAGE_PTX:
		return m->ptx = strdup(m->image);
	case AGENT_IMAGE_WRAPPER:
	case AGENT_IMAGE_FATBIN:
		if (fatbin_best_ptx(m->image,
				    m->kind == AGENT_IMAGE_WRAPPER ? FATBIN_LEN_UNKNOWN : m->image_len,
				    sm, &m->ptx, &len, NULL, e))
			return NULL;
		return m->ptx;
	case AGENT_IMAGE_CUBIN:
		err_set(e, ENOENT, "no PTX in the image (SASS-only cubin); for NVRTC-compiled "
			"kernels (CuPy), compile to PTX (CUPY_COMPILE_WITH_PTX=1)");
		return NULL;
	default:
		err_set(e, ENOENT, "no PTX captured (module loaded from a file)");
		return NULL;
	}
}

/*
 * What the programs targeting kernel (warp mode) add to its module: entry
 * and exit programs inline (ptx_emit_probe_inline: no call per warp), one
 * block per program in site[AGENT_ENTRY] / [AGENT_EXIT], block_entry and
 * block_exit programs likewise; mem programs in both forms
 * (ptx_emit_mem_probe): their blocks in mem_code, pasted at each access
 * when small enough (mem_inline_max, agent_mem_inline_max), else the probe
 * functions in mem_func, called at each access (mem_sym: through gxa_mem
 * when there are several); the device runtime functions they use, and the
 * callees, in *extra.  NULL / "" for a kind no program has.
 */
/* Where inline probe code goes (ptx_inject_opts' *_code). */
enum { AGENT_ENTRY, AGENT_EXIT, AGENT_BLOCK_ENTRY, AGENT_BLOCK_EXIT, AGENT_MEM, AGENT_SITES };

struct agent_probes {
	char *extra, *site[AGENT_SITES]; /* inline code per site; NULL: none */
	char *mem_func;    /* the mem probe functions (called form) */
	char mem_sym[160]; /* the function every access calls; "": no mem probe */
	size_t mem_inline_max; /* ptx_inject_opts' */
	int linked; /* extra declares runtime functions, to be linked (ptx_rt_module_link) */
	/* the block-local arrays the kernel's programs name (ptx_inject_opts) */
	struct ptx_block_array block_arrays[AGENT_MAX_MAPS];
	char block_syms[AGENT_MAX_MAPS][PTX_BLOCK_ARRAY_SYM_LEN];
	size_t n_block_arrays;
	uint32_t block_bytes; /* their shared memory, in all */
};

/* Does p name map k (LD_IMM64 of the map or of its value)? */
static int agent_prog_uses_map(const struct prog *p, size_t k)
{
	for (size_t i = 0; i + 1 < p->insn_cnt; i++) {
		const struct isa_insn *in = &p->insns[i];
		if (in->code != ISA_OPC_LD_IMM64)
			continue;
		if ((in->src == ISA_PSEUDO_MAP_FD || in->src == ISA_PSEUDO_MAP_VALUE) &&
		    (size_t)in->imm == k)
			return 1;
		i++;
	}
	return 0;
}

/* Into pr, the block-local arrays that the programs on kernel name. */
static void agent_block_arrays(const char *kernel, const char *base, struct agent_probes *pr)
{
	for (size_t k = 0; k < agent_session->obj->map_cnt && k < AGENT_MAX_MAPS; k++) {
		const struct ptx_map_ref *r = &agent_refs()[k];
		int used = 0;
		if (r->type != MAP_TYPE_GPU_BLOCK_ARRAY)
			continue;
		for (size_t i = 0; i < agent_gpu_prog_cnt && !used; i++)
			used = agent_kernel_targeted_by(agent_gpu_progs[i], kernel, base) &&
			       agent_prog_uses_map(agent_gpu_progs[i], k);
		if (!used)
			continue;
		size_t n = pr->n_block_arrays++;
		ptx_block_array_sym(k, pr->block_syms[n], sizeof(pr->block_syms[n]));
		pr->block_arrays[n].sym = pr->block_syms[n];
		pr->block_arrays[n].bytes = r->max_entries * r->value_stride;
		pr->block_bytes += pr->block_arrays[n].bytes;
	}
}

/* The site of an inline probe kind (not mem). */
static int agent_site_of(enum ptx_probe_kind kind)
{
	return kind == PTX_PROBE_EXIT          ? AGENT_EXIT
	       : kind == PTX_PROBE_BLOCK_ENTRY ? AGENT_BLOCK_ENTRY
	       : kind == PTX_PROBE_BLOCK_EXIT  ? AGENT_BLOCK_EXIT
					       : AGENT_ENTRY;
}

static void agent_probes_free(struct agent_probes *pr)
{
	free(pr->extra);
	free(pr->mem_func);
	for (int i = 0; i < AGENT_SITES; i++)
		free(pr->site[i]);
	*pr = (struct agent_probes){0};
}

/* The instrumented module's table of the device maps' addresses (ptx_emit_
 * opts.map_table): the code reads them from there, so that it does not
 * depend on where the maps are and the module cache can keep it. */
#define AGENT_MAP_TABLE "gx_map_table"

static size_t agent_map_cnt(void)
{
	size_t n = agent_session->obj->map_cnt;
	return n < AGENT_MAX_MAPS ? (n ? n : 1) : AGENT_MAX_MAPS;
}

/* Fill mod's map table (every module with probes has one): the code must
 * not run before. */
static int agent_map_table_fill(CUmodule mod, struct err *e)
{
	const struct cu_driver *cu = agent_gpu.rt->cu;
	uint64_t table[2 * AGENT_MAX_MAPS] = {0};
	CUdeviceptr d;
	size_t bytes = 0, n = agent_map_cnt();
	CUresult r = cu->module_get_global(&d, &bytes, mod, AGENT_MAP_TABLE);
	if (r != CUDA_SUCCESS)
		return cu_err(cu, e, r, "the instrumented module's map table");
	for (size_t i = 0; i < n && i < agent_session->obj->map_cnt; i++) {
		table[2 * i] = agent_gpu.refs[i].map;
		table[2 * i + 1] = agent_gpu.refs[i].value;
	}
	if (bytes < 16 * n)
		return err_set(e, EINVAL, "the instrumented module's map table is %zu bytes", bytes);
	r = cu->memcpy_htod(d, table, 16 * n);
	return r == CUDA_SUCCESS ? 0 : cu_err(cu, e, r, "filling the map table");
}

/*
 * How many bytes of a mem probe's PTX a kernel may get pasted, one copy per
 * access (ptx_inject_opts.mem_inline_max), before its accesses call the
 * probe instead: AGENT_MEM_INLINE_MAX, measured (docs/ptx-inject.md, "Mem
 * probes inline"); none for a program with local memory (ptxas gives each
 * copy a frame of its own).  GPUEXT_PTX_MEM_INLINE=1 pastes at every
 * access whatever the size, =0 calls everywhere, to compare both in one
 * build.
 */
#define AGENT_MEM_INLINE_MAX (128u << 10)

static size_t agent_mem_inline_max(int local)
{
	const char *v = getenv("GPUEXT_PTX_MEM_INLINE");
	if (v && !strcmp(v, "1"))
		return SIZE_MAX;
	if (v && !strcmp(v, "0"))
		return 0;
	return local ? 0 : AGENT_MEM_INLINE_MAX;
}

static int agent_build_probes(const char *kernel, int link, struct agent_probes *pr,
			      struct err *e)
{
	struct ptx_buf code = {0}, site[AGENT_SITES] = {{0}}, b = {0}, func = {0};
	char mem_syms[16][128], base[256];
	int n_mem = 0, err = 0, mem_local = 0;

	*pr = (struct agent_probes){0};
	agent_demangle_base(kernel, base, sizeof(base));
	agent_block_arrays(kernel, base, pr);
	for (size_t i = 0; i < agent_gpu_prog_cnt && !err; i++) {
		struct prog *p = agent_gpu_progs[i];
		if (!agent_kernel_targeted_by(p, kernel, base))
			continue;
		/* inline probes read the launch id the injector declares */
		struct ptx_emit_opts o = {.maps = agent_refs(), .map_table = AGENT_MAP_TABLE,
					  .launch_id = PTX_LAUNCH_ID_REG};
		enum ptx_probe_kind kind = ptx_probe_kind_of(p->type);
		if (kind != PTX_PROBE_MEM) {
			err = ptx_emit_probe_inline(&code, &site[agent_site_of(kind)], p, &o, kind, e);
		} else if (n_mem < 16) {
			int local = 0;
			err = ptx_emit_mem_probe(&code, &func, &site[AGENT_MEM], p, &o,
						 mem_syms[n_mem], &local, e);
			n_mem += !err;
			mem_local |= local;
		}
		if (err)
			err_prefix(e, "program '%s': ", p->name);
	}
	if (n_mem > 1) { /* one call per access: gxa_mem calls each program's */
		ptx_buf_printf(&func, ".func gxa_mem(.param .b64 gxa_a, .param .b32 gxa_s, "
				      ".param .b32 gxa_k)\n{\n\t.reg .b64 %%gxa_a;\n"
				      "\t.reg .b32 %%gxa_s, %%gxa_k;\n"
				      "\tld.param.b64 %%gxa_a, [gxa_a];\n"
				      "\tld.param.b32 %%gxa_s, [gxa_s];\n"
				      "\tld.param.b32 %%gxa_k, [gxa_k];\n");
		for (int i = 0; i < n_mem; i++)
			ptx_buf_printf(&func, "\tcall %s_probe, (%%gxa_a, %%gxa_s, %%gxa_k);\n",
				       mem_syms[i]);
		ptx_buf_printf(&func, "\tret;\n}\n");
	}
	pr->mem_inline_max = agent_mem_inline_max(mem_local);
	if (n_mem == 1)
		snprintf(pr->mem_sym, sizeof(pr->mem_sym), "%s_probe", mem_syms[0]);
	else if (n_mem)
		snprintf(pr->mem_sym, sizeof(pr->mem_sym), "gxa_mem");
	for (int i = 0; i < AGENT_SITES; i++)
		if (!err && site[i].failed)
			err = err_set(e, ENOMEM, "out of memory");
	if (!err && (code.failed || func.failed))
		err = err_set(e, ENOMEM, "out of memory");
	if (!err) {
		/* before them, the runtime functions that the programs, the probes
		 * and the inline blocks name: declared, to be linked from the
		 * prebuilt runtime, or their text, to be compiled with them */
		const char *texts[2 + AGENT_SITES] = {code.text ? code.text : "", func.text};
		for (int i = 0; i < AGENT_SITES; i++)
			texts[2 + i] = site[i].text;
		/* the maps' addresses, filled in at each load (agent_map_table_fill) */
		ptx_buf_printf(&b, ".const .align 8 .u64 %s[%zu];\n", AGENT_MAP_TABLE,
			       2 * agent_map_cnt());
		int declared = link ? ptx_emit_runtime_decls(&b, texts, 2 + AGENT_SITES) : -1;
		pr->linked = declared > 0;
		if (declared < 0) {
			ptx_buf_free(&b);
			ptx_buf_printf(&b, ".const .align 8 .u64 %s[%zu];\n", AGENT_MAP_TABLE,
				       2 * agent_map_cnt());
			ptx_emit_runtime_used(&b, texts, 2 + AGENT_SITES);
		}
		if (code.len)
			ptx_buf_append(&b, code.text, code.len);
		/* the sites did not fail (above): taking them gives their text */
		for (int i = 0; i < AGENT_SITES; i++)
			pr->site[i] = site[i].len ? ptx_buf_take(&site[i], NULL) : NULL;
		pr->mem_func = func.len ? ptx_buf_take(&func, NULL) : NULL;
		if (!(pr->extra = ptx_buf_take(&b, NULL)))
			err = err_set(e, ENOMEM, "out of memory");
	}
	ptx_buf_free(&code);
	ptx_buf_free(&func);
	for (int i = 0; i < AGENT_SITES; i++)
		ptx_buf_free(&site[i]);
	ptx_buf_free(&b);
	if (err)
		agent_probes_free(pr);
	return err;
}

/* Where a first launch's time goes (GPUEXT_AGENT_VERBOSE), in ms. */
struct agent_timing {
	double init;   /* the device side, once: context, device maps */
	double inject; /* PTX extraction, probe translation, parse, inject */
	double jit;    /* the driver's JIT compile (CU_JIT_WALL_TIME) */
	double load;   /* the rest of cuModuleLoadDataEx */
	const char *runtime; /* how the device runtime got in */
	const char *cache;   /* what the module cache did (ptx_cache.h) */
	char mem[96];        /* how mem probes got in: inline or called; "": none */
};

static double agent_ms_between(const struct timespec *t0, const struct timespec *t1)
{
	return (double)(t1->tv_sec - t0->tv_sec) * 1e3 + (double)(t1->tv_nsec - t0->tv_nsec) / 1e6;
}

static double agent_ms_since(const struct timespec *t0)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return agent_ms_between(t0, &t1);
}

/* GPUEXT_AGENT_NO_PROBES: the kernel goes through all of this with no probe
 * in it, the baseline of bench/gpu_overhead.sh (what the recompilation of
 * the kernel's PTX costs, apart from the probes). */
static int agent_no_probes(void)
{
	return getenv("GPUEXT_AGENT_NO_PROBES") != NULL;
}

/* GPUEXT_BLOCK_EXIT_COUNTED: block_exit programs find the block's last
 * exit with the shared counter even where the barrier would do
 * (ptx_inject_opts), to compare the two in one build
 * (bench/gpu_tools_overhead.sh). */
static int agent_block_exit_counted(void)
{
	return getenv("GPUEXT_BLOCK_EXIT_COUNTED") != NULL;
}

/* The JIT options of instrumented modules: GPUEXT_AGENT_JIT_OPT=0..4 (the
 * driver's optimization level, CU_JIT_OPTIMIZATION_LEVEL, default 4),
 * GPUEXT_AGENT_JIT_THREADS=N (CU_JIT_SPLIT_COMPILE: N threads, 0 all CPUs)
 * and GPUEXT_AGENT_JIT_PIC=0|1 (CU_JIT_POSITION_INDEPENDENT_CODE); unset or
 * invalid: the driver's defaults. */
static struct ptx_rt_jit agent_jit_opts(void)
{
	const char *o = getenv("GPUEXT_AGENT_JIT_OPT"), *t = getenv("GPUEXT_AGENT_JIT_THREADS"),
		   *pic = getenv("GPUEXT_AGENT_JIT_PIC");
	struct ptx_rt_jit j = {.opt_level = -1, .threads = -1, .pic = -1};
	if (pic && (pic[0] == '0' || pic[0] == '1') && !pic[1])
		j.pic = pic[0] - '0';
	if (o && o[0] >= '0' && o[0] <= '4' && !o[1])
		j.opt_level = o[0] - '0';
	if (t && *t && strspn(t, "0123456789") == strlen(t) && strlen(t) < 4)
		j.threads = atoi(t);
	return j;
}

/* What a cubin depends on besides its PTX (the cache entry's tag). */
static void agent_cache_tag(int linked, const struct ptx_rt_jit *jit, char *tag, size_t len)
{
	size_t fb_len = 0;
	const void *fb = linked ? ptx_rt_fatbin(&fb_len) : NULL;
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < fb_len; i++) /* the prebuilt runtime linked in */
		h = (h ^ ((const unsigned char *)fb)[i]) * 0x100000001b3ull;
	snprintf(tag, len, "gpuext module cache 1: sm_%d%d, driver %d, O%d, threads %d, pic %d, "
		 "runtime %s %016llx", agent_gpu0()->cc_major, agent_gpu0()->cc_minor,
		 agent_gpu0()->cu->version, jit->opt_level, jit->threads, jit->pic,
		 linked ? "linked" : "none", (unsigned long long)h);
}

/*
 * Turn instrumented PTX into a loaded module.  Linked with the prebuilt
 * runtime (linked): the cubin from the module cache when it has one for
 * exactly this PTX, GPU, driver and JIT options; else compiled by the
 * driver's JIT linker and stored there.  A cache entry that is not valid, or
 * that the driver refuses, is named once and compiled over.
 */
static int agent_jit_load(const char *text, int linked, CUmodule *mod, struct agent_timing *tm,
			  struct err *e)
{
	struct ptx_rt *rt = agent_gpu.rt;
	char dir[3800], tag[200];
	struct ptx_rt_jit jit = agent_jit_opts();
	int err;
	float jit_ms = 0;

	/* No device side yet: a compile ahead with no context, into a
	 * context-independent library (agent_compile_ahead_noctx); with one,
	 * such a library's module in the current context, when there is one
	 * for this text. */
	*mod = NULL;
	if (!rt) {
		if (linked)
			return err_set(e, ENOTSUP, "a module linked with the runtime needs a context");
		double ms;
		if ((err = agent_ahead_lib_compile(text, &ms, e)))
			return err;
		tm->jit += ms;
		tm->cache = "library";
		return 0;
	}
	if (!linked && agent_ahead_lib_module(text, mod)) {
		tm->cache = "compiled ahead with no context";
		return 0;
	}

	/* A module without the prebuilt runtime goes to cuModuleLoadDataEx,
	 * which compiles it whole (the JIT linker compiles its inputs as
	 * relocatable code: gemm's kernel 1.27x slower on the H200) and keeps
	 * the result in the driver's own cache (ComputeCache), across runs too. */
	int off = ptx_cache_dir(dir, sizeof(dir));
	if (off || !linked) {
		tm->cache = off ? "cache off" : "driver cache";
		err = linked ? ptx_rt_module_link(rt, text, mod, &jit_ms, e)
			     : ptx_rt_module_load_timed(rt, text, mod, &jit_ms, e);
		tm->jit += jit_ms;
		return err;
	}
	agent_cache_tag(linked, &jit, tag, sizeof(tag));
	size_t len = 0;
	const char *why;
	void *cubin = ptx_cache_get(dir, tag, text, &len, &why);
	if (cubin) {
		err = ptx_rt_module_load_image(rt, cubin, mod, NULL);
		free(cubin);
		if (!err) {
			tm->cache = "cache hit";
			return 0;
		}
		why = "the driver refused it";
	}
	if (why) {
		char path[4096];
		ptx_cache_path(dir, tag, text, path, sizeof(path));
		agent_notice("module cache entry %s ignored (%s): compiled again", path, why);
	}
	if ((err = ptx_rt_compile(rt, text, linked, &jit, &cubin, &len, &jit_ms, e)))
		return err;
	tm->jit += jit_ms;
	err = ptx_rt_module_load_image(rt, cubin, mod, e);
	struct err pe = {{0}};
	if (err) {
		tm->cache = "cache miss";
	} else if (ptx_cache_put(dir, tag, text, cubin, len, &pe)) {
		tm->cache = "cache miss, not stored";
		static int told;
		if (!told++)
			agent_notice("module cache: %s", pe.msg);
	} else {
		tm->cache = "cache miss, stored";
	}
	free(cubin);
	return err;
}

/* Inject pr into kernel's module pm and load the result (linked with the
 * prebuilt runtime when pr says so); with no device side yet (compiles
 * ahead with no context) only compiled into the module cache, *mod NULL. */
static int agent_inject_load(const struct ptx_module *pm, const char *kernel,
			     const struct agent_probes *pr, CUmodule *mod,
			     struct ptx_launch_param *lid, struct agent_timing *tm, struct err *e)
{
	int bare = agent_no_probes(), inlined = 0;
	size_t sites = 0, regions = 0;
	struct ptx_inject_opts o = {.kernel = kernel,
				    .entry_code = bare ? NULL : pr->site[AGENT_ENTRY],
				    .exit_code = bare ? NULL : pr->site[AGENT_EXIT],
				    .block_entry_code = bare ? NULL : pr->site[AGENT_BLOCK_ENTRY],
				    .block_exit_code = bare ? NULL : pr->site[AGENT_BLOCK_EXIT],
				    .block_exit_counted = agent_block_exit_counted(),
				    .block_arrays = bare ? NULL : pr->block_arrays,
				    .n_block_arrays = bare ? 0 : pr->n_block_arrays,
				    .mem_sym = pr->mem_sym[0] && !bare ? pr->mem_sym : NULL,
				    .mem_code = bare ? NULL : pr->site[AGENT_MEM],
				    .mem_func = bare ? NULL : pr->mem_func,
				    .mem_inline_max = pr->mem_inline_max,
				    .mem_inlined = &inlined, .mem_sites = &sites,
				    .mem_regions = &regions,
				    .extra = bare ? NULL : pr->extra,
				    .min_version_major = 7, .min_version_minor = 8,
				    /* each instrumented kernel gets a module of its own:
				     * the driver need not compile the others */
				    .only_kernel = 1,
				    /* a variable it uses would be a second copy */
				    .no_variables = 1,
				    /* every instrumented kernel takes its launch's id */
				    .launch_param = lid};
	struct timespec t0;
	char *text = NULL;
	size_t len;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int err = ptx_inject(pm, &o, &text, &len, e);
	tm->inject += agent_ms_since(&t0);
	if (err)
		return err;
	if (o.mem_sym && inlined)
		snprintf(tm->mem, sizeof(tm->mem),
			 ", mem probes inline at %zu accesses in %zu regions (%zu bytes)", sites,
			 regions, strlen(o.mem_code ? o.mem_code : ""));
	else if (o.mem_sym)
		snprintf(tm->mem, sizeof(tm->mem), ", mem probes called at %zu accesses (%zu bytes)",
			 sites, strlen(o.mem_code ? o.mem_code : ""));
	double jit0 = tm->jit;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	err = agent_jit_load(text, pr->linked && !bare, mod, tm, e);
	if (err && !bare && pr->n_block_arrays)
		/* most likely the kernel's shared memory plus the arrays' is over
		 * the block's limit: say how much was added */
		err_prefix(e, "with %zu block-local array(s) of %u bytes and the block record's %u "
			   "added to its static shared memory: ", pr->n_block_arrays,
			   pr->block_bytes, PTX_BLOCK_RECORD_BYTES);
	if (!err && !bare && *mod && (err = agent_map_table_fill(*mod, e)))
		agent_gpu.rt->cu->module_unload(*mod);
	tm->load += agent_ms_since(&t0) - (tm->jit - jit0);
	free(text);
	return err;
}

/* Instrument kernel name of ptx in context ctx (current): the new function
 * or NULL (e set); *hit set to the cache entry when it was there already. */
static CUfunction agent_instrument_ptx(const char *ptx, const char *name, CUcontext ctx,
				       struct agent_cached **hit, struct ptx_launch_param *lid,
				       struct agent_timing *tm, struct err *e)
{
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	struct agent_probes pr;
	CUfunction fn = NULL;
	/* GPUEXT_AGENT_NO_LINK: the runtime's text compiled with every module
	 * (what linking saves, measured by bench/gpu_overhead.sh's callers);
	 * compiles with no context can link nothing: there too */
	if (agent_build_probes(name, !getenv("GPUEXT_AGENT_NO_LINK") && !agent_ahead_no_context(),
			       &pr, e))
		return NULL;
	uint64_t hash = agent_hash(agent_hash(0xcbf29ce484222325ull, ptx), name);
	hash = agent_hash(hash, pr.extra);
	for (int i = 0; i < AGENT_SITES; i++)
		hash = agent_hash(hash, pr.site[i] ? pr.site[i] : "-");
	hash = agent_hash(hash, pr.mem_func ? pr.mem_func : "-");
	char max[32];
	snprintf(max, sizeof(max), "%zu", pr.mem_inline_max);
	hash = agent_hash(hash, max);
	hash = agent_hash(hash, agent_no_probes() ? "bare" : "-");
	hash = agent_hash(hash, agent_block_exit_counted() ? "exit-counted" : "-");
	for (struct agent_cached *c = agent_cache; c; c = c->next)
		if (c->hash == hash && c->ctx == ctx) {
			agent_probes_free(&pr);
			*hit = c;
			*lid = c->lid;
			return c->fn;
		}
	struct ptx_module *pm = NULL;
	CUmodule mod = NULL;
	int err = ptx_parse(ptx, strlen(ptx), &pm, e);
	tm->inject = agent_ms_since(&t0);
	if (!err && (err = agent_inject_load(pm, name, &pr, &mod, lid, tm, e)) && pr.linked &&
	    !agent_no_probes()) {
		/* the prebuilt runtime has no code for this GPU, or anything
		 * else on the linked path failed: once more with the runtime
		 * functions' text compiled with the kernel */
		agent_probes_free(&pr);
		err = agent_build_probes(name, 0, &pr, e);
		if (!err)
			err = agent_inject_load(pm, name, &pr, &mod, lid, tm, e);
		tm->runtime = "runtime compiled, linking failed";
	} else if (!err) {
		/* runtime functions compiled in: the small ones when linked, all
		 * the used ones when not (nvcc's header of every runtime .func) */
		int compiled = strstr(pr.extra, ".func  (.param .b64 func_retval0) gx_rt_") != NULL;
		tm->runtime = agent_no_probes() ? "no probes"
			      : pr.linked && compiled ? "runtime linked, small functions compiled"
			      : pr.linked   ? "runtime linked"
			      : compiled    ? "runtime compiled"
					    : "no runtime";
	}
	if (!err && mod) {
		CUresult r = agent_gpu.rt->cu->module_get_function(&fn, mod, name);
		if (r != CUDA_SUCCESS) {
			cu_err(agent_gpu.rt->cu, e, r, "cuModuleGetFunction on the instrumented module");
			agent_gpu.rt->cu->module_unload(mod);
			fn = NULL;
		}
	}
	/* failures are cached too: the kernel's other handles run unchanged
	 * (compiles with no context, ctx NULL: in the module cache) */
	struct agent_cached *c = ctx ? malloc(sizeof(*c)) : NULL;
	if (c) {
		*c = (struct agent_cached){.next = agent_cache, .hash = hash, .ctx = ctx, .fn = fn,
					   .lid = *lid,
					   .jit = tm->jit, .cache = tm->cache,
					   .msg = fn ? NULL : strdup(e->msg)};
		agent_cache = c;
	}
	ptx_module_free(pm);
	agent_probes_free(&pr);
	return fn;
}

/* Instrument k in the current context: the new function or NULL (e set);
 * *hit set to the cache entry when an earlier handle of the same kernel, or
 * the work ahead of the launch, did it already. */
static CUfunction agent_instrument(struct agent_kernel *k, CUcontext ctx, struct agent_cached **hit,
				   struct agent_timing *tm, struct err *e)
{
	const char *ptx = agent_module_ptx(k->module, k->name, e);
	return ptx ? agent_instrument_ptx(ptx, k->name, ctx, hit, &k->lid, tm, e) : NULL;
}

/* Is this the first failure for a kernel of this name?  (One notice per
 * kernel, however many handles, modules or contexts it has.) */
static int agent_first_failure(const char *name)
{
	static uint64_t seen[256];
	static size_t seen_cnt;
	uint64_t h = agent_hash(0xcbf29ce484222325ull, name);
	for (size_t i = 0; i < seen_cnt; i++)
		if (seen[i] == h)
			return 0;
	if (seen_cnt < sizeof(seen) / sizeof(seen[0]))
		seen[seen_cnt++] = h;
	return 1;
}

/* GPUEXT_AGENT_VERBOSE: where k's first launch's time went (t0: its start),
 * and how long before it the module and the handle were there (the time
 * there was to instrument ahead of the launch). */
static void agent_tell_first_launch(const struct agent_kernel *k, const struct agent_timing *tm,
				    const struct timespec *t0)
{
	agent_notice("kernel %s instrumented (device side %.1f, parse+inject %.1f, JIT %.1f, "
		     "load %.1f, %s%s, %s; %.1f ms)", k->name, tm->init, tm->inject, tm->jit,
		     tm->load, tm->runtime, tm->mem, tm->cache, agent_ms_since(t0));
	agent_notice("kernel %s: module loaded %.1f ms, handle made %.1f ms before its first "
		     "launch", k->name, agent_ms_between(&k->module->loaded, t0),
		     agent_ms_between(&k->made, t0));
}

/* The first launch of k found it instrumented ahead (c): say so, as its own
 * instrumentation would have (waited: how long the launch waited). */
static void agent_claim_ahead(const struct agent_kernel *k, struct agent_cached *c, double waited)
{
	c->ahead = 0;
	if (c->fn) {
		session_count(agent_session, SESSION_INSTRUMENTED);
		if (getenv("GPUEXT_AGENT_VERBOSE"))
			agent_notice("kernel %s instrumented (ahead of its first launch, JIT %.1f, "
				     "%s; %.1f ms)", k->name, c->jit, c->cache ? c->cache : "-",
				     waited);
	} else if (agent_first_failure(k->name)) {
		session_count(agent_session, SESSION_SKIPPED);
		agent_notice("kernel %s runs unchanged: %s", k->name, c->msg ? c->msg : "?");
	}
}

/* The launch of k goes to g: k for the launch when g is its instrumented
 * function. */
static CUfunction agent_target(struct agent_kernel *k, CUfunction f, struct agent_kernel **kout)
{
	CUfunction g = k->inst;
	*kout = g ? k : NULL;
	return g ? g : f;
}

/* Say once per kernel name (whatever its handles) that its launches carry
 * no id: the failures' set of names, under a key of its own. */
static void agent_tell_no_launch_id(const struct agent_kernel *k)
{
	char key[600];
	if (!k->inst || k->lid.added)
		return;
	snprintf(key, sizeof(key), "no launch id: %s", k->name);
	if (agent_first_failure(key))
		agent_notice("kernel %s: no launch id (%s): bpf_gpu_launch_id() gives 0", k->name,
			     k->lid.why ? k->lid.why : "?");
}

CUfunction agent_launch_target(CUfunction f, CUstream s, struct agent_kernel **kout)
{
	agent_mem_signal_snapshot();
	struct agent_kernel *k = agent_kernel_find(f);
	*kout = NULL;
	if (!k)
		return f;
	if (__atomic_load_n(&k->decided, __ATOMIC_ACQUIRE))
		return agent_target(k, f, kout);
	if (!agent_kernel_targeted(k->name)) {
		/* decided without the lock: never behind work in progress */
		__atomic_store_n(&k->decided, 1, __ATOMIC_RELEASE);
		return f;
	}
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pthread_mutex_lock(&agent_gpu_lock);
	if (!k->decided) {
		struct err e = {{0}};
		/* relaxed capture mode: loading a module while this thread
		 * captures a stream is allowed then, and breaks nothing */
		CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
		int swapped = 0;
		if (!agent_gpu.tried)
			agent_gpu.capture_mode =
				(capture_mode_fn)agent_real_driver("cuThreadExchangeStreamCaptureMode");
		if (agent_gpu.capture_mode)
			swapped = agent_gpu.capture_mode(&mode) == CUDA_SUCCESS;
		CUcontext ctx = NULL;
		struct agent_timing tm = {0};
		struct timespec t1;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		int ready = !agent_gpu_init(&e);
		tm.init = agent_ms_since(&t1);
		if (ready) {
			agent_gpu.ctx_get_current(&ctx);
			struct agent_cached *hit = NULL;
			/* the device maps live in GPU 0's primary context, made
			 * (maybe at process start, agent_ahead.c) before the
			 * application's own: another context fails open */
			k->inst = ctx == agent_gpu.rt->ctx ? agent_instrument(k, ctx, &hit, &tm, &e)
				  : (err_set(&e, ENOTSUP, "the application's context is not GPU 0's "
					     "primary context (the device maps' context)"), NULL);
			if (hit && hit->ahead) {
				agent_claim_ahead(k, hit, agent_ms_since(&t0));
			} else if (k->inst && !hit) {
				session_count(agent_session, SESSION_INSTRUMENTED);
				if (getenv("GPUEXT_AGENT_VERBOSE"))
					agent_tell_first_launch(k, &tm, &t0);
			} else if (!k->inst && agent_first_failure(k->name)) {
				session_count(agent_session, SESSION_SKIPPED);
				agent_notice("kernel %s runs unchanged: %s", k->name,
					     hit && hit->msg ? hit->msg : e.msg);
			}
		}
		if (swapped)
			agent_gpu.capture_mode(&mode);
		agent_tell_no_launch_id(k);
		__atomic_store_n(&k->decided, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&agent_gpu_lock);
	return agent_target(k, f, kout);
}

/* Is ctx GPU 0's primary context (the one the device maps live in)?  An
 * inactive primary context is not made active to find out. */
static int agent_is_primary(CUcontext ctx)
{
	if (agent_gpu.tried)
		return agent_gpu.rt && ctx == agent_gpu.rt->ctx;
	typedef CUresult (*state_fn)(CUdevice, unsigned *, int *);
	state_fn state = (state_fn)agent_real_driver("cuDevicePrimaryCtxGetState");
	const struct cu_driver *cu;
	CUdevice dev;
	CUcontext primary = NULL;
	unsigned flags;
	int active = 0;
	if (!ctx || !state || cu_driver_load(&cu, NULL) || cu->device_get(&dev, 0) != CUDA_SUCCESS ||
	    state(dev, &flags, &active) != CUDA_SUCCESS || !active ||
	    cu->primary_ctx_retain(&primary, dev) != CUDA_SUCCESS)
		return 0;
	cu->primary_ctx_release(dev);
	return ctx == primary;
}

/* Instrument kernel name of ptx ahead: 1 if a compile was done. */
static int agent_ahead_one(const char *ptx, const char *name, CUcontext ctx)
{
	struct err e = {{0}};
	struct agent_timing tm = {0};
	struct agent_cached *hit = NULL;
	struct timespec t0;
	int done = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pthread_mutex_lock(&agent_gpu_lock);
	agent_gpu.rt->cu->ctx_set_current(agent_gpu.rt->ctx);
	const struct agent_cached *before = agent_cache;
	struct ptx_launch_param lid = {0}; /* kept in the cache entry for the launch */
	CUfunction fn = agent_instrument_ptx(ptx, name, ctx, &hit, &lid, &tm, &e);
	if (!hit && agent_cache != before) { /* the entry just made: for the first launch */
		agent_cache->ahead = 1;
		done = 1;
		if (fn && getenv("GPUEXT_AGENT_VERBOSE"))
			agent_notice("kernel %s instrumented ahead of its first launch (parse+inject "
				     "%.1f, JIT %.1f, load %.1f, %s, %s; %.1f ms)", name, tm.inject,
				     tm.jit, tm.load, tm.runtime, tm.cache, agent_ms_since(&t0));
	}
	pthread_mutex_unlock(&agent_gpu_lock);
	return done;
}

int agent_instrument_ahead(struct agent_module *m, CUcontext ctx, int budget)
{
	struct err e = {{0}};
	char name[512];
	int done = 0;

	pthread_mutex_lock(&agent_gpu_lock);
	int ready = agent_is_primary(ctx) && !agent_gpu_init(&e);
	/* one module's PTX, or each PTX input of a link */
	const char *ptx = ready && m->kind != AGENT_IMAGE_LINKED ? agent_module_ptx(m, "", &e) : NULL;
	pthread_mutex_unlock(&agent_gpu_lock);
	for (size_t i = 0; ready && i < (m->kind == AGENT_IMAGE_LINKED ? m->input_cnt : 1); i++) {
		const char *text = m->kind == AGENT_IMAGE_LINKED ? m->inputs[i] : ptx;
		for (const char *at = text; text && done < budget &&
					    agent_next_entry(&at, name, sizeof(name));)
			if (agent_kernel_targeted(name))
				done += agent_ahead_one(text, name, ctx);
	}
	return done;
}

/* GPU 0 described and the maps' references planned, once, for the compiles
 * before the device side exists (agent_gpu_lock held): 0 when ready. */
static int agent_noctx_open(struct err *e)
{
	if (agent_noctx.tried)
		return agent_noctx.rt ? 0 : err_set(e, ENODEV, "no GPU (see above)");
	agent_noctx.tried = 1;
	if (ptx_rt_open_noctx(0, &agent_noctx.rt, e))
		return -ENODEV;
	const struct object *obj = agent_session->obj;
	for (size_t i = 0; i < obj->map_cnt && i < AGENT_MAX_MAPS; i++)
		agent_noctx.refs[i] = ptx_rt_map_ref_planned(agent_noctx.rt, &obj->maps[i].def);
	return 0;
}

/* Compile kernel name of ptx as its first launch will want it, with no
 * context, into a library (agent_gpu_lock held; the launch path's own
 * functions, so that the text is the one the launch makes): 1 when done,
 * -errno (e set) if the driver would not. */
static int agent_noctx_one(const char *ptx, const char *name, struct err *e)
{
	struct agent_timing tm = {0};
	struct agent_cached *hit = NULL;
	struct timespec t0;
	struct ptx_launch_param lid = {0}; /* the launch finds it again in its own compile */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	agent_instrument_ptx(ptx, name, NULL, &hit, &lid, &tm, e);
	if (!tm.cache) /* set once the library is made */
		return -EINVAL;
	if (getenv("GPUEXT_AGENT_VERBOSE"))
		agent_notice("kernel %s compiled ahead of its first launch, before any context "
			     "(parse+inject %.1f, JIT %.1f, %s, %s; %.1f ms)", name, tm.inject, tm.jit,
			     tm.runtime ? tm.runtime : "-", tm.cache ? tm.cache : "-",
			     agent_ms_since(&t0));
	return 1;
}

int agent_compile_ahead_noctx(struct agent_module *m, int budget)
{
	struct err e = {{0}};
	char name[512];
	int done = 0, err = 0;

	pthread_mutex_lock(&agent_gpu_lock);
	/* the device side is there already: its context compiles */
	int here = !agent_gpu.tried && !agent_noctx_open(&e);
	const char *ptx = here ? agent_module_ptx(m, "", &e) : NULL;
	pthread_mutex_unlock(&agent_gpu_lock);
	for (const char *at = ptx; ptx && !err && done < budget &&
				   agent_next_entry(&at, name, sizeof(name));) {
		if (!agent_kernel_targeted(name))
			continue;
		/* one kernel at a time under the lock, so that a launch waits
		 * for one compile at most; once the device side exists (a
		 * launch made it), the launches compile in its context */
		pthread_mutex_lock(&agent_gpu_lock);
		int r = agent_gpu.tried ? 0 : agent_noctx_one(ptx, name, &e);
		pthread_mutex_unlock(&agent_gpu_lock);
		done += r > 0;
		err = r < 0 ? r : 0;
	}
	if (err && getenv("GPUEXT_AGENT_VERBOSE"))
		agent_notice("compiles before any context stopped (the first launches compile): %s",
			     e.msg);
	if (!here && agent_gpu.rt) /* never made here: the application's */
		return agent_instrument_ahead(m, agent_gpu.rt->ctx, budget);
	return done;
}

void agent_launch_refused(CUfunction f, CUresult r)
{
	struct agent_kernel *k = agent_kernel_find(f);
	if (!k || !k->inst)
		return;
	k->inst = NULL;
	pthread_mutex_lock(&agent_gpu_lock);
	int first = agent_first_failure(k->name);
	pthread_mutex_unlock(&agent_gpu_lock);
	if (!first)
		return;
	session_count(agent_session, SESSION_SKIPPED);
	agent_notice("kernel %s runs unchanged: the driver refused the instrumented launch "
		     "(CUresult %d)", k->name, (int)r);
}

void agent_launch_done(CUstream s)
{
	session_count(agent_session, SESSION_REDIRECTED);
	__atomic_store_n(&agent_gpu.dirty, 1, __ATOMIC_RELEASE);
}
