/* SPDX-License-Identifier: MIT */
/*
 * The UVM simulator (src/policy/uvm_*.c) on small traces whose results are
 * worked out by hand in the comments: faults, batches, bytes each way,
 * evictions, the driver's tree prefetch, LRU by migration order (hits do
 * not refresh a block) against MRU, and the time model.  Then the trace
 * formats (round trips, errors that name the file and line or record), the
 * generators, and `gpuext sim` itself.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policy/uvm_sim.h"

#define POLICIES TEST_BPF_DIR "/policies"

/* Simulate text; granule: pages a fault moves (0: the default, 64 KiB);
 * hits: reach the policy (a trace of every access). */
static void sim_text_opts(const char *text, uint64_t budget_blocks, uint32_t batch_max,
			  const char *policy, uint32_t granule, int hits, struct uvm_sim_result *r)
{
	struct uvm_trace t;
	struct uvm_sim_opts o = {.budget = budget_blocks << MEM_BLOCK_SHIFT,
				 .batch_max = batch_max, .fault_pages = granule,
				 .optimal = policy && !strcmp(policy, "optimal"), .hits = hits,
				 .link = {1.0, 2.0, 10.0, 100.0}};
	struct mem_policy *pol = NULL;
	struct err e = {""};

	memset(&t, 0, sizeof(t));
	if (uvm_trace_parse_text(text, strlen(text), "case", &t, &e))
		fail_msg("%s", e.msg);
	if (policy && !o.optimal && mem_policy_open(policy, &pol, &e))
		fail_msg("%s", e.msg);
	if (uvm_sim_run(&t, &o, pol, r, &e))
		fail_msg("%s", e.msg);
	mem_policy_free(pol);
	uvm_trace_free(&t);
}

/* The hand-worked cases below count 4 KiB pages: a fault moves its page. */
static void sim_text(const char *text, uint64_t budget_blocks, uint32_t batch_max,
		     const char *policy, struct uvm_sim_result *r)
{
	sim_text_opts(text, budget_blocks, batch_max, policy, 1, 0, r);
}

/*
 * Budget 1 block; A, B, A in three launches.  A faults (1 page in), B
 * faults and evicts A (1 page out), A faults and evicts B: 3 faults in 3
 * batches, 3 pages in, 2 out, 2 evictions.  No prefetch: a lone faulting
 * page is 1 of 2 pages at the tree's second level (50%, not above 51%).
 */
static void test_one_block_budget(void **state)
{
	struct uvm_sim_result r;

	sim_text("# A, B, A\n"
		 "0 1 1 r 0x200000\n"
		 "10 2 1 r 0x400000\n"
		 "20 3 1 w 0x200000   # again\n",
		 1, 0, NULL, &r);
	assert_int_equal(r.accesses, 3);
	assert_int_equal(r.hits, 0);
	assert_int_equal(r.st.faults, 3);
	assert_int_equal(r.st.batches, 3);
	assert_int_equal(r.st.pages_prefetched, 0);
	assert_int_equal(r.bytes_htod, 3 * 4096);
	assert_int_equal(r.bytes_dtoh, 2 * 4096);
	assert_int_equal(r.st.evictions, 2);
	/* Time: 20 ns compute + 3 x 10 us + 3 x 100 ns + 12288 B at 1 GB/s
	 * + 8192 B at 2 GB/s = 20 + 30000 + 300 + 12288 + 4096 ns. */
	assert_true(r.total_s > 46703e-9 && r.total_s < 46705e-9);
	assert_true(r.compute_s > 19e-9 && r.compute_s < 21e-9);
}

/*
 * The driver's tree.  Launch 1 faults pages 0, 1, 2 of A: around page 0 the
 * 4-page node [0,4) holds 3 (75% > 51%), [0,8) holds 3 of 8 (no): page 3 is
 * prefetched.  Launch 2 reads page 3: a hit.  Launch 3 faults pages 16..21
 * of A: [16,24) holds 6 of 8 (75%), [16,32) 6 of 16 (no): pages 22, 23
 * prefetched.  3 + 6 faults, 1 + 2 prefetched, 12 pages in.
 */
