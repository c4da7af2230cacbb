/* SPDX-License-Identifier: MIT */
/*
 * mem_runtime.c - servicing a fault batch the way the UVM driver does,
 * with the policy's ops at the driver's decision points.
 *
 * Per batch: the faulting pages are grouped by block (in the order each
 * block first faulted).  Per block: (0) each faulting page brings its
 * whole big page (rt->fault_pages: 64 KiB), as the driver's fault service
 * fills the big pages of faulting pages before its prefetch decision
 * (uvm_perf_prefetch's fault-granularity growth); (1) the prefetch region
 * of each faulting page: the driver's density tree over resident | big
 * pages of the faulting pages
 * (uvm_perf_prefetch: the largest aligned subtree around the page whose
 * occupancy is above 51%), or the policy's; (2) a GPU block when the block
 * has none, evicting from the head of the list when the budget is full
 * (after gpu_evict_prepare); (3) migration; (4) gpu_block_activate for a
 * block that just became resident, gpu_block_access for one that already
 * was (default for both: move to the tail).
 *
 * With rt->defer_evict (the device signal: a snapshot reports what kernels
 * that already ran touched, all of it resident on the GPU then) no room is
 * made while servicing: mem_rt_trim evicts down to the budget at the
 * kernel boundary, in the policy's order.
 *
 * Invariants the policy cannot break: the list holds exactly the blocks
 * with on_gpu set, at most `capacity` of them (with defer_evict: after
 * mem_rt_trim); a block on the list has its
 * resident pages and only those; every faulting page is resident when
 * mem_rt_service returns.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mem_impl.h"

/* A block faulting in the batch in service. */
struct mem_rt_touch {
	uint32_t block;
	uint32_t pid;
	struct mem_bits faulted;
	uint32_t nfaults;
};

int mem_rt_init(struct mem_rt *rt, uint32_t capacity_blocks, struct mem_policy *pol,
		const struct mem_rt_backend *be, struct err *e)
{
	memset(rt, 0, sizeof(*rt));
	if (!capacity_blocks)
		return err_set(e, EINVAL, "memory budget below one 2 MiB block");
	rt->capacity = capacity_blocks;
	rt->fault_pages = MEM_GROUP_PAGES;
	rt->pol = pol;
	if (be)
		rt->be = *be;
	return mem_table_init(&rt->table, e);
}

void mem_rt_fini(struct mem_rt *rt)
{
	mem_table_fini(&rt->table);
	free(rt->pids);
	free(rt->touch);
	memset(rt, 0, sizeof(*rt));
}

int mem_rt_resident(const struct mem_rt *rt, uint64_t addr)
{
	uint32_t id = mem_table_find(&rt->table, addr);
	return id != MEM_NIL && mem_bits_test(&rt->table.blocks[id].resident,
					      (uint32_t)(addr >> MEM_PAGE_SHIFT) % MEM_PAGES);
}

void mem_rt_forget(struct mem_rt *rt, uint64_t va)
{
	uint32_t id = mem_table_find(&rt->table, va);
	if (id == MEM_NIL)
		return;
	struct mem_block *b = &rt->table.blocks[id];
	if (b->on_gpu) {
		for (uint32_t i = 0; i < rt->pid_cnt; i++)
			if (rt->pids[i].pid == b->pid && rt->pids[i].blocks)
				rt->pids[i].blocks--;
		mem_list_remove(&rt->table, id);
	}
	memset(&b->resident, 0, sizeof(b->resident));
	b->resident_pages = 0;
	b->faults = 0;
	b->activations = 0;
}

/* Resident blocks of pid: a linear table, workloads have a few processes. */
static uint32_t *mem_rt_pid_blocks(struct mem_rt *rt, uint32_t pid, struct err *e)
{
	for (uint32_t i = 0; i < rt->pid_cnt; i++)
		if (rt->pids[i].pid == pid)
			return &rt->pids[i].blocks;
	void *n = realloc(rt->pids, (rt->pid_cnt + 1) * sizeof(*rt->pids));
	if (!n) {
		err_set(e, ENOMEM, "memory runtime: out of memory");
		return NULL;
	}
	rt->pids = n;
	rt->pids[rt->pid_cnt].pid = pid;
	rt->pids[rt->pid_cnt].blocks = 0;
	return &rt->pids[rt->pid_cnt++].blocks;
}

