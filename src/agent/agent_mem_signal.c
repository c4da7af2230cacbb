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
 * launches, on the mirror thread, and at teardown: agent_instr.c) this file
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
 * for the kernels queued before it: a snapshot holds every touch of the
 * kernels that completed before it (and some of those that ran during it,
 * which the next snapshot sees again: a touch is never lost, at worst
 * reported twice, and the model drops what it already holds).
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
	struct ptx_rt_map *ctl, *page; /* device maps (owned by agent_instr.c) */
	struct ms_ctl cur;        /* what the device has */
	uint16_t *epochs;         /* scratch: the window's part of ms_page */
	size_t epoch_cap;
	uint64_t *addrs;          /* scratch: touched pages of a snapshot */
	size_t addr_cap;
	uint32_t snapshot;
} sig = {.lock = PTHREAD_MUTEX_INITIALIZER};

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
	memset(&sig.cur, 0, sizeof(sig.cur));
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
		if (!p)
			return; /* the next snapshot tries again */
		sig.epochs = p;
		sig.epoch_cap = pages;
	}
	if (ptx_rt_map_value_read(sig.page, 0, 0, sig.epochs, pages * sizeof(*sig.epochs), &e)) {
		agent_notice("memory policy: device signal stopped: %s", e.msg);
		sig.bound = 0;
		return;
	}
	agent_mem_snapshot_time(agent_mem_now_ns() - t0);
	/* the epoch the kernels before the snapshot wrote */
	uint32_t prev = sig.cur.epoch - 1;
	if (!(prev & 0xffff))
		prev--;
	uint16_t ep = (uint16_t)prev;
	for (size_t page = 0; page < pages; page++) {
		if (sig.epochs[page] != ep)
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
	}
	if (n)
		agent_mem_touched(sig.addrs, n, sig.snapshot++, agent_mem_now_ns());
}

void agent_mem_signal_snapshot(void)
{
	if (!__atomic_load_n(&sig.bound, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&sig.lock);
	if (sig.bound) {
		uint64_t t0 = agent_mem_now_ns();
		agent_mem_signal_advance();
		agent_mem_signal_collect(t0);
	}
	pthread_mutex_unlock(&sig.lock);
}
