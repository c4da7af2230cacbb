/* SPDX-License-Identifier: MIT */
/*
 * Memory policies: the struct_ops loader on policy objects, every shipped
 * policy (the objects of policies/) loaded, verified with the policy profile,
 * JIT-compiled and run in the simulator on every synthetic workload; the
 * policies that restate the driver (lru, prefetch-tree) give exactly the
 * driver's results; and a misbehaving policy (tests/policies/evil.bpf.c)
 * is clamped while the data it moves stays right: every page's contents are
 * followed through migrations and evictions and checked against a model.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/object.h"
#include "policy/uvm_sim.h"

#define POLICIES TEST_BPF_DIR "/policies"
#define TEST_POLICIES TEST_BPF_DIR "/tests/policies"

static const char *const shipped[] = {
	"lru", "fifo", "lfu", "mru", "freq-decay", "fifo-chance", "pid-quota",
	"prefetch-none", "prefetch-always-max", "prefetch-adaptive-seq", "prefetch-stride",
	"prefetch-tree", "prefetch-pid-tree", "seq-ahead", "sweep-ahead",
};
enum { SHIPPED = sizeof(shipped) / sizeof(shipped[0]) };
static const char *const patterns[] = {"seq", "random", "moe", "decode", "dnn", "mix"};

static struct mem_policy *open_policy(const char *dir, const char *name)
{
	char path[256];
	struct mem_policy *pol;
	struct err e = {""};

	snprintf(path, sizeof(path), "%s/%s.bpf.o", dir, name);
	if (mem_policy_open(path, &pol, &e))
		fail_msg("%s", e.msg);
	return pol;
}

static void test_struct_ops_members(void **state)
{
	struct object *obj;
	struct err e = {""};

	assert_int_equal(object_open(POLICIES "/lfu.bpf.o", &obj, &e), 0);
	assert_int_equal(obj->struct_ops_cnt, 1);
	const struct object_struct_ops *so = object_find_struct_ops(obj, "gpu_mem_ops");

	assert_non_null(so);
	assert_string_equal(so->name, "lfu");
	assert_int_equal(so->member_cnt, 3);
	assert_string_equal(object_struct_ops_prog(so, "gpu_evict_prepare")->name, "lfu_evict");
	assert_string_equal(object_struct_ops_prog(so, "gpu_block_access")->name, "lfu_access");
	assert_null(object_struct_ops_prog(so, "gpu_page_prefetch"));
	assert_null(object_find_struct_ops(obj, "gpu_sched_ops"));
	object_free(obj);

	/* The loader binds any program; the policy runtime takes struct_ops ones only. */
	assert_int_equal(object_open(TEST_POLICIES "/reject_member.bpf.o", &obj, &e), 0);
	so = object_find_struct_ops(obj, "gpu_mem_ops");
	assert_string_equal(object_struct_ops_prog(so, "gpu_evict_prepare")->name, "not_an_op");
	object_free(obj);
	struct mem_policy *pol;
	assert_int_not_equal(mem_policy_open(TEST_POLICIES "/reject_member.bpf.o", &pol, &e), 0);
	assert_non_null(strstr(e.msg, "gpu_evict_prepare is set to 'not_an_op', a program of "
				      "section 'uprobe/cuLaunchKernel', not struct_ops/..."));
}

static void test_policy_profile_errors(void **state)
{
	struct mem_policy *pol;
	struct err e = {""};

	/* 24-byte evict ctx: offset 32 is inside the generic 96 but outside it. */
	assert_int_not_equal(mem_policy_open(TEST_POLICIES "/reject_ctx.bpf.o", &pol, &e), 0);
	assert_non_null(strstr(e.msg, "gpu_evict_prepare (prog 'past_end')"));
	assert_non_null(strstr(e.msg, "offset 32 size 8 is outside"));
	/* An object without a gpu_mem_ops variable. */
	assert_int_not_equal(mem_policy_open(TEST_BPF_DIR "/tests/progs/atomics.bpf.o", &pol, &e),
			     0);
	assert_non_null(strstr(e.msg, "no SEC(\".struct_ops\") variable of type struct gpu_mem_ops"));
	/* Two objects setting the same op. */
	assert_int_not_equal(mem_policy_open(POLICIES "/lfu.bpf.o," POLICIES "/mru.bpf.o", &pol, &e),
			     0);
	assert_non_null(strstr(e.msg, "gpu_evict_prepare is already set"));
	/* A missing file is named. */
	assert_int_not_equal(mem_policy_open(POLICIES "/nope.bpf.o", &pol, &e), 0);
	assert_non_null(strstr(e.msg, "nope.bpf.o"));
	/* An eviction and a prefetch policy together make one. */
	assert_int_equal(mem_policy_open(POLICIES "/mru.bpf.o," POLICIES "/prefetch-none.bpf.o",
					 &pol, &e), 0);
	assert_string_equal(mem_policy_name(pol), "mru+prefetch-none");
	assert_int_equal(mem_policy_backend(pol, MEM_OP_EVICT), PROG_BACKEND_JIT);
	assert_int_equal(mem_policy_backend(pol, MEM_OP_PREFETCH), PROG_BACKEND_JIT);
	assert_int_equal(mem_policy_backend(pol, MEM_OP_ACCESS), -1);
	mem_policy_free(pol);
}