/*
 * The driver's prefetch region for page p: see the file comment.  Levels
 * up to 64 pages lie inside one word of the bitmap, the rest are whole
 * words: one popcount each.
 */
static void mem_rt_tree_region(const struct mem_bits *counted, uint32_t p, uint32_t *first,
			       uint32_t *end)
{
	uint64_t word = counted->w[p / 64];

	*first = *end = p;
	for (uint32_t size = 1; size <= MEM_PAGES; size *= 2) {
		uint32_t f = p & ~(size - 1), n = 0;
		if (size < 64)
			n = (uint32_t)__builtin_popcountll(word >> (f % 64) & ((1ull << size) - 1));
		else
			for (uint32_t w = f / 64; w < (f + size) / 64; w++)
				n += (uint32_t)__builtin_popcountll(counted->w[w]);
		if (n * 100 > size * MEM_THRESHOLD_PCT) {
			*first = f;
			*end = f + size;
		}
	}
}

/* Run op on call when the policy sets it: 1 and *r0, or 0 for the default. */
static int mem_rt_call(struct mem_rt *rt, struct mem_call *call, uint64_t *r0)
{
	call->rt = rt;
	if (!mem_policy_has(rt->pol, call->op))
		return 0;
	return mem_policy_call(rt->pol, call, r0) == 0;
}

/* The big pages (rt->fault_pages) of the faulting pages of t. */
static void mem_rt_fault_granules(const struct mem_rt *rt, const struct mem_rt_touch *t,
				  struct mem_bits *out)
{
	uint32_t g = rt->fault_pages;

	*out = t->faulted;
	if (g <= 1 || g > MEM_PAGES || g & (g - 1))
		return;
	for (uint32_t p = 0; p < MEM_PAGES; p += g)
		if (mem_bits_count(&t->faulted, p, p + g))
			mem_bits_set_range(out, p, p + g);
}

/*
 * Pages to bring in for block t->block (in): the faulting big pages plus
 * the prefetch region of each faulting page (the driver's tree, or the
 * policy's).  driver: what the stock driver's fault service moves by
 * itself (big pages and tree), whatever the policy says.
 */
static void mem_rt_prefetch(struct mem_rt *rt, const struct mem_rt_touch *t,
			    struct mem_bits *in, struct mem_bits *driver)
{
	const struct mem_block *b = &rt->table.blocks[t->block];
	struct mem_bits counted, granules;

	mem_rt_fault_granules(rt, t, &granules);
	for (uint32_t w = 0; w < MEM_WORDS; w++)
		counted.w[w] = b->resident.w[w] | granules.w[w];
	*in = *driver = granules;
	for (uint32_t p = 0; p < MEM_PAGES; p++) {
		if (!mem_bits_test(&t->faulted, p))
			continue;
		uint32_t first, end;
		uint64_t r0;
		mem_rt_tree_region(&counted, p, &first, &end);
		mem_bits_set_range(driver, first, end);
		if (!mem_policy_has(rt->pol, MEM_OP_PREFETCH)) {
			mem_bits_set_range(in, first, end);
			continue;
		}
		struct mem_call call = {.op = MEM_OP_PREFETCH, .block = t->block,
					.counted = &counted};
		call.ctx.prefetch = (struct gpu_mem_prefetch_ctx){
			.block = t->block, .va_start = b->va,
			.fault_addr = b->va + ((uint64_t)p << MEM_PAGE_SHIFT), .pid = t->pid,
			.page_index = p, .region_first = first, .region_end = end,
			.max_first = 0, .max_end = MEM_PAGES, .now = rt->now,
			.resident_pages = b->resident_pages, .batch_faults = t->nfaults,
			.faults = b->faults};
		if (mem_rt_call(rt, &call, &r0) && r0 == GPU_MEM_BYPASS) {
			first = call.region_set ? call.region_first : p;
			end = call.region_set ? call.region_end : p;
		}
		mem_bits_set_range(in, first, end);
	}
	for (uint32_t w = 0; w < MEM_WORDS; w++) {
		in->w[w] &= ~b->resident.w[w];
		driver->w[w] &= ~b->resident.w[w];
	}
}

