/* SPDX-License-Identifier: MIT */
/*
 * The nvidia-uvm tools source (src/cuda/uvm_tools.c) without a GPU: the
 * decoding of the driver's V2 queue entries (written here at the driver's
 * offsets, as its uvm_types.h lays them out), the ring protocol (the
 * driver's producer indices, wrap-around, slots given back), the gathering
 * of a fault's duplicate entries into one record, and the clear failure
 * where the driver is absent.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "cuda/uvm_tools.h"
#include "testutil.h"

static void put8(uint8_t *e, size_t off, uint8_t v) { e[off] = v; }
static void put16(uint8_t *e, size_t off, uint16_t v) { memcpy(e + off, &v, 2); }
static void put32(uint8_t *e, size_t off, uint32_t v) { memcpy(e + off, &v, 4); }
static void put64(uint8_t *e, size_t off, uint64_t v) { memcpy(e + off, &v, 8); }

/* UvmEventMigrationInfo_V2: type 0, cause 1, src 4, dst 6, address 16,
 * bytes 24, begin 32, end 40. */
static void migration(uint8_t *e, uint16_t src, uint16_t dst, uint64_t addr, uint64_t bytes,
		      uint8_t cause, uint64_t begin, uint64_t end)
{
	memset(e, 0, UVMT_ENTRY_SIZE);
	put8(e, 0, UVMT_EV_MIGRATION);
	put8(e, 1, cause);
	put16(e, 4, src);
	put16(e, 6, dst);
	put64(e, 16, addr);
	put64(e, 24, bytes);
	put64(e, 32, begin);
	put64(e, 40, end);
	put64(e, 56, 777); /* GPU timestamps: not used */
}

/* UvmEventGpuFaultInfo_V2: gpu 2, address 8, timestamp 16, batch 32, access 37. */
static void gpu_fault(uint8_t *e, uint16_t gpu, uint64_t addr, uint64_t ts, uint8_t access)
{
	memset(e, 0, UVMT_ENTRY_SIZE);
	put8(e, 0, UVMT_EV_GPU_FAULT);
	put8(e, 1, 2); /* fault type */
	put16(e, 2, gpu);
	put64(e, 8, addr);
	put64(e, 16, ts);
	put64(e, 24, 99); /* GPU timestamp */
	put32(e, 32, 5);  /* batch */
	put8(e, 36, 1);   /* client type */
	put8(e, 37, access);
}

