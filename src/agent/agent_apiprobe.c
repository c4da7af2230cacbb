/* SPDX-License-Identifier: MIT */
/*
 * agent_apiprobe.c - the C half of the in-process API probes: sites,
 * attaching, and the entry/return calls the trampolines make
 * (apiprobe.h, agent_tramp.S).
 *
 * Invariant: a probe's prog arrays are only appended to, under attach_lock,
 * and each count is published (release) after its slot is written, so the
 * trampolines read them without a lock (acquire).  A site never changes
 * once its stub has been handed out.
 */
#include "apiprobe.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include "bpf/jit.h"
#include "bpf/object.h"
#include "bpf/prog.h"

_Static_assert(sizeof(struct apiprobe_regs) == 168, "kernel pt_regs is 21 registers");
_Static_assert(offsetof(struct apiprobe_regs, bp) == 32, "agent_tramp.S PT_BP");
_Static_assert(offsetof(struct apiprobe_regs, r8) == 72, "agent_tramp.S PT_R8");
_Static_assert(offsetof(struct apiprobe_regs, ax) == 80, "agent_tramp.S PT_AX");
_Static_assert(offsetof(struct apiprobe_regs, di) == 112, "agent_tramp.S PT_DI");
_Static_assert(offsetof(struct apiprobe_regs, ip) == 128, "agent_tramp.S PT_IP");
_Static_assert(offsetof(struct apiprobe_regs, sp) == 152, "agent_tramp.S PT_SP");

/* A program attached to a function: its native entry when it has one
 * (jit_direct(): a program without local calls or callx cannot fault, so
 * no per-call checks), else the program itself, run through jit_run(). */
struct apiprobe_prog {
	jit_direct_fn direct;
	const struct prog *prog;
};

/* The programs attached to one function name (verified and compiled once
 * at attach). */
struct apiprobe_probe {
	char name[APIPROBE_NAME_MAX];
	struct apiprobe_prog entry[APIPROBE_MAX_PROGS];
	struct apiprobe_prog ret[APIPROBE_MAX_PROGS];
	_Atomic uint32_t entry_cnt;
	_Atomic uint32_t ret_cnt;
};

/* One trampoline: a probed name and one real function.  The same name may
 * come with several reals (cuGetProcAddress of another version, the
 * agent's own wrapper and the driver's), each keeps its own site. */
struct apiprobe_site {
	struct apiprobe_probe *probe;
	void *real;
};

/* One frame per pending return-probed call of this thread. */
struct apiprobe_frame {
	uint64_t ret_addr;
	uint32_t site;
};

struct apiprobe_thread {
	int busy; /* running a probe program: the recursion guard */
	uint32_t depth;
	struct apiprobe_frame frames[APIPROBE_MAX_DEPTH];
};

/* The agent is preloaded, so its TLS sits in the static block. */
static __thread struct apiprobe_thread tls __attribute__((tls_model("initial-exec")));

static struct apiprobe_probe probes[APIPROBE_MAX_SITES];
static _Atomic uint32_t probe_cnt;
static struct apiprobe_site sites[APIPROBE_MAX_SITES];
static uint32_t site_cnt;  /* under attach_lock; a site is written before its stub is handed out */
static pthread_mutex_t attach_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic uint64_t recursion_skips, depth_skips, prog_errors, site_skips;

/* agent_tramp.S */
extern const char apiprobe_stubs[];
extern const char apiprobe_ret_stub[];
enum { APIPROBE_STUB_SIZE = 16 };

/* Called by the trampoline and the return stub only. */
__attribute__((visibility("hidden"))) void *apiprobe_enter(uint32_t idx,
							    struct apiprobe_regs *regs);
__attribute__((visibility("hidden"))) uint64_t apiprobe_leave(const uint64_t *saved,
							       uint64_t sp);

/* A program with local calls, through jit_run() (its call depth is checked
 * there): out of line, the direct entry is the common case. */
static __attribute__((noinline)) void run_checked(const struct prog *p,
						  struct apiprobe_regs *regs)
{
	struct prog_run_opts opts = {.args = {(uintptr_t)regs}};
	struct err e;
	uint64_t r0;