static int mem_rt_evict_block(struct mem_rt *rt, uint32_t id, struct err *e)
{
	struct mem_block *b = &rt->table.blocks[id];
	uint32_t *pid_blocks = mem_rt_pid_blocks(rt, b->pid, e);

	if (!pid_blocks)
		return -ENOMEM;
	if (rt->be.evict)
		rt->be.evict(rt->be.arg, b->va, &b->resident);
	rt->st.pages_out += b->resident_pages;
	rt->st.evictions++;
	memset(&b->resident, 0, sizeof(b->resident));
	b->resident_pages = 0;
	mem_list_remove(&rt->table, id);
	if (b->batch == rt->batch)
		rt->batch_listed--;
	(*pid_blocks)--;
	return 0;
}

/* The first block from the head that may go: not faulting in this batch,
 * or (when every resident block is) any block but keep. */
static uint32_t mem_rt_victim(const struct mem_rt *rt, uint32_t keep)
{
	const struct mem_table *t = &rt->table;

	if (rt->be.next_use) {
		uint32_t best = MEM_NIL;
		uint64_t far = 0;
		for (uint32_t id = t->head; id != MEM_NIL; id = t->blocks[id].next) {
			uint64_t n = rt->be.next_use(rt->be.arg, id, t->blocks[id].va);
			if (t->blocks[id].batch != rt->batch && (best == MEM_NIL || n > far))
				best = id, far = n;
		}
		if (best != MEM_NIL)
			return best;
	}

	for (uint32_t id = t->head; id != MEM_NIL; id = t->blocks[id].next)
		if (t->blocks[id].batch != rt->batch)
			return id;
	for (uint32_t id = t->head; id != MEM_NIL; id = t->blocks[id].next)
		if (id != keep)
			return id;
	return MEM_NIL;
}

/* Evict `needed` blocks by the list after the policy's evict_prepare
 * (keep: a block that must stay, or MEM_NIL). */
static int mem_rt_evict_some(struct mem_rt *rt, uint32_t needed, uint32_t keep, struct err *e)
{
	uint32_t count;
	uint64_t r0;

	struct mem_call call = {.op = MEM_OP_EVICT, .block = MEM_NIL};
	count = rt->table.list_len - rt->batch_listed;
	call.ctx.evict = (struct gpu_mem_evict_ctx){
		.now = rt->now, .needed = needed, .nr_candidates = count,
		.resident_blocks = rt->table.list_len, .capacity_blocks = rt->capacity};
	uint64_t n = needed;
	if (mem_rt_call(rt, &call, &r0) && r0 > needed && r0 <= INT32_MAX) {
		/* Batch eviction: up to a quarter of the budget more, never the
		 * blocks of this batch. */
		uint64_t most = needed + rt->capacity / 4;
		n = r0 > most ? most : r0;
		if (r0 > most)
			rt->st.clamped++;
	}
	for (uint64_t i = 0; i < n; i++) {
		uint32_t v = mem_rt_victim(rt, keep);
		if (v == MEM_NIL || (i >= needed && rt->table.blocks[v].batch == rt->batch))
			break;
		int err = mem_rt_evict_block(rt, v, e);
		if (err)
			return err;
	}
	return 0;
}

/* Make room for one more block (keep: the block that needs it). */
static int mem_rt_make_room(struct mem_rt *rt, uint32_t keep, struct err *e)
{
	if (rt->table.list_len < rt->capacity)
		return 0;
	return mem_rt_evict_some(rt, 1, keep, e);
}

int mem_rt_trim(struct mem_rt *rt, struct err *e)
{
	int err = 0;

	/* a batch of its own: every resident block is a candidate */
	rt->batch++;
	rt->touch_cnt = 0;
	rt->batch_listed = 0;
	while (!err && rt->table.list_len > rt->capacity) {
		uint32_t over = rt->table.list_len - rt->capacity;
		uint32_t len = rt->table.list_len;
		/* in steps a policy's bounded loops can follow */
		err = mem_rt_evict_some(rt, over < MEM_RT_TRIM_STEP ? over : MEM_RT_TRIM_STEP,
					MEM_NIL, e);
		if (!err && rt->table.list_len == len)
			break; /* nothing could go: cannot happen, the list is not empty */
	}
	return err;
}

