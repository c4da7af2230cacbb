/* SPDX-License-Identifier: MIT */
/*
 * The CUPTI source (src/cuda/cupti.c, cupti_record.c) against the fake
 * libcupti (tests/fakecupti): records handed over through CUPTI's buffer
 * protocol reach the sink with every field mapped (compared with the
 * fake's documented generators), the API join, the flush timer, the
 * forced flush at stop, dropped records (CUPTI's count and a pool run
 * dry), and the fail-open paths: no library, a refused call, another CUPTI
 * major version.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cuda/cupti.h"
#include "testutil.h"

#define FAKE "build/fakecupti/libcupti.so.13"

enum { MAXREC = 64 };
static struct {
	struct gpuext_cupti_kernel k[MAXREC];
	struct gpuext_cupti_memcpy m[MAXREC];
	struct gpuext_cupti_uvm u[MAXREC];
	_Atomic unsigned nk, nm, nu;
} got;

static void on_kernel(void *arg, const struct gpuext_cupti_kernel *r)
{
	unsigned i = got.nk++;
	if (i < MAXREC)
		got.k[i] = *r;
}
static void on_memcpy(void *arg, const struct gpuext_cupti_memcpy *r)
{
	unsigned i = got.nm++;
	if (i < MAXREC)
		got.m[i] = *r;
}
static void on_uvm(void *arg, const struct gpuext_cupti_uvm *r)
{
	unsigned i = got.nu++;
	if (i < MAXREC)
		got.u[i] = *r;
}
/* the fake names some kernels as the agent's flat twins (ptx_inject.h) */
static const struct cupti_sink sink = {on_kernel, on_memcpy, on_uvm, NULL, "__gx_flat"};

static const char *const env_vars[] = {"FAKECUPTI_KERNELS", "FAKECUPTI_MEMCPYS",
				       "FAKECUPTI_UVM", "FAKECUPTI_BATCH",
				       "FAKECUPTI_FORCED_ONLY", "FAKECUPTI_DROPPED",
				       "FAKECUPTI_FAIL", "FAKECUPTI_VERSION", "FAKECUPTI_API_LAST",
				       "FAKECUPTI_NO_API"};

static int setup(void **state)
{
	for (size_t i = 0; i < sizeof(env_vars) / sizeof(env_vars[0]); i++)
		unsetenv(env_vars[i]);
	memset(&got, 0, sizeof(got));
	return 0;
}

static int teardown(void **state)
{
	cupti_stop();
	return 0;
}

static int start(unsigned flush_ms, unsigned bufs, size_t buf_size, struct err *e)
{
	struct cupti_opts o = {.kind_mask = CUPTI_WANT_KERNEL | CUPTI_WANT_MEMCPY |
					    CUPTI_WANT_UVM | CUPTI_WANT_API,
			       .flush_ms = flush_ms, .buffer_count = bufs, .buffer_size = buf_size,
			       .lib_path = FAKE};
	return cupti_start(&o, &sink, e);
}