static void test_tree_prefetch(void **state)
{
	struct uvm_sim_result r;

	sim_text("0 1 1 r 0x200000\n"
		 "1 1 1 r 0x201000\n"
		 "2 1 1 r 0x202000\n"
		 "3 2 1 r 0x203000\n"
		 "4 3 1 r 0x210000\n5 3 1 r 0x211000\n6 3 1 r 0x212000\n"
		 "7 3 1 r 0x213000\n8 3 1 r 0x214000\n9 3 1 r 0x215000\n",
		 4, 0, NULL, &r);
	assert_int_equal(r.st.faults, 9);
	assert_int_equal(r.hits, 1);
	assert_int_equal(r.st.pages_prefetched, 3);
	assert_int_equal(r.bytes_htod, 12 * 4096);
	assert_int_equal(r.st.batches, 2);
	assert_int_equal(r.st.evictions, 0);
	assert_int_equal(r.bytes_dtoh, 0);
}

/*
 * The driver's granule (the default, 64 KiB = 16 pages): a fault brings its
 * whole big page, and the tree counts big pages.  Launch 1 faults page 5
 * of A: pages [0,16).  Launch 2 faults page 20 ([16,32) in; [0,32) now
 * full, [0,64) 32 of 64 = 50%: no more).  Launch 3 faults one page in each
 * of the groups 2..16 of B: 15 groups, 240 pages (47% of the block: no),
 * but [0,256) holds 14 of its 16 groups (87%): 256 + 16 = 272 pages in.
 * Launch 4 faults in group 17 of B: 272 + 16 = 288 of 512 (56% > 51%):
 * the whole block.  Pages in: 16 + 16 + 512 = 544.
 * With the 4 KiB granule the same trace moves 1 + 1 + 15 + 1 pages.
 */
static void test_fault_granule(void **state)
{
	char text[4096];
	size_t n = 0;
	struct uvm_sim_result r;

	n += (size_t)snprintf(text + n, sizeof(text) - n, "0 1 1 r 0x205000\n1 2 1 r 0x214000\n");
	for (int g = 2; g <= 16; g++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%d 3 1 r 0x%x\n", g,
				      0x400000 + g * 0x10000 + 0x3000);
	snprintf(text + n, sizeof(text) - n, "20 4 1 r 0x%x\n", 0x400000 + 17 * 0x10000);
	sim_text_opts(text, 4, 0, NULL, 0, 0, &r);
	assert_int_equal(r.st.faults, 18);
	assert_int_equal(r.bytes_htod, 544 * 4096);
	assert_int_equal(r.st.pages_prefetched, 544 - 18);
	sim_text(text, 4, 0, NULL, &r);
	assert_int_equal(r.bytes_htod, 18 * 4096);
	/* prefetch-none cannot shrink a fault below the big page */
	sim_text_opts(text, 4, 0, POLICIES "/prefetch-none.bpf.o", 0, 0, &r);
	assert_int_equal(r.bytes_htod, 18 * 16 * 4096);
}

/*
 * Batching: a page faulting twice in a batch is one fault and one
 * duplicate; with batches of 2, three distinct faults in one launch make
 * 2 batches; a launch change closes the batch.
 */
static void test_batching(void **state)
{
	struct uvm_sim_result r;

	sim_text("0 1 1 r 0x200000\n"
		 "1 1 1 r 0x200000\n"
		 "2 1 1 r 0x400000\n"
		 "3 1 1 r 0x600000\n"
		 "4 2 1 r 0x800000\n",
		 10, 2, NULL, &r);
	assert_int_equal(r.st.faults, 4);
	assert_int_equal(r.dup_faults, 1);
	assert_int_equal(r.st.batches, 3);
	assert_int_equal(r.st.activations, 4);
}

/*
 * A, B, C, A, B, C with room for 2 blocks, one launch each.
 * Driver (LRU by migration): every access evicts the block needed next:
 * 6 faults, 4 evictions.  MRU: C evicts B ([A,C]); A hits; B evicts C
 * ([A,B]); C evicts B: 5 faults, 3 evictions, 1 hit.
 */
