/* SPDX-License-Identifier: MIT */
/*
 * uvm_sim.c - the trace-driven UVM simulator.
 *
 * Each record is an access.  An access to a resident page costs nothing
 * beyond compute; one to a page that is not resident is a fault, queued in
 * the pending batch (a second access to a pending page is a duplicate, as
 * when several warps fault on one page).  The batch is serviced (mem.h:
 * prefetch, eviction, migration under the policy) when it holds batch_max
 * faults, when the launch id changes (a kernel cannot finish with faults
 * outstanding) and at the end of the trace.  This is the driver's
 * batching seen from a trace: warps keep issuing while the batch fills.
 * With o->hits (a trace of every kernel's touches, the agent's device
 * signal), the first hit on a block in a launch goes to the policy's
 * gpu_block_access (mem_rt_hit), and the budget holds at launch boundaries
 * (mem_rt_trim), as in the agent: the launch's pages all come in, then the
 * runtime evicts down to the budget.
 *
 * Time = compute (the trace's own timestamps, first to last) + per batch
 * batch_us + per fault fault_ns + bytes over the link at its bandwidth each
 * way (faults stall the kernel, so none of it overlaps compute).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "uvm_sim.h"

/* The pending batch: faults in arrival order and a set of their pages. */
struct uvm_pending {
	struct mem_fault *faults;
	uint32_t cnt, max;
	uint64_t *set;     /* page number + 1, 0 = empty */
	uint32_t set_mask;
};

struct uvm_sim {
	struct mem_rt rt;
	struct uvm_sim_result *r;
	struct uvm_pending pend;
	uint64_t *blocks; /* the trace's blocks, ascending: what a prefetch may name */
	size_t nblocks;
	/* o->optimal: per record, the index of the next record of its block
	 * (t->cnt: none); per block (as in blocks), that of its last record
	 * replayed so far, i.e. its next use. */
	size_t *next_rec, *next_use;
	size_t *index_of;  /* by runtime block id: its index in blocks (+1; 0: not yet) */
	uint32_t index_cap;
};

static void uvm_sim_migrate_in(void *arg, uint64_t va, const struct mem_bits *pages,
			       const struct mem_bits *driver)
{
	struct uvm_sim *s = arg;
	s->r->bytes_htod += (uint64_t)mem_bits_count(pages, 0, MEM_PAGES) << MEM_PAGE_SHIFT;
}

static void uvm_sim_evict(void *arg, uint64_t va, const struct mem_bits *pages)
{
	struct uvm_sim *s = arg;
	/* The driver copies every resident page back: it has no dirty bits
	 * for GPU-written memory. */
	s->r->bytes_dtoh += (uint64_t)mem_bits_count(pages, 0, MEM_PAGES) << MEM_PAGE_SHIFT;
}

