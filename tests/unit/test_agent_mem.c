/* SPDX-License-Identifier: MIT */
/*
 * test_agent_mem.c - the agent's memory runtime (src/agent/agent_mem.c) fed
 * with CUPTI unified-memory records, acting through a recording driver:
 * the budget holds (a model of GPU-resident blocks built only from the
 * faults and the recorded prefetches never exceeds it), LRU order, a
 * shipped policy changes it, the evil policy is clamped and every hint
 * stays inside the managed allocation, driver failures stop the hints.
 * The device access signal: its window over the managed ranges, touched
 * pages serviced as faults (CUPTI then only counted), its trace, and the
 * same trace replayed by the simulator moving the same bytes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/agent_mem.h"
#include "policy/uvm_sim.h"
#include "testutil.h"

#define POLICIES TEST_BPF_DIR "/policies"
#define EVIL TEST_BPF_DIR "/tests/policies/evil.bpf.o"
#define BLK (2ull << 20)
#define BASE 0x7f0000000000ull /* a 2 MiB aligned fake managed address */
enum { NBLK = 64 };

/* The recording driver. */
static struct call {
	uint64_t va, len;
	int to_gpu;
} calls[4096];
static size_t ncalls;
static CUresult prefetch_result, stream_result;
static int streams, notices;
static pthread_t test_thread; /* set by setup */
static size_t foreign_calls;  /* prefetches made by another thread */
/* The model: blocks on the GPU, from faults in and hints out. */
static int on_gpu[NBLK];

static int model_resident(void)
{
	int n = 0;
	for (int b = 0; b < NBLK; b++)
		n += on_gpu[b];
	return n;
}

static CUresult fake_prefetch(CUdeviceptr va, size_t len, CUmemLocation loc, unsigned flags,
			      CUstream s)
{
	if (prefetch_result != CUDA_SUCCESS)
		return prefetch_result;
	assert_true(ncalls < sizeof(calls) / sizeof(calls[0]));
	assert_ptr_equal(s, (CUstream)0x5); /* the agent's own stream */
	calls[ncalls++] = (struct call){va, len, loc.type == CU_MEM_LOCATION_TYPE_DEVICE};
	foreign_calls += !pthread_equal(pthread_self(), test_thread);
	if (loc.type == CU_MEM_LOCATION_TYPE_HOST)
		for (uint64_t a = va; a < va + len; a += BLK)
			on_gpu[(a - BASE) / BLK] = 0;
	return CUDA_SUCCESS;
}
static CUresult fake_stream_create(CUstream *s, unsigned flags)
{
	streams++;
	*s = (CUstream)0x5;
	return stream_result;
}
static CUresult fake_ctx_set(CUcontext c) { return CUDA_SUCCESS; }
static CUresult fake_ctx_get(CUcontext *c)
{
	*c = (CUcontext)0x1;
	return CUDA_SUCCESS;
}
static CUresult fake_ctx_device(CUdevice *d)
{
	*d = 0;
	return CUDA_SUCCESS;
}
static void fake_notice(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	notices++;
}
static const struct agent_mem_driver drv = {fake_prefetch, fake_stream_create, fake_ctx_set,
					    fake_ctx_get, fake_ctx_device, fake_notice};

static void setup(uint64_t budget, const char *policy)
{
	struct err e = {""};
	agent_mem_teardown(); /* after a failed test */
	ncalls = foreign_calls = 0;
	test_thread = pthread_self();
	streams = notices = 0;
	prefetch_result = stream_result = CUDA_SUCCESS;
	memset(on_gpu, 0, sizeof(on_gpu));
	if (agent_mem_setup(budget, policy, &drv, &e))
		fail_msg("%s", e.msg);
}

/* One GPU fault record on page `page` of block b, serviced as a batch. */
static void fault(int b, unsigned page)
{
	struct gpuext_cupti_uvm r = {.kind = GPUEXT_CUPTI_UVM_GPU_FAULT, .count = 1, .pid = 7,
				     .address = BASE + b * BLK + page * 4096ull};
	agent_mem_uvm(&r);
	agent_mem_flush();
	if (r.address - BASE < NBLK * BLK)
		on_gpu[b] = 1; /* the driver migrated the faulting page */
}