static void test_lru_against_mru(void **state)
{
	const char *cyc = "0 1 1 r 0x200000\n1 2 1 r 0x400000\n2 3 1 r 0x600000\n"
			  "3 4 1 r 0x200000\n4 5 1 r 0x400000\n5 6 1 r 0x600000\n";
	struct uvm_sim_result r;

	sim_text(cyc, 2, 0, NULL, &r);
	assert_int_equal(r.st.faults, 6);
	assert_int_equal(r.st.evictions, 4);
	assert_int_equal(r.hits, 0);
	sim_text(cyc, 2, 0, POLICIES "/mru.bpf.o", &r);
	assert_int_equal(r.st.faults, 5);
	assert_int_equal(r.st.evictions, 3);
	assert_int_equal(r.hits, 1);
	assert_true(r.st.policy_calls > 0);
	/* Belady: C evicts B (next used at 4, A at 3); A hits; B evicts A (never
	 * used again: furthest); C hits: 4 faults, 2 evictions, 2 hits. */
	sim_text(cyc, 2, 0, "optimal", &r);
	assert_int_equal(r.st.faults, 4);
	assert_int_equal(r.st.evictions, 2);
	assert_int_equal(r.hits, 2);
	/* A hit refreshes nothing under the driver: A, B, A(hit), C evicts A. */
	sim_text("0 1 1 r 0x200000\n1 2 1 r 0x400000\n2 3 1 r 0x200000\n"
		 "3 4 1 r 0x600000\n4 5 1 r 0x400000\n5 6 1 r 0x200000\n",
		 2, 0, NULL, &r);
	assert_int_equal(r.hits, 2);
	assert_int_equal(r.st.faults, 4);
	assert_int_equal(r.st.evictions, 2);
}

/*
 * Prefetch policies on one fault each in blocks A and B (two launches, room
 * for both).  always-max: the whole block comes with each fault (511 more
 * pages each).  prefetch-none: only the faulting pages.  adaptive-seq: a
 * first fault only records where the process is, the second (512 pages
 * further) is no run: the tree decides, nothing.
 */
static void test_prefetch_policies_exact(void **state)
{
	const char *two = "0 1 1 r 0x200000\n1 2 1 r 0x400000\n";
	struct uvm_sim_result r;

	sim_text(two, 4, 0, POLICIES "/prefetch-always-max.bpf.o", &r);
	assert_int_equal(r.st.faults, 2);
	assert_int_equal(r.st.pages_prefetched, 2 * 511);
	assert_int_equal(r.bytes_htod, 2 * 512 * 4096);
	sim_text(two, 4, 0, POLICIES "/prefetch-none.bpf.o", &r);
	assert_int_equal(r.st.pages_prefetched, 0);
	assert_int_equal(r.bytes_htod, 2 * 4096);
	sim_text(two, 4, 0, POLICIES "/prefetch-adaptive-seq.bpf.o", &r);
	assert_int_equal(r.st.pages_prefetched, 0);
	/* adaptive-seq on pages 16, 17, 18, 49 of A, one launch each.  16: no
	 * history, the tree: nothing.  17: a run (gap 1 <= 16), window 16 << 1
	 * = 32 pages: [17, 49), 31 prefetched.  18: a hit.  49: gap 32 from the
	 * last fault (17) breaks the run, the tree decides over pages 16..49
	 * (34): [32,64) holds 18 of 32 (56%), [0,64) 34 of 64 (53%), [0,128)
	 * 34 of 128 (no): [0,64) comes in, 30 more pages. */
	sim_text("0 1 1 r 0x210000\n1 2 1 r 0x211000\n2 3 1 r 0x212000\n3 4 1 r 0x231000\n",
		 4, 0, POLICIES "/prefetch-adaptive-seq.bpf.o", &r);
	assert_int_equal(r.st.faults, 3);
	assert_int_equal(r.hits, 1);
	assert_int_equal(r.st.pages_prefetched, 31 + 30);
	assert_int_equal(r.bytes_htod, (3 + 61) * 4096);
}

/*
 * seq-ahead on one page of each of the blocks 0..5, one launch each, room
 * for 4 (4 KiB granule).  Launch 1: block 0 faults; its activation asks
 * for blocks 1..32, the trace has 1..5: 1, 2, 3 come whole, 4 would need
 * to evict one of this batch's (none other is left): dropped.  Launch 2:
 * block 1 hits, goes to the head and asks for 4 and 5: 4 evicts 1 (the
 * head), 5 evicts 0.  Launches 3..6 hit.  1 fault, 5 whole blocks, 2
 * evictions (of 512 and 1 pages).  Hits reach the policy (--hits).
 */