static void test_decode(void **state)
{
	uint8_t e[UVMT_ENTRY_SIZE];
	struct gpuext_cupti_uvm r;

	migration(e, 0, 1, 0x7f0000200000ull, 65536, 2, 1000, 3000);
	assert_int_equal(uvmt_decode(e, 100, &r), 1);
	assert_int_equal(r.kind, GPUEXT_CUPTI_UVM_HTOD);
	assert_int_equal(r.src, GPUEXT_CUPTI_UVM_CPU);
	assert_int_equal(r.dst, 0);
	assert_int_equal(r.address, 0x7f0000200000ull);
	assert_int_equal(r.bytes, 65536);
	assert_int_equal(r.flags, 2); /* CUPTI's coherence cause: same value */
	assert_int_equal(r.start, 1100);
	assert_int_equal(r.end, 3100);
	assert_int_equal(r.count, 1);

	migration(e, 2, 0, 0x1000, 4096, 4, 5000, 0); /* async: no end stamp */
	assert_int_equal(uvmt_decode(e, -50, &r), 1);
	assert_int_equal(r.kind, GPUEXT_CUPTI_UVM_DTOH);
	assert_int_equal(r.src, 1);
	assert_int_equal(r.dst, GPUEXT_CUPTI_UVM_CPU);
	assert_int_equal(r.start, 4950);
	assert_int_equal(r.end, 4950);

	migration(e, 1, 2, 0x2000, 8192, 1, 10, 20);
	assert_int_equal(uvmt_decode(e, 0, &r), 1);
	assert_int_equal(r.kind, GPUEXT_CUPTI_UVM_DTOD);
	migration(e, 0, 0, 0x2000, 8192, 1, 10, 20); /* NUMA node to node */
	assert_int_equal(uvmt_decode(e, 0, &r), 0);

	gpu_fault(e, 1, 0x7f0000201000ull, 7000, 2);
	assert_int_equal(uvmt_decode(e, 1, &r), 1);
	assert_int_equal(r.kind, GPUEXT_CUPTI_UVM_GPU_FAULT);
	assert_int_equal(r.dst, 0);
	assert_int_equal(r.address, 0x7f0000201000ull);
	assert_int_equal(r.start, 7001);
	assert_int_equal(r.end, 7001);
	assert_int_equal(r.flags, 2); /* write */
	assert_int_equal(r.bytes, 0);

	/* UvmEventCpuFaultInfo: access 1, address 8, timestamp 16, pid 24, pc 32 */
	memset(e, 0, sizeof(e));
	put8(e, 0, UVMT_EV_CPU_FAULT);
	put8(e, 1, 1);
	put64(e, 8, 0xabc000);
	put64(e, 16, 9000);
	put32(e, 24, 4242);
	put64(e, 32, 0x401000);
	assert_int_equal(uvmt_decode(e, 0, &r), 1);
	assert_int_equal(r.kind, GPUEXT_CUPTI_UVM_CPU_FAULT);
	assert_int_equal(r.address, 0xabc000);
	assert_int_equal(r.pid, 4242);
	assert_int_equal(r.flags, 1);
	assert_int_equal(r.src, GPUEXT_CUPTI_UVM_CPU);

	/* UvmEventMapRemoteInfo_V2: cause 1, src 4, dst 6, address 8, size 16, ts 24 */
	memset(e, 0, sizeof(e));
	put8(e, 0, UVMT_EV_MAP_REMOTE);
	put8(e, 1, 3);
	put16(e, 4, 1);
	put16(e, 6, 0);
	put64(e, 8, 0x5000);
	put64(e, 16, 2 << 20);
	put64(e, 24, 11000);
	assert_int_equal(uvmt_decode(e, 0, &r), 1);
	assert_int_equal(r.kind, GPUEXT_CUPTI_UVM_REMOTE_MAP);
	assert_int_equal(r.bytes, 2 << 20);
	assert_int_equal(r.dst, GPUEXT_CUPTI_UVM_CPU);

	memset(e, 0, sizeof(e));
	put8(e, 0, UVMT_EV_GPU_FAULT_REPLAY); /* counted by the caller, no record */
	assert_int_equal(uvmt_decode(e, 0, &r), 0);
}

enum { RING = 8 };
static uint8_t ring[RING * UVMT_ENTRY_SIZE];
static uint64_t seen[64];
static size_t nseen;

static void take(void *arg, const uint8_t *entry)
{
	uint64_t a;
	memcpy(&a, entry + 16, 8);
	seen[nseen++] = a;
}

static void test_ring(void **state)
{
	struct uvmt_control ctl;
	memset(&ctl, 0, sizeof(ctl));
	for (unsigned i = 0; i < RING; i++)
		migration(ring + i * UVMT_ENTRY_SIZE, 0, 1, 100 + i, 4096, 2, 1, 2);
	/* the driver wrote slots 6, 7, 0, 1 (put wrapped to 2) */
	ctl.get_ahead = ctl.get_behind = 6;
	ctl.put_ahead = ctl.put_behind = 2;
	nseen = 0;
	assert_int_equal(uvmt_ring_drain(ring, &ctl, RING, take, NULL), 4);
	assert_int_equal(nseen, 4);
	assert_int_equal(seen[0], 106);
	assert_int_equal(seen[1], 107);
	assert_int_equal(seen[2], 100);
	assert_int_equal(seen[3], 101);
	/* every slot given back: the driver's "full" test reads get_behind */
	assert_int_equal(ctl.get_behind, 2);
	assert_int_equal(ctl.get_ahead, 2);
	assert_int_equal(uvmt_ring_drain(ring, &ctl, RING, take, NULL), 0);
	/* a full queue (one slot free, the driver's rule): 7 entries */
	ctl.put_behind = ctl.put_ahead = 1;
	nseen = 0;
	assert_int_equal(uvmt_ring_drain(ring, &ctl, RING, take, NULL), 7);
	assert_int_equal(seen[6], 100);
}