/* The block of the i-th hint to the CPU, or -1. */
static int evicted(size_t i)
{
	for (size_t k = 0; k < ncalls; k++)
		if (!calls[k].to_gpu && !i--)
			return (int)((calls[k].va - BASE) / BLK);
	return -1;
}

static void test_budget_and_lru(void **state)
{
	struct agent_mem_stats st;

	setup(4 * BLK, NULL);
	agent_mem_alloc(BASE, NBLK * BLK);
	for (int b = 0; b < 8; b++) {
		fault(b, 0);
		assert_true(model_resident() <= 4);
	}
	/* LRU by migration order: 0..3 went, in order. */
	for (int i = 0; i < 4; i++)
		assert_int_equal(evicted((size_t)i), i);
	assert_int_equal(evicted(4), -1);
	fault(4, 16); /* a new big page of 4: moves it to the tail */
	fault(8, 0);
	assert_int_equal(evicted(4), 5);
	assert_true(model_resident() <= 4);
	/* the default prefetch (density tree) adds nothing to single faults */
	for (size_t k = 0; k < ncalls; k++)
		assert_false(calls[k].to_gpu);
	agent_mem_stats_get(&st);
	assert_int_equal(st.capacity_blocks, 4);
	assert_int_equal(st.evictions, 5);
	assert_int_equal(st.prefetch_calls_cpu, 5);
	/* one resident big page per block: a fault moves its 64 KiB */
	assert_int_equal(st.bytes_to_cpu, 5 * 65536);
	assert_int_equal(st.peak_resident_blocks, 4);
	assert_int_equal(st.fault_records, 10);
	assert_int_equal(streams, 1);
	agent_mem_teardown();
}

static void test_policy_changes_order(void **state)
{
	setup(4 * BLK, POLICIES "/mru.bpf.o," POLICIES "/prefetch-always-max.bpf.o");
	agent_mem_alloc(BASE, NBLK * BLK);
	for (int b = 0; b < 6; b++) {
		fault(b, 0);
		assert_true(model_resident() <= 4);
	}
	/* MRU: the newest candidate goes first (3, then 4), not 0 and 1. */
	assert_int_equal(evicted(0), 3);
	assert_int_equal(evicted(1), 4);
	/* always-max: the rest of each faulting block beyond the big page the
	 * driver moves itself is prefetched to the GPU, on the agent's stream,
	 * and evictions write back the whole block. */
	size_t gpu = 0;
	for (size_t k = 0; k < ncalls; k++)
		if (calls[k].to_gpu) {
			assert_int_equal(calls[k].va % BLK, 65536);
			assert_int_equal(calls[k].len, BLK - 65536);
			gpu++;
		} else {
			assert_int_equal(calls[k].len, BLK);
		}
	assert_int_equal(gpu, 6);
	agent_mem_teardown();
}

/* The hint thread sends the same hints, in the same order, as the
 * servicing thread would; a free waits for the queued ones. */
static void test_async_hints_same_calls(void **state)
{
	static struct call sync_calls[4096];
	size_t nsync;
	struct agent_mem_stats st;

	for (int async = 0; async < 2; async++) {
		setup(4 * BLK, POLICIES "/mru.bpf.o," POLICIES "/prefetch-always-max.bpf.o");
		agent_mem_async_hints(async);
		agent_mem_alloc(BASE, NBLK * BLK);
		for (int b = 0; b < 12; b++)
			fault(b % 7, (unsigned)b * 16);
		if (async) {
			agent_mem_free(BASE); /* drains the queue before it returns */
			assert_int_equal(ncalls, nsync);
			assert_int_equal(foreign_calls, nsync); /* all from the hint thread */
			for (size_t k = 0; k < ncalls; k++) {
				assert_int_equal(calls[k].va, sync_calls[k].va);
				assert_int_equal(calls[k].len, sync_calls[k].len);
				assert_int_equal(calls[k].to_gpu, sync_calls[k].to_gpu);
			}
		} else {
			nsync = ncalls;
			memcpy(sync_calls, calls, ncalls * sizeof(calls[0]));
			assert_true(nsync > 8);
		}
		agent_mem_stats_get(&st);
		assert_int_equal(st.prefetch_calls_gpu + st.prefetch_calls_cpu, nsync);
		assert_int_equal(streams, 1);
		agent_mem_async_hints(0);
		agent_mem_teardown();
	}
}