static void gen(const char *pattern, struct uvm_trace *t)
{
	struct uvm_gen_opts g = {.pattern = pattern, .size = 32 << 20, .seed = 5, .passes = 3,
				 .ns_per_access = 2};
	struct err e = {""};
	if (uvm_gen(&g, t, &e))
		fail_msg("%s", e.msg);
}

static void sim(const struct uvm_trace *t, struct mem_policy *pol, struct uvm_sim_result *r)
{
	struct uvm_sim_opts o = {.budget = uvm_trace_footprint(t) * 2 / 3, .link = UVM_LINK_DEFAULT};
	struct err e = {""};
	if (uvm_sim_run(t, &o, pol, r, &e))
		fail_msg("%s", e.msg);
}

static void test_every_shipped_policy_runs(void **state)
{
	for (size_t p = 0; p < sizeof(patterns) / sizeof(patterns[0]); p++) {
		struct uvm_trace t;
		struct uvm_sim_result none, r;
		gen(patterns[p], &t);
		sim(&t, NULL, &none);
		for (size_t i = 0; i < SHIPPED; i++) {
			struct mem_policy *pol = open_policy(POLICIES, shipped[i]);
			for (int op = 0; op < MEM_OP_CNT; op++)
				assert_true(mem_policy_backend(pol, (enum mem_op)op) != PROG_BACKEND_INTERP);
			sim(&t, pol, &r);
			mem_policy_free(pol);
			if (r.st.policy_errors || r.st.clamped)
				fail_msg("%s on %s: %llu errors, %llu clamped", shipped[i], patterns[p],
					 (unsigned long long)r.st.policy_errors,
					 (unsigned long long)r.st.clamped);
			assert_true(r.st.policy_calls > 0);
			assert_int_equal(r.accesses, t.cnt);
			/* Every fault brings its page in; every eviction takes pages out. */
			assert_true(r.bytes_htod >= r.st.faults * 4096);
			assert_true(r.bytes_dtoh <= r.bytes_htod);
			/* only the faulting pages' big pages, which the driver
			 * moves whatever a policy says */
			if (!strcmp(shipped[i], "prefetch-none"))
				assert_true(r.bytes_htod <=
					    r.st.faults * (MEM_GROUP_PAGES << MEM_PAGE_SHIFT));
			/* The driver restated as policies: identical results. */
			if (!strcmp(shipped[i], "lru") || !strcmp(shipped[i], "prefetch-tree")) {
				assert_int_equal(r.st.faults, none.st.faults);
				assert_int_equal(r.st.evictions, none.st.evictions);
				assert_int_equal(r.bytes_htod, none.bytes_htod);
				assert_int_equal(r.bytes_dtoh, none.bytes_dtoh);
				assert_int_equal(r.st.batches, none.st.batches);
			}
			/* Cyclic scans: MRU keeps part of the cycle, LRU none of it. */
			if (!strcmp(patterns[p], "seq") && !strcmp(shipped[i], "mru"))
				assert_true(r.st.faults * 3 < none.st.faults * 2);
			if (!strcmp(patterns[p], "seq") && !strcmp(shipped[i], "prefetch-always-max"))
				assert_true(r.st.faults * 2 <= none.st.faults);
		}
		uvm_trace_free(&t);
	}
}

