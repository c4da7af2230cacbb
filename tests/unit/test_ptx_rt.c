/* SPDX-License-Identifier: MIT */
/*
 * The host side of the device runtime without a GPU: the ring buffer
 * consumer against records laid out as the device runtime writes them,
 * trace_printk formatting, the error without a driver, and ptxas on every
 * module the GPU batch (tests/gpu, bench) loads.  With a GPU, the
 * contention test runs; without one it is reported as skipped.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptx/ptx_rt.h"

#define PTXAS "/usr/local/cuda/bin/ptxas"

/* What rt_rb_claim + rt_rb_commit leave in memory for one record. */
static void put_rec(unsigned char *data, uint64_t size, uint64_t *pos, const void *payload,
		    uint32_t len, uint32_t flags)
{
	uint64_t total = (len + 7) / 8 * 8 + 8, off = *pos & (size - 1);
	if (off + total > size) { /* padding to the end */
		uint32_t pad = (uint32_t)(size - off);
		uint32_t h = (pad - 8) | PTX_RB_DONE | PTX_RB_DISCARD;
		memcpy(data + off, &h, 4);
		*pos += pad;
		off = 0;
	}
	memcpy(data + off + 8, payload, len);
	uint32_t h = len | flags;
	memcpy(data + off, &h, 4);
	*pos += total;
}

struct got {
	int n;
	char text[16][32];
};

static int collect(void *arg, const void *data, size_t size)
{
	struct got *g = arg;
	snprintf(g->text[g->n++], 32, "%.*s", (int)size, (const char *)data);
	return 0;
}

static void test_ringbuf_consumer(void **state)
{
	enum { SIZE = 64 };
	unsigned char *mem = calloc(1, 4096 + SIZE);
	struct ptx_rt_map m = {0};
	struct got g = {0};
	uint64_t prod = 0;

	m.hdr.type = MAP_TYPE_RINGBUF;
	m.hdr.rb_size = SIZE;
	m.rb_ctrl = (struct ptx_rb_ctrl *)mem;
	m.rb_data = mem + 4096;
	put_rec(m.rb_data, SIZE, &prod, "first", 5, PTX_RB_DONE);
	put_rec(m.rb_data, SIZE, &prod, "gone", 4, PTX_RB_DONE | PTX_RB_DISCARD);
	put_rec(m.rb_data, SIZE, &prod, "busy", 4, PTX_RB_BUSY);
	assert_int_equal(ptx_rt_ringbuf_poll(&m, collect, &g), 1);
	assert_string_equal(g.text[0], "first");
	assert_int_equal(m.rb_ctrl->cons, 32); /* first + discarded, not the busy one */
	/* the consumed bytes are zero again: a new lap sees "not written" */
	for (int i = 0; i < 32; i++)
		assert_int_equal(m.rb_data[i], 0);
	/* submit the busy one; the next record does not fit before the end */
	uint32_t h = 4 | PTX_RB_DONE;
	memcpy(m.rb_data + 32, &h, 4);
	put_rec(m.rb_data, SIZE, &prod, "wrapped-around!", 15, PTX_RB_DONE);
	assert_int_equal(ptx_rt_ringbuf_poll(&m, collect, &g), 2);
	assert_string_equal(g.text[1], "busy");
	assert_string_equal(g.text[2], "wrapped-around!");
	assert_int_equal(m.rb_ctrl->cons, prod);
	assert_int_equal(ptx_rt_ringbuf_poll(&m, collect, &g), 0);
	free(mem);
}

static void test_trace_format(void **state)
{
	unsigned char buf[sizeof(struct ptx_trace_rec) + 64];
	struct ptx_trace_rec *r = (struct ptx_trace_rec *)buf;
	const char fmt[] = "sm %d lane %u x=%llx %s 100%%";
	char out[128];

	r->magic = PTX_TRACE_MAGIC;
	r->fmt_len = sizeof(fmt);
	r->args[0] = (uint64_t)-3;
	r->args[1] = 31;
	r->args[2] = 0xabcdef12345ull;
	memcpy(r + 1, fmt, sizeof(fmt));
	assert_true(ptx_rt_trace_format(buf, sizeof(*r) + sizeof(fmt), out, sizeof(out)) > 0);
	assert_string_equal(out, "sm -3 lane 31 x=abcdef12345 (gpu string at 0x0) 100%");
	r->magic = 0;
	assert_true(ptx_rt_trace_format(buf, sizeof(*r) + sizeof(fmt), out, sizeof(out)) < 0);
	r->magic = PTX_TRACE_MAGIC;
	r->fmt_len = 1000; /* longer than the record */
	assert_true(ptx_rt_trace_format(buf, sizeof(*r) + sizeof(fmt), out, sizeof(out)) < 0);
}

static void test_open_without_gpu_is_clear(void **state)
{
	struct ptx_rt *rt;
	struct err e = {{0}};

	if (ptx_rt_open(0, &rt, &e) == 0) {
		ptx_rt_close(rt); /* a GPU: nothing to check here */
		skip();
	}
	assert_true(strstr(e.msg, "no CUDA driver") || strstr(e.msg, "no usable GPU") ||
		    strstr(e.msg, "no GPU"));
}

/* The modules of the GPU batch, through ptxas (their target is sm_90). */
static void test_gpu_batch_ptx_assembles(void **state)
{
	char dir[] = "/tmp/gpuext-batch-XXXXXX", cmd[1024];
	int st, rm_st;

	/* The batch binaries are the plain build's; checking them once is enough. */
#ifdef __SANITIZE_ADDRESS__
	skip();
#endif
	if (access(PTXAS, X_OK))
		skip();
	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd),
		 "set -e; build/gpu/gpu_contention --ptx-out %s; "
		 "build/gpu/gpu_probe_bench --ptx-out %s; "
		 "for f in %s/contention-*-0.ptx %s/contention-3-1.ptx %s/bench-0-0.ptx; do "
		 PTXAS " -arch=sm_90 $f -o /dev/null; done", dir, dir, dir, dir, dir);
	char *out = test_run_cmd(cmd, &st);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	free(test_run_cmd(cmd, &rm_st));
	if (st)
		fail_msg("%s", out ? out : "");
	free(out);
}

static void test_contention_on_gpu(void **state)
{
	int st;
	char *out = test_run_cmd("build/gpu/gpu_contention", &st);

	if (st == 77) { /* no GPU */
		free(out);
		skip();
	}
	if (st)
		fail_msg("%s", out ? out : "");
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ringbuf_consumer),
		cmocka_unit_test(test_trace_format),
		cmocka_unit_test(test_open_without_gpu_is_clear),
		cmocka_unit_test(test_gpu_batch_ptx_assembles),
		cmocka_unit_test(test_contention_on_gpu),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