static void test_evil_clamped_inside_allocation(void **state)
{
	struct agent_mem_stats st;
	const uint64_t len = 5 * BLK + 12345; /* the last block is partly managed */

	setup(3 * BLK, EVIL);
	agent_mem_alloc(BASE, len);
	for (int round = 0; round < 3; round++)
		for (int b = 0; b < 6; b++) {
			fault(b, (unsigned)(round * 100 + b) % (b == 5 ? 3 : 512));
			assert_true(model_resident() <= 3);
		}
	fault(40, 0); /* outside the allocation: not the runtime's business */
	on_gpu[40] = 0;
	assert_true(ncalls > 0);
	for (size_t k = 0; k < ncalls; k++) {
		assert_true(calls[k].va >= BASE);
		assert_true(calls[k].va + calls[k].len <= BASE + len);
		assert_true(calls[k].len > 0);
	}
	agent_mem_stats_get(&st);
	assert_true(st.clamped > 0);
	assert_int_equal(st.untracked, 1);
	assert_true(st.peak_resident_blocks <= 3);
	agent_mem_teardown();
}

static void test_htod_and_free(void **state)
{
	struct agent_mem_stats st;

	setup(2 * BLK, NULL);
	agent_mem_alloc(BASE, 2 * BLK);
	agent_mem_alloc(BASE + 2 * BLK, 2 * BLK);
	/* a driver migration of 64 KiB: 16 pages the runtime now counts resident */
	struct gpuext_cupti_uvm r = {.kind = GPUEXT_CUPTI_UVM_HTOD, .address = BASE,
				     .bytes = 65536, .pid = 7};
	agent_mem_uvm(&r);
	agent_mem_flush();
	on_gpu[0] = 1;
	fault(1, 0);
	agent_mem_free(BASE); /* blocks 0 and 1 leave the model, nothing migrates */
	on_gpu[0] = on_gpu[1] = 0;
	fault(2, 0);
	fault(3, 0);
	assert_int_equal(ncalls, 0); /* room was made by the free, not by eviction */
	fault(0, 0);                 /* freed: untracked */
	on_gpu[0] = 0;
	/* migrations to the host: the runtime's eviction (cause 1, a user's
	 * migration), the driver's eviction (4), and the CPU's access (cause 2,
	 * coherence, and 3, the driver's read-ahead around a CPU fault) */
	struct gpuext_cupti_uvm d = {.kind = GPUEXT_CUPTI_UVM_DTOH, .address = BASE + 2 * BLK,
				     .bytes = 4096, .flags = 1, .pid = 7};
	agent_mem_uvm(&d);
	d.flags = 4;
	agent_mem_uvm(&d);
	d.flags = 2;
	d.bytes = 8192;
	agent_mem_uvm(&d);
	d.flags = 3;
	d.bytes = 16384;
	agent_mem_uvm(&d);
	agent_mem_stats_get(&st);
	assert_int_equal(st.dtoh_bytes, 4096 * 2 + 8192 + 16384);
	assert_int_equal(st.dtoh_cpu_bytes, 8192 + 16384);
	assert_int_equal(st.htod_records, 1);
	assert_int_equal(st.htod_bytes, 65536);
	assert_int_equal(st.untracked, 1);
	assert_int_equal(st.evictions, 0);
	agent_mem_teardown();
}

