/* SPDX-License-Identifier: MIT */
/*
 * sched_admit.c - per-launch admission in the agent: the policy's
 * gpu_launch_admit over the session's launches in flight, holding and
 * delaying bounded by the session's hold limit.
 *
 * Launches in flight are counted per tenant in the segment (atomics, no
 * lock): the agent adds one when a launch is queued and takes it back when
 * the driver runs the host function queued after it (agent_sched.c).  A
 * tenant that dies with launches in flight never takes them back: a hold
 * that lasts past a millisecond checks the other tenants' liveness and
 * clears the counts of dead ones.  Whatever the policy says, a launch
 * waits at most hold_limit_us.
 */
#include <time.h>
#include <unistd.h>

#include "sched_impl.h"

static uint64_t sched_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sched_launch_ctx(const struct sched_member *m, struct gpu_sched_launch_ctx *c)
{
	const struct sched_shm *shm = m->shm;
	c->inflight[0] = c->inflight[1] = 0;
	c->nr_tenants = 0;
	for (int i = 0; i < GPU_SCHED_MAX_TENANTS; i++) {
		const struct sched_tenant *t = &shm->t[i];
		if (!__atomic_load_n(&t->used, __ATOMIC_RELAXED))
			continue;
		c->nr_tenants++;
		c->inflight[t->klass & 1] += __atomic_load_n(&t->inflight, __ATOMIC_RELAXED);
	}
	c->tenant_inflight = __atomic_load_n(&shm->t[m->tenant].inflight, __ATOMIC_RELAXED);
	c->now_ns = sched_now_ns();
}

/* Counts of tenants whose processes are all gone go back to 0. */
static void sched_clear_dead(struct sched_member *m)
{
	for (int i = 0; i < GPU_SCHED_MAX_TENANTS; i++) {
		struct sched_tenant *t = &m->shm->t[i];
		if (i != m->tenant && __atomic_load_n(&t->inflight, __ATOMIC_RELAXED) &&
		    !sched_slot_alive(t))
			__atomic_store_n(&t->inflight, 0, __ATOMIC_RELAXED);
	}
}

static uint64_t sched_count_wait(struct sched_tenant *me, uint64_t waited_ns, int capped)
{
	__atomic_fetch_add(&me->stats.launches, 1, __ATOMIC_RELAXED);
	if (waited_ns) {
		__atomic_fetch_add(&me->stats.held, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&me->stats.held_ns, waited_ns, __ATOMIC_RELAXED);
	}
	if (capped)
		__atomic_fetch_add(&me->stats.capped, 1, __ATOMIC_RELAXED);
	return waited_ns;
}

uint64_t sched_admit(struct sched_member *m, const uint32_t grid[3], const uint32_t block[3])
{
	struct sched_tenant *me = &m->shm->t[m->tenant];
	struct gpu_sched_launch_ctx c = {.tenant = (uint32_t)m->tenant, .klass = me->klass,
					 .grid = {grid[0], grid[1], grid[2]},
					 .block = {block[0], block[1], block[2]},
					 .pid = (uint32_t)getpid()};
	uint64_t limit_ns = m->shm->hold_limit_us * 1000, start, delay_us;
	int checked = 0;

	sched_launch_ctx(m, &c);
	start = c.now_ns;
	for (;;) {
		enum gpu_sched_decision d = sched_policy_admit(m->pol, &c, &delay_us);
		if (d == GPU_SCHED_ADMIT)
			break;
		if (c.waited_ns >= limit_ns)
			return sched_count_wait(me, c.waited_ns, 1);
		uint64_t left = limit_ns - c.waited_ns;
		uint64_t wait = d == GPU_SCHED_DELAY ? delay_us * 1000 : SCHED_HOLD_POLL_US * 1000;
		wait = wait < left ? wait : left;
		nanosleep(&(struct timespec){(time_t)(wait / 1000000000ull),
					     (long)(wait % 1000000000ull)}, NULL);
		if (d == GPU_SCHED_DELAY)
			return sched_count_wait(me, sched_now_ns() - start, delay_us * 1000 > left);
		if (!checked && c.waited_ns > 1000000) {
			sched_clear_dead(m);
			checked = 1;
		}
		sched_launch_ctx(m, &c);
		c.waited_ns = c.now_ns - start;
	}
	return sched_count_wait(me, c.waited_ns, 0);
}

void sched_launch_queued(struct sched_member *m)
{
	__atomic_fetch_add(&m->shm->t[m->tenant].inflight, 1, __ATOMIC_RELAXED);
}

void sched_launch_completed(struct sched_member *m)
{
	uint64_t *n = &m->shm->t[m->tenant].inflight;
	uint64_t v = __atomic_load_n(n, __ATOMIC_RELAXED);
	/* never below 0: a sweep may have cleared the count meanwhile */
	while (v && !__atomic_compare_exchange_n(n, &v, v - 1, 1, __ATOMIC_RELAXED,
						 __ATOMIC_RELAXED))
		;
}