static size_t uvm_sim_block_index(const struct uvm_sim *s, uint64_t va)
{
	uint64_t key = va >> MEM_BLOCK_SHIFT;
	size_t lo = 0, hi = s->nblocks;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->blocks[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int uvm_sim_covers(void *arg, uint64_t va)
{
	const struct uvm_sim *s = arg;
	size_t i = uvm_sim_block_index(s, va);
	return i < s->nblocks && s->blocks[i] == va >> MEM_BLOCK_SHIFT;
}

/* Called for every resident block at every eviction: the block's index is
 * found once per runtime id, then kept. */
static uint64_t uvm_sim_next_use(void *arg, uint32_t id, uint64_t va)
{
	struct uvm_sim *s = arg;

	if (id >= s->index_cap) {
		uint32_t cap = s->index_cap ? s->index_cap : 256;
		while (cap <= id)
			cap *= 2;
		size_t *n = realloc(s->index_of, cap * sizeof(*n));
		if (!n)
			return UINT64_MAX; /* out of memory: evicted first, still correct */
		memset(n + s->index_cap, 0, (cap - s->index_cap) * sizeof(*n));
		s->index_of = n;
		s->index_cap = cap;
	}
	if (!s->index_of[id]) {
		size_t i = uvm_sim_block_index(s, va);
		if (i >= s->nblocks || s->blocks[i] != va >> MEM_BLOCK_SHIFT)
			return UINT64_MAX; /* never used by the trace */
		s->index_of[id] = i + 1;
	}
	return s->next_use[s->index_of[id] - 1];
}

/* The oracle's tables (o->optimal): next_rec by one backward pass. */
static int uvm_sim_oracle_init(struct uvm_sim *s, const struct uvm_trace *t, struct err *e)
{
	s->next_rec = malloc((t->cnt ? t->cnt : 1) * sizeof(*s->next_rec));
	s->next_use = malloc((s->nblocks ? s->nblocks : 1) * sizeof(*s->next_use));
	if (!s->next_rec || !s->next_use)
		return err_set(e, ENOMEM, "simulator: out of memory");
	for (size_t b = 0; b < s->nblocks; b++)
		s->next_use[b] = t->cnt;
	for (size_t i = t->cnt; i-- > 0;) {
		if (t->recs[i].access == UVM_ACCESS_MANAGED)
			continue;
		size_t b = uvm_sim_block_index(s, t->recs[i].addr);
		s->next_rec[i] = s->next_use[b];
		s->next_use[b] = i;
	}
	return 0;
}

static int uvm_pending_init(struct uvm_pending *p, uint32_t max, struct err *e)
{
	uint32_t slots = 1;

	while (slots < max * 4)
		slots *= 2;
	p->faults = malloc(max * sizeof(*p->faults));
	p->set = calloc(slots, sizeof(*p->set));
	p->max = max;
	p->set_mask = slots - 1;
	p->cnt = 0;
	if (!p->faults || !p->set)
		return err_set(e, ENOMEM, "simulator: out of memory");
	return 0;
}

static void uvm_pending_fini(struct uvm_pending *p)
{
	free(p->faults);
	free(p->set);
}

/* Add the page of addr; 0 when it was pending already. */
static int uvm_pending_add(struct uvm_pending *p, uint64_t addr, uint32_t pid)
{
	uint64_t key = (addr >> MEM_PAGE_SHIFT) + 1;
	uint32_t i = (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 40) & p->set_mask;

	for (; p->set[i]; i = (i + 1) & p->set_mask)
		if (p->set[i] == key)
			return 0;
	p->set[i] = key;
	p->faults[p->cnt++] = (struct mem_fault){addr, pid};
	return 1;
}

static int uvm_sim_flush(struct uvm_sim *s, struct err *e)
{
	struct uvm_pending *p = &s->pend;

	if (!p->cnt && !mem_rt_ahead_pending(&s->rt))
		return 0;
	int err = mem_rt_service(&s->rt, p->faults, p->cnt, e);
	memset(p->set, 0, (p->set_mask + 1) * sizeof(*p->set));
	p->cnt = 0;
	return err;
}

int uvm_sim_run(const struct uvm_trace *t, const struct uvm_sim_opts *o,
		struct mem_policy *pol, struct uvm_sim_result *r, struct err *e)
{
	struct uvm_sim s = {.r = r};
	struct mem_rt_backend be = {uvm_sim_migrate_in, uvm_sim_evict, uvm_sim_covers, NULL, &s};
	uint64_t capacity = o->budget >> MEM_BLOCK_SHIFT;
	int err;

	memset(r, 0, sizeof(*r));
	if (capacity > UINT32_MAX)
		capacity = UINT32_MAX;
	if (!capacity)
		return err_set(e, EINVAL, "budget %llu bytes is below one 2 MiB block",
			       (unsigned long long)o->budget);
	if (!(s.blocks = uvm_trace_blocks(t, &s.nblocks)))
		return err_set(e, ENOMEM, "simulator: out of memory");
	if (o->optimal) {
		be.next_use = uvm_sim_next_use;
		if ((err = uvm_sim_oracle_init(&s, t, e))) {
			free(s.blocks);
			free(s.next_rec);
			free(s.next_use);
			return err;
		}
	}
	if ((err = mem_rt_init(&s.rt, (uint32_t)capacity, pol, &be, e))) {
		free(s.blocks);
		return err;
	}
	s.rt.hits = o->hits;
	s.rt.defer_evict = o->hits; /* a trace of kernels' touches: the agent's budget */
	if (o->fault_pages)
		s.rt.fault_pages = o->fault_pages;
	err = uvm_pending_init(&s.pend, o->batch_max ? o->batch_max : UVM_BATCH_MAX, e);
	size_t first = t->cnt, last = 0; /* the accesses' span: compute time */
	for (size_t i = 0; !err && i < t->cnt; i++) {
		const struct uvm_rec *rec = &t->recs[i];
		if (rec->access == UVM_ACCESS_MANAGED)
			continue; /* in s.blocks: what a prefetch may name */
		if (first < t->cnt && rec->launch != t->recs[last].launch &&
		    ((err = uvm_sim_flush(&s, e)) || (o->hits && (err = mem_rt_trim(&s.rt, e)))))
			break;
		first = first < i ? first : i;
		last = i;
		r->accesses++;
		if (o->optimal)
			s.next_use[uvm_sim_block_index(&s, rec->addr)] = s.next_rec[i];
		if (mem_rt_resident(&s.rt, rec->addr)) {
			r->hits++;
			err = mem_rt_hit(&s.rt, rec->addr, rec->launch, e);
			continue;
		}
		if (!uvm_pending_add(&s.pend, rec->addr, rec->pid))
			r->dup_faults++;
		else if (s.pend.cnt == s.pend.max)
			err = uvm_sim_flush(&s, e);
	}
	if (!err)
		err = uvm_sim_flush(&s, e);
	if (!err && o->hits)
		err = mem_rt_trim(&s.rt, e);
	r->st = s.rt.st;
	for (int op = 0; op < MEM_OP_CNT; op++)
		r->backend[op] = mem_policy_backend(pol, (enum mem_op)op);
	if (first < last && t->recs[last].ts_ns > t->recs[first].ts_ns)
		r->compute_s = (double)(t->recs[last].ts_ns - t->recs[first].ts_ns) * 1e-9;
	r->overhead_s = (double)r->st.batches * o->link.batch_us * 1e-6 +
			(double)r->st.faults * o->link.fault_ns * 1e-9;
	r->transfer_s = (double)r->bytes_htod / (o->link.htod_gbps * 1e9) +
			(double)r->bytes_dtoh / (o->link.dtoh_gbps * 1e9);
	r->total_s = r->compute_s + r->overhead_s + r->transfer_s;
	uvm_pending_fini(&s.pend);
	mem_rt_fini(&s.rt);
	free(s.blocks);
	free(s.next_rec);
	free(s.next_use);
	free(s.index_of);
	return err;
}