static void test_fail_open(void **state)
{
	struct agent_mem_stats st;

	setup(BLK, NULL);
	agent_mem_alloc(BASE, 8 * BLK);
	prefetch_result = CUDA_ERROR_INVALID_VALUE;
	for (int b = 0; b < 4; b++)
		fault(b, 0);
	agent_mem_stats_get(&st);
	assert_int_equal(st.driver_errors, 1); /* then no more calls */
	assert_int_equal(ncalls, 0);
	assert_int_equal(notices, 1);
	assert_int_equal(st.evictions, 3); /* the model goes on */
	agent_mem_teardown();

	setup(BLK, NULL);
	agent_mem_alloc(BASE, 8 * BLK);
	stream_result = CUDA_ERROR_OUT_OF_MEMORY;
	for (int b = 0; b < 4; b++)
		fault(b, 0);
	agent_mem_stats_get(&st);
	assert_int_equal(st.driver_errors, 1);
	assert_int_equal(streams, 1);
	assert_int_equal(ncalls, 0);
	agent_mem_teardown();

	struct err e = {""};
	assert_int_not_equal(agent_mem_setup(BLK - 1, NULL, &drv, &e), 0);
	assert_non_null(strstr(e.msg, "budget"));
	assert_int_not_equal(agent_mem_setup(BLK, POLICIES "/nope.bpf.o", &drv, &e), 0);
	assert_non_null(strstr(e.msg, "nope.bpf.o"));
	assert_false(agent_mem_active());
	/* records and allocations with the runtime off are ignored */
	agent_mem_alloc(BASE, BLK);
	fault(0, 0);
}

/* ---- the device access signal (agent_mem_touched) ---------------------- */

/* Snapshot `snap` saw pages [first, end) of block b touched. */
static void touched(uint32_t snap, int b, unsigned first, unsigned end)
{
	uint64_t addrs[512];
	size_t n = 0;
	for (unsigned p = first; p < end; p++)
		addrs[n++] = BASE + b * BLK + p * 4096ull;
	agent_mem_touched(addrs, n, snap, 1000ull * snap);
	on_gpu[b] = 1; /* the kernel's faults brought them in */
}

static void test_window(void **state)
{
	struct agent_mem_stats st;
	uint64_t base;
	uint32_t blocks;

	setup(4 * BLK, NULL);
	assert_int_equal(agent_mem_window(16, &base, &blocks), -1); /* nothing managed yet */
	agent_mem_alloc(BASE + 2 * BLK, 3 * BLK);
	assert_int_equal(agent_mem_window(16, &base, &blocks), 0);
	assert_int_equal(base, (BASE >> 21) + 2);
	assert_int_equal(blocks, 3);
	/* below the base: untracked (the base never moves); past max: cut */
	agent_mem_alloc(BASE, BLK + 1);
	agent_mem_alloc(BASE + 8 * BLK, 20 * BLK);
	assert_int_equal(agent_mem_window(16, &base, &blocks), 0);
	assert_int_equal(base, (BASE >> 21) + 2);
	assert_int_equal(blocks, 16);
	agent_mem_stats_get(&st);
	assert_int_equal(st.untracked_blocks, 2 + (8 + 20 - 2 - 16));
	agent_mem_teardown();
}

static void test_device_signal(void **state)
{
	struct agent_mem_stats st;
	char path[] = "/tmp/gpuext-signal-XXXXXX";
	struct err e = {""};

	setup(4 * BLK, NULL);
	agent_mem_alloc(BASE, NBLK * BLK);
	agent_mem_trace(1);
	for (int b = 0; b < 6; b++) { /* whole blocks, one snapshot each */
		touched((uint32_t)b, b, 0, 512);
		assert_true(model_resident() <= 4);
	}
	assert_int_equal(evicted(0), 0); /* LRU */
	assert_int_equal(evicted(1), 1);
	touched(6, 5, 0, 512); /* resident: no fault, nothing moves */
	size_t before = ncalls;
	touched(7, 0, 0, 16); /* evicted: faults again, 2 goes */
	assert_int_equal(evicted(2), 2);
	assert_int_equal(ncalls, before + 1);
	/* CUPTI's records are only counted now */
	struct gpuext_cupti_uvm r = {.kind = GPUEXT_CUPTI_UVM_GPU_FAULT, .count = 1, .pid = 7,
				     .address = BASE + 9 * BLK};
	agent_mem_uvm(&r);
	agent_mem_flush();
	agent_mem_stats_get(&st);
	assert_int_equal(st.fault_records, 1);
	assert_int_equal(st.evictions, 3);
	assert_int_equal(st.signal_snapshots, 8);
	assert_int_equal(st.signal_pages, 7 * 512 + 16);
	assert_int_equal(st.signal_faults, 6 * 512 + 16);
	assert_int_equal(st.bytes_to_cpu, 3 * BLK); /* evictions write whole blocks back */

	/* the trace: every touch, by snapshot; the simulator on it with the
	 * same budget and policy moves what the runtime moved */
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(agent_mem_trace_write(path, &e), 0);
	struct uvm_trace t = {0};
	assert_int_equal(uvm_trace_read(path, &t, &e), 0);
	assert_int_equal(t.cnt, 7 * 512 + 16);
	assert_int_equal(t.recs[0].addr, BASE);
	assert_int_equal(t.recs[t.cnt - 1].launch, 7);
	struct uvm_sim_opts o = {.budget = 4 * BLK, .link = UVM_LINK_DEFAULT};
	struct uvm_sim_result res;
	assert_int_equal(uvm_sim_run(&t, &o, NULL, &res, &e), 0);
	assert_int_equal(res.st.evictions, st.evictions);
	assert_int_equal(res.bytes_dtoh, st.bytes_to_cpu);
	assert_int_equal(res.bytes_htod, st.signal_faults * 4096 + st.bytes_to_gpu);
	uvm_trace_free(&t);
	unlink(path);
	agent_mem_teardown();
}