/* Call gpu_block_activate or gpu_block_access (op) on block id: the
 * default, unless the policy bypasses it, moves the block to the tail. */
static int mem_rt_block_op(struct mem_rt *rt, enum mem_op op, uint32_t id, struct err *e)
{
	struct mem_block *b = &rt->table.blocks[id];
	uint32_t *pid_blocks = mem_rt_pid_blocks(rt, b->pid, e);
	uint64_t r0;

	if (!pid_blocks)
		return -ENOMEM;
	struct mem_call call = {.op = op, .block = id};
	call.ctx.block = (struct gpu_mem_block_ctx){
		.block = id, .va_start = b->va, .va_end = b->va + (1ull << MEM_BLOCK_SHIFT),
		.pid = b->pid, .resident_pages = b->resident_pages, .faults = b->faults,
		.activations = b->activations, .now = rt->now,
		.resident_blocks = rt->table.list_len, .capacity_blocks = rt->capacity,
		.pid_resident_blocks = *pid_blocks, .resident_groups = mem_bits_groups(&b->resident)};
	if (!mem_rt_call(rt, &call, &r0) || r0 != GPU_MEM_BYPASS)
		mem_list_move_tail(&rt->table, id);
	return 0;
}

int mem_rt_hit(struct mem_rt *rt, uint64_t addr, uint32_t launch, struct err *e)
{
	uint32_t id = mem_table_find(&rt->table, addr);

	if (!rt->hits || id == MEM_NIL || !rt->table.blocks[id].on_gpu ||
	    rt->table.blocks[id].hit_launch == (uint64_t)launch + 1 ||
	    !mem_policy_has(rt->pol, MEM_OP_ACCESS))
		return 0;
	rt->table.blocks[id].hit_launch = (uint64_t)launch + 1;
	rt->st.hit_calls++;
	return mem_rt_block_op(rt, MEM_OP_ACCESS, id, e);
}

static int mem_rt_service_block(struct mem_rt *rt, const struct mem_rt_touch *t,
				struct err *e)
{
	struct mem_block *b;
	struct mem_bits in, driver;
	int err;

	mem_rt_prefetch(rt, t, &in, &driver);
	int activate = !rt->table.blocks[t->block].on_gpu;
	if (activate) {
		if (!rt->defer_evict && (err = mem_rt_make_room(rt, t->block, e)))
			return err;
		mem_list_push_tail(&rt->table, t->block);
		rt->batch_listed++;
	}
	b = &rt->table.blocks[t->block];
	uint32_t *pid_blocks = mem_rt_pid_blocks(rt, b->pid, e);
	if (!pid_blocks)
		return -ENOMEM;
	if (activate) {
		(*pid_blocks)++;
		b->activations++;
		rt->st.activations++;
	}
	uint32_t n = mem_bits_count(&in, 0, MEM_PAGES);
	for (uint32_t w = 0; w < MEM_WORDS; w++)
		b->resident.w[w] |= in.w[w];
	b->resident_pages += n;
	rt->st.pages_in += n;
	rt->st.pages_prefetched += n - t->nfaults;
	if (rt->be.migrate_in)
		rt->be.migrate_in(rt->be.arg, b->va, &in, &driver);

	return mem_rt_block_op(rt, activate ? MEM_OP_ACTIVATE : MEM_OP_ACCESS, t->block, e);
}

/* The touch entry of block id in this batch, added when new. */
static struct mem_rt_touch *mem_rt_touch_of(struct mem_rt *rt, uint32_t id, uint32_t pid,
					    struct err *e)
{
	struct mem_block *b = &rt->table.blocks[id];