/* The interpreter (the JIT's fallback) and the JIT decide the same. */
static void test_jit_and_interpreter_agree(void **state)
{
	const char *pats[] = {"moe", "decode"};

	for (size_t p = 0; p < 2; p++) {
		struct uvm_trace t;
		gen(pats[p], &t);
		for (size_t i = 0; i < SHIPPED; i++) {
			struct uvm_sim_result jit, interp;
			struct mem_policy *pol = open_policy(POLICIES, shipped[i]);
			sim(&t, pol, &jit);
			mem_policy_free(pol);
			pol = open_policy(POLICIES, shipped[i]);
			mem_policy_use_interp(pol);
			sim(&t, pol, &interp);
			mem_policy_free(pol);
			for (int op = 0; op < MEM_OP_CNT; op++)
				if (interp.backend[op] >= 0)
					assert_int_equal(interp.backend[op], PROG_BACKEND_INTERP);
			if (interp.st.faults != jit.st.faults ||
			    interp.st.evictions != jit.st.evictions ||
			    interp.bytes_htod != jit.bytes_htod ||
			    interp.st.pages_prefetched != jit.st.pages_prefetched ||
			    interp.st.policy_calls != jit.st.policy_calls)
				fail_msg("%s on %s: interpreter and JIT differ", shipped[i], pats[p]);
			assert_int_equal(interp.st.policy_errors, 0);
		}
		uvm_trace_free(&t);
	}
}

/*
 * Page contents followed through the runtime: the host copy, the GPU copy
 * (valid while resident), the expected value.  Migrations copy host->GPU,
 * evictions GPU->host; accesses read (check) or write the GPU copy.
 */
enum { DATA_BLOCKS = 12, DATA_PAGES = DATA_BLOCKS * MEM_PAGES, DATA_CAPACITY = 4 };
#define DATA_BASE 0x7f0000000000ull
#define POISON 0xdeadbeefdeadbeefull

struct data {
	uint64_t host[DATA_PAGES], gpu[DATA_PAGES], want[DATA_PAGES];
};

static size_t data_index(uint64_t va, uint32_t p)
{
	return (size_t)((va - DATA_BASE) >> MEM_PAGE_SHIFT) + p;
}

static void data_in(void *arg, uint64_t va, const struct mem_bits *pages,
		    const struct mem_bits *faulted)
{
	struct data *d = arg;
	for (uint32_t p = 0; p < MEM_PAGES; p++)
		if (mem_bits_test(pages, p))
			d->gpu[data_index(va, p)] = d->host[data_index(va, p)];
}

static void data_out(void *arg, uint64_t va, const struct mem_bits *pages)
{
	struct data *d = arg;
	for (uint32_t p = 0; p < MEM_PAGES; p++)
		if (mem_bits_test(pages, p)) {
			d->host[data_index(va, p)] = d->gpu[data_index(va, p)];
			d->gpu[data_index(va, p)] = POISON;
		}
}

/* Block prefetches may name the data's blocks only. */
static int data_covers(void *arg, uint64_t va)
{
	return va >= DATA_BASE && va < DATA_BASE + ((uint64_t)DATA_BLOCKS << MEM_BLOCK_SHIFT);
}

/* The model's invariants (mem_runtime.c's file comment). */
static void check_model(const struct mem_rt *rt)
{
	const struct mem_table *t = &rt->table;
	uint32_t listed = 0, on_gpu = 0, in_batch = 0;

	for (uint32_t id = t->head; id != MEM_NIL; id = t->blocks[id].next) {
		assert_true(t->blocks[id].on_gpu);
		assert_true(++listed <= t->cnt);
		in_batch += t->blocks[id].batch == rt->batch;
	}
	assert_int_equal(in_batch, rt->batch_listed);
	assert_int_equal(listed, t->list_len);
	assert_true(listed <= rt->capacity);
	for (uint32_t id = 0; id < t->cnt; id++) {
		const struct mem_block *b = &t->blocks[id];
		on_gpu += b->on_gpu;
		assert_int_equal(b->resident_pages, mem_bits_count(&b->resident, 0, MEM_PAGES));
		if (!b->on_gpu)
			assert_int_equal(b->resident_pages, 0);
	}
	assert_int_equal(on_gpu, listed);
}