/* With a policy that sets gpu_block_access (lru), the device signal's hits
 * reach it: a block touched without faulting moves to the tail, which the
 * driver (faults only) would not do; the simulator with hits agrees. */
static void test_device_signal_hits(void **state)
{
	struct agent_mem_stats st;
	char path[] = "/tmp/gpuext-hits-XXXXXX";
	struct err e = {""};

	setup(4 * BLK, POLICIES "/lru.bpf.o");
	agent_mem_alloc(BASE, NBLK * BLK);
	agent_mem_trace(1);
	for (int b = 0; b < 4; b++)
		touched((uint32_t)b, b, 0, 512);
	touched(4, 0, 0, 512); /* a hit on block 0: to the tail */
	touched(5, 4, 0, 512);
	assert_int_equal(evicted(0), 1); /* not 0, the oldest migration */
	agent_mem_stats_get(&st);
	assert_int_equal(st.signal_faults, 5 * 512);

	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(agent_mem_trace_write(path, &e), 0);
	struct uvm_trace t = {0};
	struct mem_policy *pol = NULL;
	assert_int_equal(uvm_trace_read(path, &t, &e), 0);
	assert_int_equal(mem_policy_open(POLICIES "/lru.bpf.o", &pol, &e), 0);
	struct uvm_sim_opts o = {.budget = 4 * BLK, .link = UVM_LINK_DEFAULT, .hits = 1};
	struct uvm_sim_result res;
	assert_int_equal(uvm_sim_run(&t, &o, pol, &res, &e), 0);
	assert_int_equal(res.st.hit_calls, 1);
	assert_int_equal(res.st.evictions, st.evictions);
	assert_int_equal(res.bytes_dtoh, st.bytes_to_cpu);
	mem_policy_free(pol);
	uvm_trace_free(&t);
	unlink(path);
	agent_mem_teardown();
}

/* ---- end to end: gpuext run, the agent, the fake driver and libcupti ---- */

/* The number after "name": in out's {"mem":{...}} line, or -1. */
static long long json_stat(const char *out, const char *name)
{
	char key[64];
	snprintf(key, sizeof(key), "\"%s\":", name);
	const char *p = strstr(out, key);
	return p ? strtoll(p + strlen(key), NULL, 10) : -1;
}

/* gpuext run --json --mem-budget 8M [policy] -- managedapp 64, the fake
 * libcupti reporting 64 unified-memory records inside the allocation. */