static void test_fields(void **state)
{
	struct err e = {{0}};
	setenv("FAKECUPTI_KERNELS", "6", 1);
	setenv("FAKECUPTI_MEMCPYS", "4", 1);
	setenv("FAKECUPTI_UVM", "4", 1);
	assert_int_equal(start(60000, 0, 0, &e), 0);
	assert_true(cupti_running());
	cupti_flush();
	assert_int_equal(got.nk, 6);
	assert_int_equal(got.nm, 4);
	assert_int_equal(got.nu, 4);
	for (unsigned i = 0; i < 6; i++) {
		const struct gpuext_cupti_kernel *k = &got.k[i];
		uint64_t start = 1000000 + 1000ull * i;
		assert_int_equal(k->start, start);
		assert_int_equal(k->end, start + 100 + i);
		assert_int_equal(k->correlation_id, 100 + i);
		assert_int_equal(k->api_start, start - 500);
		assert_int_equal(k->api_end, start - 400);
		assert_int_equal(k->api_tid, 4242);
		assert_int_equal(k->context, 1);
		assert_int_equal(k->stream, 7 + i % 2);
		assert_int_equal(k->grid_x, i + 1);
		assert_int_equal(k->grid_y, 2);
		assert_int_equal(k->grid_z, 1);
		assert_int_equal(k->block_x, 128);
		assert_int_equal(k->block_y, 1);
		assert_int_equal(k->registers, 32);
		assert_int_equal(k->static_shared, 1024);
		assert_int_equal(k->dynamic_shared, 64 * i);
		assert_int_equal(k->graph_node, 0);
		if (i % 3 == 1) { /* 300 'k's: cut to the buffer */
			assert_int_equal(k->name_len, 300);
			assert_int_equal(strlen(k->name), GPUEXT_CUPTI_NAME_LEN - 1);
			assert_int_equal(k->flags, GPUEXT_CUPTI_KERNEL_NAME_TRUNCATED);
			char whole[301];
			memset(whole, 'k', 300);
			whole[300] = 0;
			assert_int_equal(k->name_hash, cupti_name_hash(whole));
		} else {
			const char *n = i % 3 ? "sm90_xmma_gemm_f16f16_f32_nn_n" : "_Z6vecaddPfS_S_i";
			assert_string_equal(k->name, n);
			assert_int_equal(k->name_len, strlen(n));
			assert_int_equal(k->name_hash, cupti_name_hash(n));
			assert_int_equal(k->flags, 0);
		}
	}
	/* FNV-1a 32 of "a" */
	assert_int_equal(cupti_name_hash("a"), 0xe40c292cu);
	for (unsigned i = 0; i < 4; i++) {
		const struct gpuext_cupti_memcpy *m = &got.m[i];
		uint64_t start = 2000000 + 1000ull * i;
		assert_int_equal(m->start, start);
		assert_int_equal(m->correlation_id, 5000 + i);
		assert_int_equal(m->api_start, start - 500);
		assert_int_equal(m->api_tid, 4242);
		assert_int_equal(m->stream, 3);
		if (i % 2 == 0) {
			assert_int_equal(m->kind, GPUEXT_CUPTI_COPY_HTOD);
			assert_int_equal(m->bytes, 4096 * (i + 1));
			assert_int_equal(m->end, start + 50);
			assert_int_equal(m->src_kind, GPUEXT_CUPTI_MEM_PAGEABLE);
			assert_int_equal(m->dst_kind, GPUEXT_CUPTI_MEM_DEVICE);
			assert_int_equal(m->flags, GPUEXT_CUPTI_COPY_ASYNC);
		} else {
			assert_int_equal(m->kind, GPUEXT_CUPTI_MEMSET);
			assert_int_equal(m->bytes, 1 << 20);
			assert_int_equal(m->value, 0xab);
			assert_int_equal(m->src_kind, 0);
			assert_int_equal(m->dst_kind, GPUEXT_CUPTI_MEM_DEVICE);
			assert_int_equal(m->flags, 0);
		}
	}
	static const struct { uint32_t kind, src, dst; uint64_t bytes, count, len; } uvm[] = {
		{GPUEXT_CUPTI_UVM_HTOD, GPUEXT_CUPTI_UVM_CPU, 0, 65536, 1, 30},
		{GPUEXT_CUPTI_UVM_DTOH, 0, GPUEXT_CUPTI_UVM_CPU, 4096, 1, 20},
		{GPUEXT_CUPTI_UVM_CPU_FAULT, GPUEXT_CUPTI_UVM_CPU, GPUEXT_CUPTI_UVM_CPU, 0, 1, 0},
		{GPUEXT_CUPTI_UVM_GPU_FAULT, 0, 0, 0, 3, 10},
	};
	for (unsigned i = 0; i < 4; i++) {
		const struct gpuext_cupti_uvm *u = &got.u[i];
		assert_int_equal(u->kind, uvm[i].kind);
		assert_int_equal(u->start, 3000000 + 1000ull * i);
		assert_int_equal(u->end - u->start, uvm[i].len);
		assert_int_equal(u->address, 0x7f0000000000ull + ((uint64_t)i << 20));
		assert_int_equal(u->bytes, uvm[i].bytes);
		assert_int_equal(u->count, uvm[i].count);
		assert_int_equal(u->src, uvm[i].src);
		assert_int_equal(u->dst, uvm[i].dst);
		assert_int_equal(u->pid, 1);
	}
	struct cupti_stats st;
	cupti_stats_get(&st);
	assert_int_equal(st.kernels, 6);
	assert_int_equal(st.memcpys, 2);
	assert_int_equal(st.memsets, 2);
	assert_int_equal(st.uvm, 4);
	assert_int_equal(st.api, 10);
	assert_int_equal(st.unjoined, 0);
	assert_int_equal(st.dropped, 0);
	assert_int_equal(st.starved, 0);
}

