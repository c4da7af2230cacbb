/* SPDX-License-Identifier: MIT */
/*
 * agent_mem_signal.c - the device access signal of the memory-policy
 * runtime: the host half of policies/mem-signal.bpf.c (protocol in
 * policies/mem_signal.h).
 *
 * CUPTI's unified-memory records are not a complete signal on every driver
 * (on the H200 with driver 580 they reported a fraction of the faults), so
 * where kernels are instrumented the device says which pages it touched:
 * `gpuext run --mem-budget` without an object of its own loads
 * mem-signal.bpf.o into the session, the agent injects it into every
 * kernel, and at each snapshot of the device maps (after redirected
 * launches, on the mirror thread, and at teardown: agent_device.c) this file
 *   before the copy: advances the epoch and writes the window (ms_ctl,
 *                    the program's .data),
 *   after it:        copies the window's part of ms_page (its .bss) itself
 *                    (the generic mirror leaves that map alone: it would
 *                    copy all of it) and hands the pages whose epoch is the
 *                    previous one, in address order, to agent_mem_touched.
 * A snapshot is also taken before every launch (agent_mem_signal_launch,
 * on the launching thread), so that the runtime's evictions for what the
 * last kernels touched are queued before the next kernel runs: the budget
 * holds between kernels, as a driver would hold it, instead of trailing
 * the application by a mirror period.
 * The copies are synchronous ones on the application's context, so they wait
 * for the kernels queued before it (and for the copy engine, behind the
 * runtime's eviction copies): a snapshot holds every touch of the kernels
 * that completed before it.  A page counts as touched when its value
 * differs from the one the last snapshot read (every snapshot advances the
 * epoch, so a page touched again changes): a touch made while a snapshot
 * is taken is seen by this one or the next, never lost.
 * With GPUEXT_MEM_SNAPSHOT_ASYNC=1 a launch only asks for the snapshot and
 * a thread of this file takes it, so the launching thread does not wait
 * for the copies; the budget then holds one snapshot later.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "agent_impl.h"
#include "agent_mem.h"
#include "agent_mem_signal.h"
#include "../../policies/mem_signal.h"

static struct {
	pthread_mutex_t lock;
	int bound;                /* the session has the program and its device maps exist */
	struct ptx_rt_map *ctl, *page; /* device maps (owned by agent_device.c) */
	struct ms_ctl cur;        /* what the device has */
	uint16_t *epochs;         /* scratch: the window's part of ms_page */
	uint16_t *seen;           /* each page's value at the last read (0: untouched) */
	size_t epoch_cap;
	uint64_t *addrs;          /* scratch: touched pages of a snapshot */
	size_t addr_cap;
	uint32_t snapshot;
} sig = {.lock = PTHREAD_MUTEX_INITIALIZER};

/*
 * Snapshots off the application's threads (GPUEXT_MEM_SNAPSHOT_ASYNC=1): a
 * launch only asks (snap.lock, never sig.lock, which a snapshot in progress
 * holds while its copy waits), the snapshot thread takes it; once exit has
 * begun, snapshots are taken by their caller again.  Lock order: sig.lock,
 * then snap.lock; the thread holds at most one of them.
 */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t want;
	int async, exiting, wanted, running;
	pthread_t thread;
} snap = {.lock = PTHREAD_MUTEX_INITIALIZER, .want = PTHREAD_COND_INITIALIZER};

/* The session map called name with values of value_size bytes, or -1. */
static long agent_mem_signal_map(const char *name, uint32_t value_size)
{
	const struct object *o = agent_session ? agent_session->obj : NULL;
	for (size_t i = 0; o && i < o->map_cnt; i++)
		if (!strcmp(o->maps[i].def.name, name) && o->maps[i].def.value_size == value_size)
			return (long)i;
	return -1;
}

/* Write ms_ctl: the window over the managed ranges and epoch (lock held). */
static void agent_mem_signal_write_ctl(uint32_t epoch)
{
	struct err e = {{0}};
	uint64_t base;
	uint32_t blocks;

	if (agent_mem_window(MS_MAX_BLOCKS, &base, &blocks))
		base = 0, blocks = 0;
	struct ms_ctl c = {.base = base, .blocks = blocks, .epoch = epoch};
	if (!memcmp(&c, &sig.cur, sizeof(c)))
		return;
	if (ptx_rt_map_array_set(sig.ctl, 0, &c, &e)) {
		agent_notice("memory policy: device signal stopped: %s", e.msg);
		sig.bound = 0;
		return;
	}
	sig.cur = c;
}

long agent_mem_signal_bind(struct ptx_rt_map **maps)
{
	long ctl = agent_mem_signal_map(".data", sizeof(struct ms_ctl));
	long page = agent_mem_signal_map(".bss", MS_WINDOW_PAGES * sizeof(uint16_t));

	if (ctl < 0 || page < 0 || !agent_mem_active() || !maps[ctl] || !maps[page])
		return -1;
	pthread_mutex_lock(&sig.lock);
	sig.ctl = maps[ctl];
	sig.page = maps[page];
	sig.bound = 1;
	const char *async = getenv("GPUEXT_MEM_SNAPSHOT_ASYNC");
	pthread_mutex_lock(&snap.lock);
	snap.async = async && *async == '1';
	pthread_mutex_unlock(&snap.lock);
	memset(&sig.cur, 0, sizeof(sig.cur));
	if (sig.seen)
		memset(sig.seen, 0, sig.epoch_cap * sizeof(*sig.seen));
	agent_mem_signal_write_ctl(1);
	pthread_mutex_unlock(&sig.lock);
	return page;
}