static char *run_app(const char *env, const char *policy, char *log, size_t len, int *status)
{
	char dir[] = "/tmp/gpuext-mem-test-XXXXXX", cmd[2048];
	assert_non_null(mkdtemp(dir));
	snprintf(log, len, "%s/log", dir);
	snprintf(cmd, sizeof(cmd),
		 "FAKECUDA_LOG=%s FAKECUDA_MANAGED_AT=0x7f0000000000 FAKECUPTI_UVM=64 "
		 "GPUEXT_CUPTI_PATH=build/fakecupti/libcupti.so.13 "
		 "GPUEXT_AGENT=build/libgpuext-agent.so %s %s run --json --mem-budget 8M %s%s "
		 "-- build/fakecuda/managedapp 64",
		 log, env, test_cli_path(), policy ? "--mem-policy " : "", policy ? policy : "");
	char *out = test_run_cmd(cmd, status);
	assert_non_null(out);
	return out;
}

static void test_run_end_to_end(void **state)
{
	char log[256], line[256];
	int status;
	char *out = run_app("", POLICIES "/lfu.bpf.o", log, sizeof(log), &status);

	assert_int_equal(status, 0);
	assert_non_null(strstr(out, "managedapp ok"));
	assert_non_null(strstr(out, "\"policy\":\"lfu.bpf.o\""));
	assert_int_equal(json_stat(out, "allocs"), 1);
	assert_int_equal(json_stat(out, "fault_records"), 16); /* i % 4 == 3 of 64 */
	assert_int_equal(json_stat(out, "faults"), 48);
	assert_int_equal(json_stat(out, "capacity_blocks"), 4);
	assert_true(json_stat(out, "evictions") > 0);
	assert_true(json_stat(out, "peak_resident_blocks") <= 4);
	assert_int_equal(json_stat(out, "driver_errors"), 0);
	/* every hint the driver got is inside the managed allocation */
	FILE *f = fopen(log, "r");
	unsigned long long va, len;
	char where[8];
	long long cpu = 0;
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "prefetch %llx %llu %7s", &va, &len, where) == 3) {
			assert_true(va >= BASE && va + len <= BASE + (64ull << 20));
			cpu += !strcmp(where, "cpu");
		}
	fclose(f);
	assert_int_equal(cpu, json_stat(out, "prefetch_calls_cpu"));
	free(out);
}

static void test_run_fail_open(void **state)
{
	char log[256];
	int status;
	char *out = run_app("FAKECUDA_FAIL=cuMemPrefetchAsync_v2:1", NULL, log, sizeof(log),
			    &status);

	assert_int_equal(status, 0);
	assert_non_null(strstr(out, "managedapp ok"));
	assert_non_null(strstr(out, "placement hints stopped"));
	assert_int_equal(json_stat(out, "driver_errors"), 1);
	free(out);
	out = run_app("FAKECUDA_FAIL=cuStreamCreate:1", NULL, log, sizeof(log), &status);
	assert_int_equal(status, 0);
	assert_non_null(strstr(out, "managedapp ok"));
	assert_int_equal(json_stat(out, "prefetch_calls_cpu"), 0);
	free(out);
}

static void test_run_signal_options(void **state)
{
	char cmd[1024];
	int status;

	snprintf(cmd, sizeof(cmd), "%s run --mem-budget 8M --mem-signal gpu -- true 2>&1",
		 test_cli_path());
	char *out = test_run_cmd(cmd, &status);
	assert_int_equal(status, 2);
	assert_non_null(strstr(out, "--mem-signal gpu: device or cupti"));
	free(out);
	snprintf(cmd, sizeof(cmd),
		 "%s run --mem-budget 8M --mem-signal cupti --mem-trace t.trace -- true 2>&1",
		 test_cli_path());
	out = test_run_cmd(cmd, &status);
	assert_int_equal(status, 2);
	assert_non_null(strstr(out, "--mem-trace records the device signal"));
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_budget_and_lru),
		cmocka_unit_test(test_policy_changes_order),
		cmocka_unit_test(test_async_hints_same_calls),
		cmocka_unit_test(test_evil_clamped_inside_allocation),
		cmocka_unit_test(test_htod_and_free),
		cmocka_unit_test(test_fail_open),
		cmocka_unit_test(test_window),
		cmocka_unit_test(test_device_signal),
		cmocka_unit_test(test_device_signal_hits),
		cmocka_unit_test(test_run_end_to_end),
		cmocka_unit_test(test_run_fail_open),
		cmocka_unit_test(test_run_signal_options),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