	if (b->batch == rt->batch)
		return &rt->touch[b->touch];
	if (rt->touch_cnt == rt->touch_cap) {
		uint32_t cap = rt->touch_cap ? rt->touch_cap * 2 : 64;
		struct mem_rt_touch *n = realloc(rt->touch, cap * sizeof(*n));
		if (!n) {
			err_set(e, ENOMEM, "memory runtime: out of memory");
			return NULL;
		}
		rt->touch = n;
		rt->touch_cap = cap;
	}
	struct mem_rt_touch *t = &rt->touch[rt->touch_cnt];
	memset(t, 0, sizeof(*t));
	t->block = id;
	t->pid = pid;
	b->batch = rt->batch;
	b->touch = rt->touch_cnt++;
	rt->batch_listed += b->on_gpu;
	return t;
}

/*
 * The whole-block prefetches queued by the policy: each block gets a GPU
 * block unless it has one (evicting by the list, never a block of this
 * batch: when none other is left the prefetch is dropped) and all its
 * pages.  Each is marked part of this batch, so a later one does not
 * evict it.
 */
static int mem_rt_do_ahead(struct mem_rt *rt, struct err *e)
{
	int err = 0;

	for (uint32_t i = 0; i < rt->ahead_cnt && !err; i++) {
		uint32_t id;
		if ((err = mem_table_get(&rt->table, rt->ahead[i], rt->ahead_pid[i], &id, e)))
			break;
		struct mem_block *b = &rt->table.blocks[id];
		if (b->resident_pages == MEM_PAGES || b->batch == rt->batch)
			continue;
		if (!b->on_gpu) {
			/* room now, even under defer_evict: a prefetch never
			 * takes the budget past what the kernels needed */
			if (rt->table.list_len >= rt->capacity &&
			    rt->table.list_len == rt->batch_listed)
				break; /* room only by evicting what this batch needs */
			if ((err = mem_rt_make_room(rt, id, e)))
				break;
			mem_list_push_tail(&rt->table, id);
			uint32_t *pid_blocks = mem_rt_pid_blocks(rt, b->pid, e);
			if (!pid_blocks) {
				err = -ENOMEM;
				break;
			}
			(*pid_blocks)++;
			b->activations++;
			rt->st.activations++;
		}
		b->batch = rt->batch;
		b->touch = MEM_NIL;
		rt->batch_listed++;
		struct mem_bits in, none = {{0}};
		for (uint32_t w = 0; w < MEM_WORDS; w++) {
			in.w[w] = ~b->resident.w[w];
			b->resident.w[w] = ~0ull;
		}
		uint32_t n = MEM_PAGES - b->resident_pages;
		b->resident_pages = MEM_PAGES;
		rt->st.pages_in += n;
		rt->st.pages_prefetched += n;
		rt->st.block_prefetches++;
		if (rt->be.migrate_in)
			rt->be.migrate_in(rt->be.arg, b->va, &in, &none);
	}
	rt->ahead_cnt = 0;
	return err;
}

int mem_rt_service(struct mem_rt *rt, const struct mem_fault *faults, size_t n, struct err *e)
{
	int err = 0;

	rt->batch++;
	rt->touch_cnt = 0;
	rt->batch_listed = 0;
	for (size_t i = 0; i < n; i++) {
		uint32_t id, p = (uint32_t)(faults[i].addr >> MEM_PAGE_SHIFT) % MEM_PAGES;
		if ((err = mem_table_get(&rt->table, faults[i].addr, faults[i].pid, &id, e)))
			return err;
		struct mem_block *b = &rt->table.blocks[id];
		if (mem_bits_test(&b->resident, p))
			continue;
		struct mem_rt_touch *t = mem_rt_touch_of(rt, id, faults[i].pid, e);
		if (!t)
			return -ENOMEM;
		if (mem_bits_test(&t->faulted, p))
			continue;
		mem_bits_set(&t->faulted, p);
		t->nfaults++;
		b->faults++;
		rt->now++;
		rt->st.faults++;
	}
	if (rt->touch_cnt)
		rt->st.batches++;
	for (uint32_t i = 0; i < rt->touch_cnt && !err; i++)
		err = mem_rt_service_block(rt, &rt->touch[i], e);
	if (!err && rt->ahead_cnt)
		err = mem_rt_do_ahead(rt, e);
	return err;
}