	if (jit_run(p, &opts, &r0, &e))
		atomic_fetch_add_explicit(&prog_errors, 1, memory_order_relaxed);
}

static inline void run_progs(const struct apiprobe_prog *progs, uint32_t cnt,
			     struct apiprobe_regs *regs)
{
	tls.busy = 1;
	for (uint32_t i = 0; i < cnt; i++) {
		if (progs[i].direct)
			progs[i].direct((uintptr_t)regs, 0, 0, 0, 0);
		else
			run_checked(progs[i].prog, regs);
	}
	tls.busy = 0;
}

/* Return probes: swap the return address for the return stub.  Out of
 * line: entry-only probes, the common case, never come here. */
static __attribute__((noinline)) void push_return(uint32_t idx, struct apiprobe_regs *regs)
{
	if (tls.depth == APIPROBE_MAX_DEPTH) {
		atomic_fetch_add_explicit(&depth_skips, 1, memory_order_relaxed);
		return;
	}
	uint64_t *ret_slot = (uint64_t *)(uintptr_t)regs->sp;
	tls.frames[tls.depth++] = (struct apiprobe_frame){*ret_slot, idx};
	*ret_slot = (uintptr_t)apiprobe_ret_stub;
}

/* Every case of apiprobe_enter: nested calls, several entry programs,
 * return programs. */
static __attribute__((noinline)) void *enter_any(uint32_t idx, struct apiprobe_regs *regs)
{
	const struct apiprobe_site *site = &sites[idx];
	struct apiprobe_probe *pr = site->probe;

	if (tls.busy) {
		atomic_fetch_add_explicit(&recursion_skips, 1, memory_order_relaxed);
		return site->real;
	}
	regs->ip = (uintptr_t)site->real;
	uint32_t n = atomic_load_explicit(&pr->entry_cnt, memory_order_acquire);
	if (n)
		run_progs(pr->entry, n, regs);
	if (atomic_load_explicit(&pr->ret_cnt, memory_order_acquire))
		push_return(idx, regs);
	return site->real;
}

/*
 * The common case inline: one entry program, no return program, not
 * nested.  Kept apart so that it needs almost no registers of its own
 * (the general case's loop would make the compiler save six on every call).
 */
void *apiprobe_enter(uint32_t idx, struct apiprobe_regs *regs)
{
	const struct apiprobe_site *site = &sites[idx];
	const struct apiprobe_probe *pr = site->probe;

	if (atomic_load_explicit(&pr->entry_cnt, memory_order_acquire) != 1 ||
	    atomic_load_explicit(&pr->ret_cnt, memory_order_acquire) || tls.busy)
		return enter_any(idx, regs);
	regs->ip = (uintptr_t)site->real;
	run_progs(pr->entry, 1, regs);
	return site->real;
}

uint64_t apiprobe_leave(const uint64_t *saved, uint64_t sp)
{
	struct apiprobe_frame f = tls.frames[--tls.depth];
	struct apiprobe_probe *pr = sites[f.site].probe;
	struct apiprobe_regs regs = {
		.ax = saved[0], .dx = saved[1], .orig_ax = (uint64_t)-1, .ip = f.ret_addr,
		.cs = 0x33, .sp = sp, .ss = 0x2b,
	};

	run_progs(pr->ret, atomic_load_explicit(&pr->ret_cnt, memory_order_acquire), &regs);
	return f.ret_addr;
}

/* The probe of func, or NULL (lock-free: probes are only appended). */
static struct apiprobe_probe *probe_find(const char *func)
{
	uint32_t n = atomic_load_explicit(&probe_cnt, memory_order_acquire);
	for (uint32_t i = 0; i < n; i++)
		if (!strcmp(probes[i].name, func))
			return &probes[i];
	return NULL;
}