static struct gpuext_cupti_uvm out[16];
static size_t nout;

static void keep(void *arg, const struct gpuext_cupti_uvm *r)
{
	out[nout++] = *r;
}

static void test_gather(void **state)
{
	struct uvmt_gather g = {0};
	struct gpuext_cupti_uvm f = {.kind = GPUEXT_CUPTI_UVM_GPU_FAULT, .start = 10,
				     .address = 0x1000, .count = 1};
	struct gpuext_cupti_uvm m = {.kind = GPUEXT_CUPTI_UVM_HTOD, .start = 20,
				     .address = 0x1000, .bytes = 4096, .count = 1};
	nout = 0;
	/* a fault and two merged duplicates, then another page, same time */
	uvmt_gather_add(&g, &f, keep, NULL);
	uvmt_gather_add(&g, &f, keep, NULL);
	uvmt_gather_add(&g, &f, keep, NULL);
	assert_int_equal(nout, 0);
	f.address = 0x2000;
	uvmt_gather_add(&g, &f, keep, NULL);
	assert_int_equal(nout, 1);
	assert_int_equal(out[0].address, 0x1000);
	assert_int_equal(out[0].count, 3);
	/* the same page again, later: another fault (the driver serviced it again) */
	f.start = 11;
	uvmt_gather_add(&g, &f, keep, NULL);
	assert_int_equal(nout, 2);
	assert_int_equal(out[1].address, 0x2000);
	assert_int_equal(out[1].count, 1);
	/* a migration (another thread of the driver) between two entries of
	 * the fault passes at once; the fault stays one record */
	uvmt_gather_add(&g, &m, keep, NULL);
	assert_int_equal(nout, 3);
	assert_int_equal(out[2].kind, GPUEXT_CUPTI_UVM_HTOD);
	uvmt_gather_add(&g, &f, keep, NULL);
	assert_int_equal(nout, 3);
	uvmt_gather_flush(&g, keep, NULL);
	assert_int_equal(nout, 4);
	assert_int_equal(out[3].kind, GPUEXT_CUPTI_UVM_GPU_FAULT);
	assert_int_equal(out[3].start, 11);
	assert_int_equal(out[3].count, 2);
	assert_int_equal(g.have, 0);
	uvmt_gather_flush(&g, keep, NULL); /* nothing gathered: nothing */
	assert_int_equal(nout, 4);
}

static void sink(void *arg, const struct gpuext_cupti_uvm *r)
{
}

/* Without the driver (this machine) or without a UVM fd: a message that
 * says which, nothing left running. */
static void test_start_fails_clearly(void **state)
{
	struct err e = {{0}};
	struct uvmt_opts o = {.queue_entries = 1024, .uvm_fd = -1};
	int ret = uvmt_start(&o, sink, NULL, &e);
	assert_true(ret < 0);
	if (access("/dev/nvidia-uvm-tools", F_OK))
		assert_non_null(strstr(e.msg, "/dev/nvidia-uvm-tools"));
	else
		assert_non_null(strstr(e.msg, "UVM tools"));
	assert_false(uvmt_running());
	o.queue_entries = 1000;
	assert_int_equal(uvmt_start(&o, sink, NULL, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "queue of 1000 entries: not a power of 2"));
	uvmt_flush(); /* no-ops when not running */
	uvmt_stop();
	struct uvmt_stats st;
	uvmt_stats_get(&st);
	assert_int_equal(st.records, 0);
	assert_int_equal(st.counters_ok, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode),
		cmocka_unit_test(test_ring),
		cmocka_unit_test(test_gather),
		cmocka_unit_test(test_start_fails_clearly),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
