/* SPDX-License-Identifier: MIT */
/*
 * The CUPTI tools: kernelsnoop and uvmtrace (tools/NAME.bpf.c) verify as
 * cupti programs, run JIT-compiled on gpuext records and leave what
 * their formatters (src/cli/tool_kernelsnoop.c, tool_uvmtrace.c, compiled
 * in) print exactly; and end to end, `gpuext run` with the agent, the fake
 * driver (tests/fakecuda) and the fake libcupti (tests/fakecupti): every
 * record reaches the tool, records that CUPTI hands over only at a forced
 * flush arrive at exit, and every failure (no libcupti, a CUPTI call that
 * refuses, dropped records) leaves the application running with one
 * "gpuext: " line.
 */
#include "testutil.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf/jit.h"
#include "bpf/map.h"
#include "bpf/object.h"
#include "bpf/verifier.h"

#include "../../src/cli/hist.c"
#include "../../src/cli/tool_map.c"
#include "../../src/cli/tool_kernelsnoop.c"
#include "../../src/cli/tool_uvmtrace.c"

/* What the formatters call from the CLI's other files (not linked in). */
void cli_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void cli_json_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++)
		if (*s == '"' || *s == '\\')
			fprintf(out, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(out, "\\u%04x", *s);
		else
			fputc(*s, out);
	fputc('"', out);
}

static struct object *tool_open(const char *name)
{
	char path[256];
	struct object *obj;
	struct err e = {{0}};
	snprintf(path, sizeof(path), TEST_BPF_DIR "/tools/%s.bpf.o", name);
	if (object_open(path, &obj, &e) || object_create_maps(obj, &e))
		fail_msg("%s: %s", path, e.msg);
	for (size_t i = 0; i < obj->prog_cnt; i++) {
		struct vfy_opts vo = {.profile = VFY_PROFILE_AUTO};
		if (verifier_check(obj->progs[i], &vo, NULL, &e))
			fail_msg("%s: %s: %s", path, obj->progs[i]->name, e.msg);
		if (jit_compile(obj->progs[i], NULL, &e))
			fail_msg("%s: %s: %s", path, obj->progs[i]->name, e.msg);
	}
	return obj;
}

static void run_jit(struct object *obj, const char *name, const void *rec)
{
	struct prog_run_opts o = {.args = {(uintptr_t)rec}};
	uint64_t r0 = 1;
	struct err e = {{0}};
	if (jit_run(object_find_prog(obj, name), &o, &r0, &e))
		fail_msg("%s: %s", name, e.msg);
	assert_int_equal(r0, 0);
}

/* Every ring buffer record through the formatter's event callback into out. */
struct feed {
	FILE *out;
	int json;
	int (*event)(FILE *, const struct object *, const char *, const void *, size_t, int);
};

static int feed_one(void *arg, const void *data, size_t size)
{
	struct feed *f = arg;
	assert_int_equal(f->event(f->out, NULL, "events", data, size, f->json), 0);
	return 0;
}

static void capture_begin(FILE **f, char **buf, size_t *len)
{
	*f = open_memstream(buf, len);
	assert_non_null(*f);
}

/* Each line of text parses as JSON (python3's parser; skipped without it). */
static void assert_json_lines(const char *text)
{
	char path[] = "/tmp/gpuext-cupti-json-XXXXXX", cmd[512];
	int fd = mkstemp(path), status;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	snprintf(cmd, sizeof(cmd),
		 "command -v python3 >/dev/null || exit 0; python3 -c 'import json,sys\n"
		 "for l in open(sys.argv[1]): json.loads(l)' %s", path);
	char *out = test_run_cmd(cmd, &status);
	unlink(path);
	if (status)
		fail_msg("not JSON lines: %s\n%s", out, text);
	free(out);
}

static struct gpuext_cupti_kernel kernel_rec(const char *name, uint64_t start, uint64_t dur,
					     uint32_t grid)
{
	struct gpuext_cupti_kernel k = {
		.start = start, .end = start + dur, .api_start = start - 2500,
		.api_end = start - 2000, .correlation_id = 9, .api_tid = 77, .stream = 13,
		.grid_x = grid, .grid_y = 1, .grid_z = 1, .block_x = 256, .block_y = 1,
		.block_z = 1, .registers = 40, .name_len = (uint32_t)strlen(name),
	};
	snprintf(k.name, sizeof(k.name), "%s", name);
	k.name_hash = (uint32_t)strlen(name) * 2654435761u; /* any stable value per name */
	return k;
}