static void test_block_prefetch(void **state)
{
	struct uvm_sim_result r;

	sim_text_opts("0 1 1 r 0x000000\n1 2 1 r 0x200000\n2 3 1 r 0x400000\n"
		      "3 4 1 r 0x600000\n4 5 1 r 0x800000\n5 6 1 r 0xa00000\n",
		      4, 0, POLICIES "/seq-ahead.bpf.o", 1, 1, &r);
	assert_int_equal(r.st.faults, 1);
	assert_int_equal(r.hits, 5);
	assert_int_equal(r.st.block_prefetches, 5);
	assert_int_equal(r.st.evictions, 2);
	assert_int_equal(r.bytes_htod, (1 + 5 * 512) * 4096);
	assert_int_equal(r.bytes_dtoh, (512 + 1) * 4096);
	assert_int_equal(r.st.clamped, 0);
}

/* A managed-block record is no access: it only widens what a whole-block
 * prefetch may name (and the footprint). */
static void test_managed_records(void **state)
{
	struct uvm_sim_result r;
	const char *acc = "0 1 1 r 0x000000\n1 2 1 r 0x200000\n";

	sim_text_opts(acc, 4, 0, POLICIES "/seq-ahead.bpf.o", 1, 1, &r);
	assert_int_equal(r.accesses, 2);
	assert_int_equal(r.st.block_prefetches, 1); /* block 1: the trace's only other */
	char text[256];
	snprintf(text, sizeof(text), "0 0 1 m 0x400000\n0 0 1 m 0x600000\n%s", acc);
	sim_text_opts(text, 4, 0, POLICIES "/seq-ahead.bpf.o", 1, 1, &r);
	assert_int_equal(r.accesses, 2);
	assert_int_equal(r.st.faults, 1);
	assert_int_equal(r.st.block_prefetches, 3); /* blocks 1, 2 and 3 */
}

/*
 * The budget at kernel boundaries (hits: a trace of kernels' touches, the
 * agent's).  Room for 2, a batch per fault; launches 1 and 2 each touch
 * A, B, C (one page).  Room made per fault: C evicts A, then A evicts B, B
 * evicts C, C evicts A: 6 pages in, 4 out (the thrash within a kernel that
 * the agent's kernels never saw: all three were resident while each ran).
 * Kernel boundaries: launch 1 brings A, B, C, then the trim
 * evicts A (the head); launch 2 hits B, C and brings A back; the trim
 * evicts B (by migration order, hits refresh nothing): 4 in, 2 out.
 */
static void test_kernel_boundary_budget(void **state)
{
	const char *abc = "0 1 1 r 0x200000\n1 1 1 r 0x400000\n2 1 1 r 0x600000\n"
			  "3 2 1 r 0x200000\n4 2 1 r 0x400000\n5 2 1 r 0x600000\n";
	struct uvm_sim_result r;

	sim_text(abc, 2, 1, NULL, &r);
	assert_int_equal(r.bytes_htod, 6 * 4096);
	assert_int_equal(r.bytes_dtoh, 4 * 4096);
	sim_text_opts(abc, 2, 1, NULL, 1, 1, &r);
	assert_int_equal(r.bytes_htod, 4 * 4096);
	assert_int_equal(r.bytes_dtoh, 2 * 4096);
	assert_int_equal(r.st.evictions, 2);
	assert_int_equal(r.hits, 2);
}

static void expect_parse_error(const char *text, const char *want)
{
	struct uvm_trace t;
	struct err e = {""};

	memset(&t, 0, sizeof(t));
	assert_int_not_equal(uvm_trace_parse_text(text, strlen(text), "x.trace", &t, &e), 0);
	if (!strstr(e.msg, want))
		fail_msg("'%s' lacks '%s'", e.msg, want);
	uvm_trace_free(&t);
}