/* Wait up to 3 s for n kernel records. */
static void wait_kernels(unsigned n)
{
	for (int i = 0; i < 300 && got.nk < n; i++)
		usleep(10000);
}

static void test_timer_flush(void **state)
{
	struct err e = {{0}};
	setenv("FAKECUPTI_KERNELS", "5", 1);
	setenv("FAKECUPTI_BATCH", "2", 1); /* three timer ticks at least */
	assert_int_equal(start(10, 0, 0, &e), 0);
	wait_kernels(5);
	assert_int_equal(got.nk, 5);
	for (unsigned i = 0; i < 5; i++)
		assert_int_equal(got.k[i].correlation_id, 100 + i);
}

static void test_stop_flushes(void **state)
{
	struct err e = {{0}};
	setenv("FAKECUPTI_KERNELS", "4", 1);
	setenv("FAKECUPTI_FORCED_ONLY", "1", 1);
	assert_int_equal(start(10, 0, 0, &e), 0);
	usleep(50000); /* timer ticks: nothing without a forced flush */
	assert_int_equal(got.nk, 0);
	cupti_stop();
	assert_false(cupti_running());
	assert_int_equal(got.nk, 4);
}

static void test_dropped(void **state)
{
	struct err e = {{0}};
	struct cupti_stats st;
	setenv("FAKECUPTI_KERNELS", "20", 1);
	setenv("FAKECUPTI_DROPPED", "7", 1);
	/* two buffers of 1 KiB (a kernel record is 216 bytes, a call 40):
	 * CUPTI holds both until the flush ends, the rest has no buffer */
	assert_int_equal(start(60000, 2, 1024, &e), 0);
	cupti_flush();
	cupti_stats_get(&st);
	assert_int_equal(got.nk, st.kernels);
	assert_true(st.kernels >= 2 && st.kernels < 20);
	assert_true(st.starved > 0);
	/* the fake's own count plus every kernel and call record that found no buffer */
	assert_int_equal(st.dropped, 7 + (20 - st.kernels) + (20 - st.api));
	/* the buffers came back: the next flush has buffers again */
	cupti_stop();
	memset(&got, 0, sizeof(got));
	unsetenv("FAKECUPTI_DROPPED");
	setenv("FAKECUPTI_KERNELS", "2", 1);
	assert_int_equal(start(60000, 2, 1024, &e), 0);
	cupti_flush();
	assert_int_equal(got.nk, 2);
}

/* CUPTI returns the calls' buffer after the kernels': still joined. */
static void test_join_across_buffers(void **state)
{
	struct err e = {{0}};
	struct cupti_stats st;
	setenv("FAKECUPTI_KERNELS", "5", 1);
	setenv("FAKECUPTI_API_LAST", "1", 1);
	assert_int_equal(start(60000, 0, 0, &e), 0);
	cupti_flush();
	unsetenv("FAKECUPTI_API_LAST");
	assert_int_equal(got.nk, 5);
	for (unsigned i = 0; i < 5; i++) {
		assert_int_equal(got.k[i].api_tid, 4242);
		assert_int_equal(got.k[i].api_start, got.k[i].start - 500);
	}
	cupti_stats_get(&st);
	assert_int_equal(st.unjoined, 0);
	assert_int_equal(st.buffers, 2);
}

/* CUPTI refuses gpuext's clock: its own (CLOCK_REALTIME) is shifted to
 * CLOCK_MONOTONIC. */