static void test_kernelsnoop(void **state)
{
	struct object *obj = tool_open("kernelsnoop");
	struct gpuext_cupti_kernel recs[] = {
		kernel_rec("_Z6vecaddPfS_S_i", 1000000, 4000, 4096),
		kernel_rec("ampere_sgemm_128x64_nn", 1010000, 250000, 80),
		kernel_rec("_Z6vecaddPfS_S_i", 1300000, 6000, 4096),
	};
	for (size_t i = 0; i < 3; i++)
		run_jit(obj, "ks_kernel", &recs[i]);
	char *buf;
	size_t len;
	FILE *f;
	capture_begin(&f, &buf, &len);
	tool_kernelsnoop_reset();
	struct feed fd = {f, 0, tool_kernelsnoop_event};
	assert_int_equal(map_ringbuf_consume(object_find_map(obj, "events")->map, feed_one, &fd), 3);
	assert_int_equal(tool_kernelsnoop_summary(f, obj, NULL, 0), 0);
	fclose(f);
	assert_string_equal(
		buf,
		"     TIME_MS       DUR_US  LAUNCH_US STREAM             GRID          BLOCK  REGS KERNEL\n"
		"       0.000        4.000      2.500     13         4096,1,1        256,1,1    40 _Z6vecaddPfS_S_i\n"
		"       0.010      250.000      2.500     13           80,1,1        256,1,1    40 ampere_sgemm_128x64_nn\n"
		"       0.300        6.000      2.500     13         4096,1,1        256,1,1    40 _Z6vecaddPfS_S_i\n"
		"\n"
		"3 kernels, 2 distinct names\n"
		"   COUNT       TOTAL_US      MEAN_US       MAX_US  KERNEL\n"
		"       1        250.000      250.000      250.000  ampere_sgemm_128x64_nn\n"
		"       2         10.000        5.000        6.000  _Z6vecaddPfS_S_i\n"
		"\n"
		"@dur_ns:\n"
		"[2K, 4K)                    1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"[4K, 8K)                    1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"[8K, 16K)                   0 |                                                    |\n"
		"[16K, 32K)                  0 |                                                    |\n"
		"[32K, 64K)                  0 |                                                    |\n"
		"[64K, 128K)                 0 |                                                    |\n"
		"[128K, 256K)                1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"\n");
	free(buf);
	/* JSON: one object per kernel, the summary last; a quote in a name is escaped */
	for (size_t i = 0; i < 3; i++)
		run_jit(obj, "ks_kernel", &recs[i]);
	struct gpuext_cupti_kernel odd = kernel_rec("we\"ird", 2000000, 10, 1);
	odd.api_start = 0;
	run_jit(obj, "ks_kernel", &odd);
	capture_begin(&f, &buf, &len);
	tool_kernelsnoop_reset();
	fd = (struct feed){f, 1, tool_kernelsnoop_event};
	assert_int_equal(map_ringbuf_consume(object_find_map(obj, "events")->map, feed_one, &fd), 4);
	assert_int_equal(tool_kernelsnoop_summary(f, obj, NULL, 1), 0);
	assert_int_equal(tool_kernelsnoop_event(f, obj, "events", &odd, 5, 1), 1); /* not ours */
	fclose(f);
	assert_json_lines(buf);
	assert_non_null(strstr(buf, "{\"kernel\":\"ampere_sgemm_128x64_nn\",\"truncated\":false,"
				    "\"start_ns\":1010000,\"end_ns\":1260000,\"dur_ns\":250000,"));
	assert_non_null(strstr(buf, "\"api_start_ns\":1007500,\"api_end_ns\":1008000,\"api_tid\":77}"));
	assert_non_null(strstr(buf, "{\"kernel\":\"we\\\"ird\""));
	assert_non_null(strstr(buf, "{\"kernels\":4,\"names\":3,"));
	free(buf);
	tool_kernelsnoop_reset();
	object_free(obj);
}

static void test_uvmtrace(void **state)
{
	struct object *obj = tool_open("uvmtrace");
	const uint64_t blk = 0x7f0000000000ull; /* 2 MiB aligned */
	struct gpuext_cupti_uvm ev[] = {
		{.kind = GPUEXT_CUPTI_UVM_CPU_FAULT, .start = 1000, .end = 1000, .address = blk + 4096, .count = 1},
		{.kind = GPUEXT_CUPTI_UVM_CPU_FAULT, .start = 2000, .end = 2000, .address = blk + 8192, .count = 1},
		{.kind = GPUEXT_CUPTI_UVM_GPU_FAULT, .start = 3000, .end = 3100, .address = blk + (2 << 20), .count = 5},
		{.kind = GPUEXT_CUPTI_UVM_HTOD, .start = 4000, .end = 5000, .address = blk, .bytes = 1 << 20, .count = 1},
		{.kind = GPUEXT_CUPTI_UVM_HTOD, .start = 6000, .end = 7000, .address = blk + (2 << 20), .bytes = 2 << 20, .count = 1},
		{.kind = GPUEXT_CUPTI_UVM_DTOH, .start = 8000, .end = 9000, .address = blk + (2 << 20) + 65536, .bytes = 65536, .count = 1},
	};
	for (size_t i = 0; i < sizeof(ev) / sizeof(ev[0]); i++)
		run_jit(obj, "ut_event", &ev[i]);
	/* the per-block map */
	struct map *m = object_find_map(obj, "blocks")->map;
	uint64_t k0 = blk >> UT_BLOCK_SHIFT, k1 = k0 + 1;
	struct ut_block b0, b1;
	assert_int_equal(map_lookup_copy(m, &k0, &b0), 0);
	assert_int_equal(map_lookup_copy(m, &k1, &b1), 0);
	assert_int_equal(b0.cpu_faults, 2);
	assert_int_equal(b0.htod_bytes, 1 << 20);
	assert_int_equal(b0.first_ns, 1000);
	assert_int_equal(b0.last_ns, 5000);
	assert_int_equal(b1.gpu_faults, 1); /* one fault serviced (5 entries) */
	assert_int_equal(b1.htod_bytes, 2 << 20);
	assert_int_equal(b1.dtoh_bytes, 65536);
	assert_int_equal(b1.htod_count, 1);
	assert_int_equal(b1.dtoh_count, 1);
	assert_int_equal(b1.first_ns, 3000);
	assert_int_equal(b1.last_ns, 9000);
	char *buf;
	size_t len;
	FILE *f;
	capture_begin(&f, &buf, &len);
	tool_uvmtrace_reset();
	struct feed fd = {f, 0, tool_uvmtrace_event};
	assert_int_equal(map_ringbuf_consume(object_find_map(obj, "events")->map, feed_one, &fd), 6);
	assert_int_equal(tool_uvmtrace_summary(f, obj, NULL, 0), 0);
	fclose(f);
	/* totals, then the timeline: 8000 ns from the first event, 40 slices of 200 ns */
	const char *head =
		"KIND            EVENTS        COUNT          BYTES\n"
		"htod                 2            2        3145728\n"
		"dtoh                 1            1          65536\n"
		"cpu_fault            2            2              0\n"
		"gpu_fault            1            5              0\n"
		"\n"
		"timeline (40 slices of 0.2 us; bar: bytes migrated)\n"
		"        T_US    CPU_FLT    GPU_FLT   HTOD_MIB   DTOH_MIB\n"
		"         0.0          1          0       0.00       0.00 |                                                    |\n";
	if (strncmp(buf, head, strlen(head)))
		fail_msg("got:\n%s", buf);
	assert_non_null(strstr(buf, "\n         2.0          0          1       0.00       0.00 |  "));
	assert_non_null(strstr(buf, "\n         3.0          0          0       1.00       0.00 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |\n"));
	assert_non_null(strstr(buf, "\n         5.0          0          0       2.00       0.00 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"));
	assert_non_null(strstr(buf, "\n         7.0          0          0       0.00       0.06 |@@  "));
	assert_non_null(strstr(buf,
		"2 blocks of 2 MiB\n"
		"             BLOCK    CPU_FLT    GPU_FLT   HTOD_MIB   DTOH_MIB     FIRST_US      LAST_US\n"
		"    0x7f0000000000          2          0       1.00       0.00          0.0          4.0\n"
		"    0x7f0000200000          0          1       2.00       0.06          2.0          8.0\n"
		"\n"
		"@htod_bytes_per_2MiB[0x7f0000000000]:      1048576 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |\n"
		"@htod_bytes_per_2MiB[0x7f0000200000]:      2097152 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"));
	free(buf);
	for (size_t i = 0; i < sizeof(ev) / sizeof(ev[0]); i++)
		run_jit(obj, "ut_event", &ev[i]);
	capture_begin(&f, &buf, &len);
	tool_uvmtrace_reset();
	fd = (struct feed){f, 1, tool_uvmtrace_event};
	assert_int_equal(map_ringbuf_consume(object_find_map(obj, "events")->map, feed_one, &fd), 6);
	assert_int_equal(tool_uvmtrace_summary(f, obj, NULL, 1), 0);
	fclose(f);
	assert_json_lines(buf);
	assert_non_null(strstr(buf, "{\"kind\":4,\"start_ns\":3000,\"end_ns\":3100,"));
	assert_non_null(strstr(buf, "\"gpu_fault\":{\"events\":1,\"count\":5,\"bytes\":0}"));
	free(buf);
	tool_uvmtrace_reset();
	object_free(obj);
}

/* ---- end to end: gpuext run, the agent, fakecuda, fakecupti ---- */

#define APP "build/fakecuda/app tests/ptx_corpus/checked.compute_75.ptx vec_add reduce_atomic"

static char *run_tool(const char *env, const char *tool, const char *flags, int *status)
{
	char cmd[2048];
	snprintf(cmd, sizeof(cmd),
		 "GPUEXT_AGENT=build/libgpuext-agent.so GPUEXT_CUPTI_PATH=build/fakecupti/libcupti.so.13 "
		 "%s %s run %s " TEST_BPF_DIR "/tools/%s.bpf.o -- " APP,
		 env, test_cli_path(), flags, tool);
	char *out = test_run_cmd(cmd, status);
	assert_non_null(out);
	return out;
}

static int count(const char *text, const char *needle)
{
	int n = 0;
	for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static void need_fixtures(void)
{
	if (access("build/fakecuda/app", X_OK) || access("build/libgpuext-agent.so", R_OK) ||
	    access("build/fakecupti/libcupti.so.13", R_OK))
		skip();
}

static void test_run_kernelsnoop(void **state)
{
	int status;
	need_fixtures();
	char *out = run_tool("FAKECUPTI_KERNELS=7", "kernelsnoop", "", &status);
	if (status || !strstr(out, "app ok") || strstr(out, "gpuext: "))
		fail_msg("status %d:\n%s", status, out);
	/* one line per kernel and one row per name in the summary table */
	assert_int_equal(count(out, " _Z6vecaddPfS_S_i\n"), 3 + 1);
	assert_int_equal(count(out, " sm90_xmma_gemm_f16f16_f32_nn_n\n"), 2 + 1);
	assert_int_equal(count(out, "kkk...\n"), 2);
	assert_non_null(strstr(out, "\n7 kernels, 3 distinct names\n"));
	free(out);
	/* records CUPTI gives only at a forced flush: delivered at exit */
	out = run_tool("FAKECUPTI_KERNELS=3 FAKECUPTI_FORCED_ONLY=1", "kernelsnoop", "--json",
		       &status);
	assert_int_equal(status, 0);
	assert_int_equal(count(out, "{\"kernel\":"), 3 + 3); /* and 3 names in the summary */
	assert_non_null(strstr(out, "\"correlation_id\":102,"));
	assert_non_null(strstr(out, "\"api_tid\":4242}"));
	assert_non_null(strstr(out, "{\"kernels\":3,"));
	free(out);
}

/* Every section through the agent: tests/progs/cupti_all.bpf.c's sums
 * equal the fake's generators (3 kernels of 100, 101, 102 ns; HtoD copies
 * of 4096 and 12288 bytes, two 1 MiB memsets; one event of each UVM kind). */
static void test_run_all_sections(void **state)
{
	char cmd[1024];
	int status;
	need_fixtures();
	snprintf(cmd, sizeof(cmd),
		 "GPUEXT_AGENT=build/libgpuext-agent.so GPUEXT_CUPTI_PATH=build/fakecupti/libcupti.so.13 "
		 "FAKECUPTI_KERNELS=3 FAKECUPTI_MEMCPYS=4 FAKECUPTI_UVM=4 %s run "
		 TEST_BPF_DIR "/tests/progs/cupti_all.bpf.o -- " APP, test_cli_path());
	char *out = test_run_cmd(cmd, &status);
	if (status || !strstr(out, "app ok") || strstr(out, "gpuext: ") ||
	    !strstr(out, "map kernel_stats:\n  0: 3\n  1: 303\n") ||
	    !strstr(out, "map copy_bytes:\n  1: 16384\n  11: 2097152\n") ||
	    !strstr(out, "map uvm_amount:\n  1: 65536\n  2: 4096\n  3: 1\n  4: 3\n"))
		fail_msg("status %d:\n%s", status, out);
	free(out);
}

/* A process that never calls cuInit never starts CUPTI. */
static void test_run_no_cuda(void **state)
{
	char cmd[1024], log[] = "/tmp/gpuext-fakecupti-log-XXXXXX";
	int status, fd = mkstemp(log);
	need_fixtures();
	assert_true(fd >= 0);
	close(fd);
	snprintf(cmd, sizeof(cmd),
		 "GPUEXT_AGENT=build/libgpuext-agent.so GPUEXT_CUPTI_PATH=build/fakecupti/libcupti.so.13 "
		 "FAKECUPTI_KERNELS=3 FAKECUPTI_LOG=%s %s run " TEST_BPF_DIR "/tools/kernelsnoop.bpf.o "
		 "-- /bin/sh -c 'echo no cuda'", log, test_cli_path());
	char *out = test_run_cmd(cmd, &status);
	assert_int_equal(status, 0);
	assert_non_null(strstr(out, "no cuda\n"));
	assert_non_null(strstr(out, "\n0 kernels, 0 distinct names\n"));
	char *calls = test_read_file(log, NULL);
	assert_true(!calls || !strstr(calls, "enable")); /* libcupti was never asked */
	free(calls);
	free(out);
	unlink(log);
}

static void test_run_uvmtrace(void **state)
{
	int status;
	need_fixtures();
	char *out = run_tool("GPUEXT_UVM_SOURCE=cupti FAKECUPTI_UVM=8 FAKECUPTI_KERNELS=2", "uvmtrace", "", &status);
	if (status || !strstr(out, "app ok") || strstr(out, "gpuext: "))
		fail_msg("status %d:\n%s", status, out);
	/* 8 events at i MiB: blocks 0..3 of 2 MiB */
	assert_non_null(strstr(out, "htod                 2            2         393216\n"));
	assert_non_null(strstr(out, "gpu_fault            2            6              0\n"));
	assert_non_null(strstr(out, "\n4 blocks of 2 MiB\n"));
	free(out);
}

/* One failure: the app runs, exit status 0, exactly one "gpuext: " line with msg. */
static void fail_open(const char *env, const char *msg)
{
	int status;
	char *out = run_tool(env, "kernelsnoop", "", &status);
	if (status || !strstr(out, "app ok") || count(out, "gpuext: ") != 1 || !strstr(out, msg))
		fail_msg("expected one '%s', status 0:\n%s", msg, out);
	free(out);
}

static void test_run_fail_open(void **state)
{
	need_fixtures();
	fail_open("FAKECUPTI_KERNELS=2 GPUEXT_CUPTI_PATH=/nonexistent/libcupti.so",
		  "gpuext: cupti programs disabled, the application runs unobserved: CUPTI: "
		  "cannot load /nonexistent/libcupti.so");
	fail_open("FAKECUPTI_KERNELS=2 FAKECUPTI_FAIL=cuptiActivityEnable",
		  "gpuext: cupti programs disabled, the application runs unobserved: CUPTI: "
		  "enabling driver API activity failed: CUPTI_ERROR_NOT_SUPPORTED (fake)");
	fail_open("FAKECUPTI_KERNELS=2 FAKECUPTI_VERSION=120000",
		  "has API version 120000, gpuext was built for");
	/* dropped records: counted and reported, the delivered ones printed */
	fail_open("FAKECUPTI_KERNELS=2 FAKECUPTI_DROPPED=5",
		  "gpuext: CUPTI dropped 5 activity records (0 buffer requests found the pool empty)");
	fail_open("FAKECUPTI_KERNELS=40 GPUEXT_CUPTI_BUFFERS=1 GPUEXT_CUPTI_BUFFER_KB=1 "
		  "FAKECUPTI_FORCED_ONLY=1",
		  "buffer requests found the pool empty)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kernelsnoop),
		cmocka_unit_test(test_uvmtrace),
		cmocka_unit_test(test_run_kernelsnoop),
		cmocka_unit_test(test_run_all_sections),
		cmocka_unit_test(test_run_no_cuda),
		cmocka_unit_test(test_run_uvmtrace),
		cmocka_unit_test(test_run_fail_open),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