static void test_text_errors(void **state)
{
	expect_parse_error("0 1 1 r 0x1000\n\n1 1 1 q 0x2000\n", "x.trace:3: access type");
	expect_parse_error("0 1 r 0x1000\n", "x.trace:1: expected 'TS LAUNCH PID");
	expect_parse_error("0 1 1 r\n", "x.trace:1: expected an address");
	expect_parse_error("0 1 1 r 0x10 junk\n", "x.trace:1: unexpected 'junk'");
	expect_parse_error("0 99999999999 1 r 0x10\n", "x.trace:1:");
}

static int same_rec(const struct uvm_rec *a, const struct uvm_rec *b)
{
	return a->addr == b->addr && a->ts_ns == b->ts_ns && a->launch == b->launch &&
	       a->pid == b->pid && a->access == b->access;
}

static void test_round_trips_and_binary_errors(void **state)
{
	struct uvm_gen_opts g = {.pattern = "moe", .size = 8 << 20, .seed = 3, .passes = 1,
				 .ns_per_access = 5};
	struct uvm_trace t, back;
	struct err e = {""};
	char bin[] = "/tmp/gpuext-trace-XXXXXX", txt[] = "/tmp/gpuext-trace-XXXXXX";
	int fb = mkstemp(bin), ft = mkstemp(txt);

	assert_true(fb >= 0 && ft >= 0);
	close(fb);
	close(ft);
	assert_int_equal(uvm_gen(&g, &t, &e), 0);
	assert_true(t.cnt > 1000);
	/* managed-block records (the agent's) round-trip too */
	struct uvm_rec m = {.addr = 0x40000000, .ts_ns = 1, .pid = 1, .access = UVM_ACCESS_MANAGED};
	assert_int_equal(uvm_trace_append(&t, &m, &e), 0);
	for (int text = 0; text <= 1; text++) {
		const char *path = text ? txt : bin;
		assert_int_equal(uvm_trace_write(path, &t, text, &e), 0);
		if (uvm_trace_read(path, &back, &e))
			fail_msg("%s", e.msg);
		assert_int_equal(back.cnt, t.cnt);
		for (size_t i = 0; i < t.cnt; i++)
			assert_true(same_rec(&back.recs[i], &t.recs[i]));
		uvm_trace_free(&back);
	}
	/* Cut the binary file short: the header's count no longer fits. */
	size_t len;
	char *data = test_read_file(bin, &len);
	FILE *f = fopen(bin, "wb");
	assert_non_null(f);
	fwrite(data, 1, len - 40, f);
	fclose(f);
	assert_int_not_equal(uvm_trace_read(bin, &back, &e), 0);
	assert_non_null(strstr(e.msg, bin));
	assert_non_null(strstr(e.msg, "records"));
	/* An unknown access type in record 2. */
	data[32 + 2 * 32 + 24] = 9;
	f = fopen(bin, "wb");
	fwrite(data, 1, len, f);
	fclose(f);
	assert_int_not_equal(uvm_trace_read(bin, &back, &e), 0);
	assert_non_null(strstr(e.msg, "record 2: unknown access type 9"));
	free(data);
	uvm_trace_free(&t);
	unlink(bin);
	unlink(txt);
}