static void test_realtime_fallback(void **state)
{
	struct err e = {{0}};
	struct timespec m, r;
	setenv("FAKECUPTI_KERNELS", "1", 1);
	setenv("FAKECUPTI_FAIL", "cuptiActivityRegisterTimestampCallback", 1);
	clock_gettime(CLOCK_MONOTONIC, &m);
	clock_gettime(CLOCK_REALTIME, &r);
	int64_t offset = ((int64_t)m.tv_sec - r.tv_sec) * 1000000000 + (m.tv_nsec - r.tv_nsec);
	assert_int_equal(start(60000, 0, 0, &e), 0);
	cupti_flush();
	assert_int_equal(got.nk, 1);
	int64_t shift = (int64_t)(got.k[0].start - 1000000);
	assert_true(shift - offset < 1000000000 && offset - shift < 1000000000);
	assert_int_equal(got.k[0].end - got.k[0].start, 100);
	assert_int_equal(got.k[0].start - got.k[0].api_start, 500);
}

static void test_unjoined(void **state)
{
	struct err e = {{0}};
	struct cupti_stats st;
	setenv("FAKECUPTI_KERNELS", "3", 1);
	setenv("FAKECUPTI_NO_API", "1", 1);
	assert_int_equal(start(60000, 0, 0, &e), 0);
	cupti_flush();
	unsetenv("FAKECUPTI_NO_API");
	assert_int_equal(got.nk, 3);
	for (unsigned i = 0; i < 3; i++) {
		assert_int_equal(got.k[i].correlation_id, 100 + i);
		assert_int_equal(got.k[i].api_start, 0);
		assert_int_equal(got.k[i].api_tid, 0);
	}
	cupti_stats_get(&st);
	assert_int_equal(st.unjoined, 3);
}

/* A forked child (inheriting the exit handlers that call cupti_stop) does
 * not touch the parent's collection; the parent's goes on. */
static void test_fork(void **state)
{
	struct err e = {{0}};
	setenv("FAKECUPTI_KERNELS", "2", 1);
	assert_int_equal(start(10, 0, 0, &e), 0);
	pid_t pid = fork();
	if (pid == 0) {
		int ok = !cupti_running();
		cupti_flush();
		cupti_stop();
		_exit(ok && got.nk == 0 ? 0 : 1);
	}
	int status = -1;
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_true(cupti_running());
	cupti_stop();
	assert_int_equal(got.nk, 2);
}

static void expect_fail(const char *lib, const char *fail, const char *version, int err,
			const char *msg)
{
	struct err e = {{0}};
	struct cupti_opts o = {.kind_mask = CUPTI_WANT_KERNEL | CUPTI_WANT_UVM, .lib_path = lib};
	if (fail)
		setenv("FAKECUPTI_FAIL", fail, 1);
	if (version)
		setenv("FAKECUPTI_VERSION", version, 1);
	assert_int_equal(cupti_start(&o, &sink, &e), -err);
	if (!strstr(e.msg, msg))
		fail_msg("expected '%s' in '%s'", msg, e.msg);
	assert_false(cupti_running());
	unsetenv("FAKECUPTI_FAIL");
	unsetenv("FAKECUPTI_VERSION");
}

static void test_fail_open(void **state)
{
	expect_fail("/nonexistent/libcupti.so", NULL, NULL, ENOENT,
		    "CUPTI: cannot load /nonexistent/libcupti.so (GPUEXT_CUPTI_PATH)");
	expect_fail(FAKE, "cuptiActivityEnable", NULL, EIO,
		    "CUPTI: enabling concurrent kernel activity failed: CUPTI_ERROR_NOT_SUPPORTED");
	expect_fail(FAKE, "cuptiActivityConfigureUnifiedMemoryCounter", NULL, EIO,
		    "cuptiActivityConfigureUnifiedMemoryCounter failed");
	expect_fail(FAKE, "cuptiActivityRegisterCallbacks", NULL, EIO,
		    "cuptiActivityRegisterCallbacks failed");
	expect_fail(FAKE, NULL, "120000", EPROTO, "has API version 120000, gpuext was built for");
	/* after every failure a start works */
	struct err e = {{0}};
	setenv("FAKECUPTI_KERNELS", "1", 1);
	assert_int_equal(start(60000, 0, 0, &e), 0);
	cupti_flush();
	assert_int_equal(got.nk, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_fields, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timer_flush, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_flushes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dropped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_join_across_buffers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_realtime_fallback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unjoined, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fork, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fail_open, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