static void run_data_workload(struct mem_policy *pol, struct mem_rt_stats *st)
{
	struct data *d = calloc(1, sizeof(*d));
	struct mem_rt rt;
	struct mem_rt_backend be = {.migrate_in = data_in, .evict = data_out,
				    .covers = data_covers, .arg = d};
	struct err e = {""};
	uint64_t rng = 42;

	assert_non_null(d);
	for (size_t i = 0; i < DATA_PAGES; i++)
		d->host[i] = d->want[i] = i * 0x9e3779b97f4a7c15ull;
	assert_int_equal(mem_rt_init(&rt, DATA_CAPACITY, pol, &be, &e), 0);
	for (int step = 0; step < 3000; step++) {
		/* A batch of up to 24 accesses: runs of a scan mixed with random pages. */
		struct mem_fault f[24];
		size_t idx[24], n = 0;
		for (int k = 0; k < 24; k++) {
			rng = rng * 6364136223846793005ull + 1442695040888963407ull;
			idx[k] = (rng >> 33) % 3 ? (size_t)(step * 24 + k) % DATA_PAGES
						 : (size_t)(rng >> 20) % DATA_PAGES;
			uint64_t addr = DATA_BASE + ((uint64_t)idx[k] << MEM_PAGE_SHIFT);
			if (!mem_rt_resident(&rt, addr))
				f[n++] = (struct mem_fault){addr, 1 + (uint32_t)(idx[k] % 2)};
		}
		assert_int_equal(mem_rt_service(&rt, f, n, &e), 0);
		check_model(&rt);
		for (int k = 0; k < 24; k++) {
			uint64_t addr = DATA_BASE + ((uint64_t)idx[k] << MEM_PAGE_SHIFT);
			if (!mem_rt_resident(&rt, addr)) {
				/* Evicted again within its batch (more blocks than
				 * the budget): the driver replays the fault. */
				struct mem_fault one = {addr, 1};
				assert_int_equal(mem_rt_service(&rt, &one, 1, &e), 0);
				check_model(&rt);
			}
			assert_true(mem_rt_resident(&rt, addr));
			assert_true(d->gpu[idx[k]] == d->want[idx[k]]);
			if (k % 3 == 0)
				d->gpu[idx[k]] = d->want[idx[k]] = rng ^ (uint64_t)k;
		}
	}
	/* Every page, wherever it is, holds what was last written. */
	for (size_t i = 0; i < DATA_PAGES; i++) {
		uint64_t addr = DATA_BASE + ((uint64_t)i << MEM_PAGE_SHIFT);
		uint64_t v = mem_rt_resident(&rt, addr) ? d->gpu[i] : d->host[i];
		if (v != d->want[i])
			fail_msg("page %zu: 0x%llx, want 0x%llx", i, (unsigned long long)v,
				 (unsigned long long)d->want[i]);
	}
	*st = rt.st;
	mem_rt_fini(&rt);
	free(d);
}

static void test_data_right_under_every_policy(void **state)
{
	struct mem_rt_stats st;

	run_data_workload(NULL, &st);
	assert_true(st.evictions > 100);
	for (size_t i = 0; i < SHIPPED; i++) {
		struct mem_policy *pol = open_policy(POLICIES, shipped[i]);
		run_data_workload(pol, &st);
		assert_int_equal(st.clamped, 0);
		mem_policy_free(pol);
	}
}

/* evil.bpf.c asks for everything it must not get: refused, counted, harmless. */
static void test_misbehaving_policy_is_clamped(void **state)
{
	struct mem_policy *pol = open_policy(TEST_POLICIES, "evil");
	struct mem_rt_stats st, none;

	run_data_workload(NULL, &none);
	run_data_workload(pol, &st);
	assert_true(st.clamped > st.policy_calls / 2);
	assert_int_equal(st.policy_errors, 0);
	/* "Evict everything" is cut to the needed block plus a quarter of the budget. */
	assert_true(st.evictions <= st.activations);
	/* Its prefetch region [400, 100000) is cut to [400, 512): 112 pages at
	 * most a fault, beyond the whole blocks it prefetched (only the
	 * data's: data_in would write past them). */
	assert_true(st.pages_prefetched <= st.faults * 112 + st.block_prefetches * MEM_PAGES);
	assert_true(st.block_prefetches > 0);
	mem_policy_free(pol);

	/* And in the simulator, beside the driver: the same accesses, served. */
	struct uvm_trace t;
	struct uvm_sim_result r;
	gen("random", &t);
	pol = open_policy(TEST_POLICIES, "evil");
	sim(&t, pol, &r);
	assert_true(r.st.clamped > 0);
	assert_int_equal(r.accesses, t.cnt);
	mem_policy_free(pol);
	uvm_trace_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_struct_ops_members),
		cmocka_unit_test(test_policy_profile_errors),
		cmocka_unit_test(test_every_shipped_policy_runs),
		cmocka_unit_test(test_jit_and_interpreter_agree),
		cmocka_unit_test(test_data_right_under_every_policy),
		cmocka_unit_test(test_misbehaving_policy_is_clamped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