void agent_mem_signal_window_changed(void)
{
	pthread_mutex_lock(&sig.lock);
	if (sig.bound)
		agent_mem_signal_write_ctl(sig.cur.epoch);
	pthread_mutex_unlock(&sig.lock);
}

/* Advance the epoch (lock held). */
static void agent_mem_signal_advance(void)
{
	uint32_t next = sig.cur.epoch + 1;
	if (!(next & 0xffff)) /* 0 is what an untouched page holds */
		next++;
	agent_mem_signal_write_ctl(next);
}

/* Read the window and hand the pages of the previous epoch over (lock
 * held, right after agent_mem_signal_advance: a snapshot is one critical
 * section, or a second one between would advance the epoch past the one
 * the kernels wrote).  t0: when the snapshot began (its copies' time). */
static void agent_mem_signal_collect(uint64_t t0)
{
	struct err e = {{0}};

	size_t pages = (size_t)sig.cur.blocks * MS_PAGES, n = 0;
	if (!sig.bound || !pages)
		return;
	if (pages > sig.epoch_cap) {
		uint16_t *p = realloc(sig.epochs, pages * sizeof(*p));
		uint16_t *q = p ? realloc(sig.seen, pages * sizeof(*q)) : NULL;
		if (p)
			sig.epochs = p;
		if (!q)
			return; /* the next snapshot tries again */
		memset(q + sig.epoch_cap, 0, (pages - sig.epoch_cap) * sizeof(*q));
		sig.seen = q;
		sig.epoch_cap = pages;
	}
	if (ptx_rt_map_value_read(sig.page, 0, 0, sig.epochs, pages * sizeof(*sig.epochs), &e)) {
		agent_notice("memory policy: device signal stopped: %s", e.msg);
		sig.bound = 0;
		return;
	}
	agent_mem_snapshot_time(agent_mem_now_ns() - t0);
	/* Touched: a page whose value changed since the last read.  Every
	 * snapshot advances the epoch, so a page touched again holds a new
	 * value; a store that read the epoch before the advance and lands
	 * after the read (kernels running during the snapshot) changes the
	 * value too and is seen by the next snapshot: nothing is lost. */
	for (size_t page = 0; page < pages; page++) {
		if (sig.epochs[page] == sig.seen[page])
			continue;
		if (n == sig.addr_cap) {
			size_t cap = sig.addr_cap ? sig.addr_cap * 2 : 4096;
			uint64_t *a = realloc(sig.addrs, cap * sizeof(*a));
			if (!a)
				break; /* the rest: seen again when touched again */
			sig.addrs = a;
			sig.addr_cap = cap;
		}
		sig.addrs[n++] = (sig.cur.base << MS_BLOCK_SHIFT) + ((uint64_t)page << MS_PAGE_SHIFT);
		sig.seen[page] = sig.epochs[page];
	}
	if (n)
		agent_mem_touched(sig.addrs, n, sig.snapshot++, agent_mem_now_ns());
}

/* One snapshot (lock held). */
static void agent_mem_signal_take(void)
{
	if (sig.bound) {
		uint64_t t0 = agent_mem_now_ns();
		agent_mem_signal_advance();
		agent_mem_signal_collect(t0);
	}
}

static void *agent_mem_signal_main(void *arg)
{
	struct ptx_rt *rt = arg;

	/* the copies are the device maps' context's, as the mirror's */
	rt->cu->ctx_set_current(rt->ctx);
	pthread_mutex_lock(&snap.lock);
	while (!snap.exiting) {
		if (!snap.wanted) {
			pthread_cond_wait(&snap.want, &snap.lock);
			continue;
		}
		snap.wanted = 0;
		pthread_mutex_unlock(&snap.lock);
		pthread_mutex_lock(&sig.lock);
		agent_mem_signal_take();
		pthread_mutex_unlock(&sig.lock);
		pthread_mutex_lock(&snap.lock);
	}
	pthread_mutex_unlock(&snap.lock);
	return NULL;
}

/* At exit, before the CUDA runtime's teardown (registered after it, at
 * the first instrumented launch): the snapshot thread stops, later
 * snapshots (the agent's last one at teardown) are taken by their caller. */
static void agent_mem_signal_atexit(void)
{
	pthread_mutex_lock(&snap.lock);
	int join = snap.running;
	snap.exiting = 1;
	snap.running = 0;
	pthread_cond_broadcast(&snap.want);
	pthread_mutex_unlock(&snap.lock);
	if (join)
		pthread_join(snap.thread, NULL);
}

/* Ask the snapshot thread (started at the first ask) for a snapshot; 0,
 * or -1 when the caller must take it itself. */
static int agent_mem_signal_ask(void)
{
	static int registered;
	int rc = -1;

	pthread_mutex_lock(&snap.lock);
	if (snap.async && !snap.exiting && !snap.running &&
	    !pthread_create(&snap.thread, NULL, agent_mem_signal_main, sig.page->rt)) {
		snap.running = 1;
		if (!registered++)
			atexit(agent_mem_signal_atexit);
	}
	if (snap.running && !snap.exiting) {
		snap.wanted = 1;
		pthread_cond_signal(&snap.want);
		rc = 0;
	}
	pthread_mutex_unlock(&snap.lock);
	return rc;
}

void agent_mem_signal_snapshot(void)
{
	if (!__atomic_load_n(&sig.bound, __ATOMIC_RELAXED) || !agent_mem_signal_ask())
		return;
	pthread_mutex_lock(&sig.lock);
	agent_mem_signal_take();
	pthread_mutex_unlock(&sig.lock);
}