static void test_generators(void **state)
{
	struct uvm_gen_opts g = {.pattern = "seq", .size = 4 << 20, .seed = 1, .passes = 2,
				 .ns_per_access = 2};
	struct uvm_trace a, b;
	struct err e = {""};

	assert_int_equal(uvm_gen(&g, &a, &e), 0);
	assert_int_equal(a.cnt, 2 * 1024);
	assert_int_equal(a.recs[1].addr - a.recs[0].addr, 4096);
	assert_int_equal(a.recs[1024].addr, a.recs[0].addr);
	assert_int_equal(a.recs[1024].launch, 1);
	assert_int_equal(uvm_trace_footprint(&a), 4 << 20);
	uvm_trace_free(&a);

	g.pattern = "dnn";
	g.size = 48 << 20;
	g.passes = 1;
	assert_int_equal(uvm_gen(&g, &a, &e), 0);
	assert_int_equal(a.cnt, 2 * 24 * 512); /* forward + backward, 24 layers of 2 MiB */
	assert_int_equal(a.recs[24 * 512].addr, a.recs[23 * 512].addr); /* backward starts at the top */
	uvm_trace_free(&a);

	const char *pats[] = {"random", "moe", "decode"};
	for (size_t i = 0; i < 3; i++) {
		g.pattern = pats[i];
		g.size = 64 << 20;
		g.seed = 7;
		assert_int_equal(uvm_gen(&g, &a, &e), 0);
		assert_int_equal(uvm_gen(&g, &b, &e), 0);
		assert_int_equal(a.cnt, b.cnt);
		for (size_t k = 0; k < a.cnt; k++)
			assert_true(same_rec(&a.recs[k], &b.recs[k]));
		uvm_trace_free(&b);
		g.seed = 8;
		assert_int_equal(uvm_gen(&g, &b, &e), 0);
		size_t n = a.cnt < b.cnt ? a.cnt : b.cnt, same = 0;
		for (size_t k = 0; k < n; k++)
			same += a.recs[k].addr == b.recs[k].addr;
		assert_true(same < n); /* another seed, another trace */
		assert_true(uvm_trace_footprint(&a) <= 64 << 20);
		uvm_trace_free(&a);
		uvm_trace_free(&b);
	}
	/* mix: pid 1 in the first third, pid 2 in the rest, both present. */
	g.pattern = "mix";
	g.size = 6 << 20;
	assert_int_equal(uvm_gen(&g, &a, &e), 0);
	size_t pid1 = 0, pid2 = 0;
	uint64_t base = 0x7f0000000000ull, third = (6ull << 20) / 4096 / 3;
	for (size_t k = 0; k < a.cnt; k++) {
		uint64_t page = (a.recs[k].addr - base) >> 12;
		if (a.recs[k].pid == 1) {
			pid1++;
			assert_true(page < third);
		} else {
			pid2++;
			assert_true(page >= third && page < 3 * third);
		}
	}
	assert_int_equal(pid1, pid2);
	assert_true(pid1 > 0);
	uvm_trace_free(&a);

	g.pattern = "zigzag";
	assert_int_not_equal(uvm_gen(&g, &a, &e), 0);
	assert_non_null(strstr(e.msg, "unknown pattern 'zigzag'"));
}

static void test_cli(void **state)
{
	char cmd[1024];
	int status;
	char *out;

	snprintf(cmd, sizeof(cmd),
		 "%s sim --gen seq --size 8M --oversub 2 --policy none --policy %s/mru.bpf.o "
		 "--json", test_cli_path(), POLICIES);
	out = test_run_cmd(cmd, &status);
	assert_int_equal(status, 0);
	assert_non_null(strstr(out, "\"policy\":\"none\""));
	assert_non_null(strstr(out, "mru.bpf.o\",\"name\":\"mru\",\"backend\":\"jit\""));
	/* 4 passes over 2048 pages, half of them fit: LRU faults on every one. */
	assert_non_null(strstr(out, "\"faults\":8192"));
	free(out);

	snprintf(cmd, sizeof(cmd), "%s sim --trace /nonexistent.trace --oversub 2",
		 test_cli_path());
	out = test_run_cmd(cmd, &status);
	assert_int_equal(status, 1);
	assert_non_null(strstr(out, "/nonexistent.trace"));
	free(out);

	snprintf(cmd, sizeof(cmd), "%s sim --gen seq --budget 1K", test_cli_path());
	out = test_run_cmd(cmd, &status);
	assert_int_equal(status, 1);
	assert_non_null(strstr(out, "below one 2 MiB block"));
	free(out);

	snprintf(cmd, sizeof(cmd), "%s sim --gen seq", test_cli_path());
	out = test_run_cmd(cmd, &status);
	assert_int_equal(status, 2);
	assert_non_null(strstr(out, "--budget BYTES or --oversub X"));
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_block_budget),
		cmocka_unit_test(test_tree_prefetch),
		cmocka_unit_test(test_fault_granule),
		cmocka_unit_test(test_block_prefetch),
		cmocka_unit_test(test_kernel_boundary_budget),
		cmocka_unit_test(test_managed_records),
		cmocka_unit_test(test_batching),
		cmocka_unit_test(test_lru_against_mru),
		cmocka_unit_test(test_prefetch_policies_exact),
		cmocka_unit_test(test_text_errors),
		cmocka_unit_test(test_round_trips_and_binary_errors),
		cmocka_unit_test(test_generators),
		cmocka_unit_test(test_cli),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