int apiprobe_attach(const char *func, struct prog *p, struct err *e)
{
	int is_ret = p->type == PROG_TYPE_URETPROBE;
	int ret = 0;

	if (p->type != PROG_TYPE_UPROBE && !is_ret)
		return err_set(e, EINVAL, "apiprobe: prog '%s' (section '%s') is not a uprobe",
			       p->name, p->section);
	if (!p->verified)
		return err_set(e, EINVAL, "apiprobe: prog '%s' is not verified", p->name);
	if (strlen(func) >= APIPROBE_NAME_MAX)
		return err_set(e, ENAMETOOLONG, "apiprobe: prog '%s': function name '%s' too long",
			       p->name, func);
	if (!p->jit && (ret = jit_compile(p, NULL, e)))
		return ret;

	pthread_mutex_lock(&attach_lock);
	struct apiprobe_probe *pr = probe_find(func);
	if (!pr) {
		uint32_t n = atomic_load_explicit(&probe_cnt, memory_order_relaxed);
		if (n == APIPROBE_MAX_SITES) {
			ret = err_set(e, ENOSPC, "apiprobe: prog '%s': more than %d probed functions",
				      p->name, APIPROBE_MAX_SITES);
			goto out;
		}
		strcpy(probes[n].name, func);
		atomic_store_explicit(&probe_cnt, n + 1, memory_order_release);
		pr = &probes[n];
	}
	_Atomic uint32_t *cnt = is_ret ? &pr->ret_cnt : &pr->entry_cnt;
	uint32_t n = atomic_load_explicit(cnt, memory_order_relaxed);
	if (n == APIPROBE_MAX_PROGS) {
		ret = err_set(e, ENOSPC, "apiprobe: prog '%s': more than %d %s programs on '%s'",
			      p->name, APIPROBE_MAX_PROGS, is_ret ? "return" : "entry", func);
		goto out;
	}
	(is_ret ? pr->ret : pr->entry)[n] = (struct apiprobe_prog){jit_direct(p), p};
	atomic_store_explicit(cnt, n + 1, memory_order_release);
out:
	pthread_mutex_unlock(&attach_lock);
	return ret;
}

int apiprobe_attach_object(struct object *obj, struct err *e)
{
	int attached = 0;

	for (size_t i = 0; i < obj->prog_cnt; i++) {
		struct prog *p = obj->progs[i];
		if (p->type != PROG_TYPE_UPROBE && p->type != PROG_TYPE_URETPROBE)
			continue;
		if (p->target && strpbrk(p->target, "/:"))
			continue; /* uretprobe/PATH:FUNC: a kernel uprobe */
		if (!p->target || !*p->target)
			return err_set(e, EINVAL, "%s: section '%s': no function to probe",
				       obj->name, p->section);
		int ret = apiprobe_attach(p->target, p, e);
		if (ret)
			return ret;
		attached++;
	}
	return attached;
}

void *apiprobe_wrap(const char *func, void *real)
{
	struct apiprobe_probe *pr = real ? probe_find(func) : NULL;
	void *got = real;

	if (!pr)
		return real;
	pthread_mutex_lock(&attach_lock);
	uint32_t i = 0;
	while (i < site_cnt && !(sites[i].probe == pr && sites[i].real == real))
		i++;
	if (i == site_cnt && site_cnt < APIPROBE_MAX_SITES)
		sites[site_cnt++] = (struct apiprobe_site){pr, real};
	if (i < site_cnt)
		got = (void *)(apiprobe_stubs + (size_t)i * APIPROBE_STUB_SIZE);
	else
		atomic_fetch_add_explicit(&site_skips, 1, memory_order_relaxed);
	pthread_mutex_unlock(&attach_lock);
	return got;
}

int apiprobe_has(const char *func)
{
	return probe_find(func) != NULL;
}

void apiprobe_stats_get(struct apiprobe_stats *out)
{
	out->recursion_skips = atomic_load(&recursion_skips);
	out->depth_skips = atomic_load(&depth_skips);
	out->prog_errors = atomic_load(&prog_errors);
	out->site_skips = atomic_load(&site_skips);
}

void apiprobe_reset(void)
{
	_Static_assert(APIPROBE_MAX_SITES * APIPROBE_STUB_SIZE == 16384,
		       "agent_tramp.S assembles 1024 stubs of 16 bytes");
	memset(probes, 0, sizeof(probes));
	memset(sites, 0, sizeof(sites));
	atomic_store(&probe_cnt, 0);
	site_cnt = 0;
	atomic_store(&site_skips, 0);
	atomic_store(&recursion_skips, 0);
	atomic_store(&depth_skips, 0);
	atomic_store(&prog_errors, 0);
}
