/* SPDX-License-Identifier: MIT */
/*
 * The shipped tools (tools/NAME.bpf.c) and their output (src/cli/tool_NAME.c,
 * hist.c): every tool object verifies with the GPU profile; its device
 * programs run in the interpreter with the GPU helpers faked (a grid of
 * warps with given lanes, SMs and timer values) and the formatters print
 * exactly the expected text from the maps and records they left, and JSON
 * that parses.  The CLI sources are compiled in (they are not in libgpuext).
 */
#include "testutil.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf/helpers.h"
#include "bpf/map.h"
#include "bpf/object.h"
#include "bpf/verifier.h"
#include "ptx/ptx_inject.h" /* PTX_BLOCK_INDEX_REG */

#include "../../src/cli/hist.c"
#include "../../src/cli/tool_map.c"
#include "../../src/cli/tool_dur.c"
#include "../../src/cli/tool_launch.c"
#include "../../src/cli/tool_blockretsnoop.c"
#include "../../src/cli/tool_kernelretsnoop.c"
#include "../../src/cli/tool_warpretsnoop.c"
#include "../../src/cli/tool_launchlate.c"
#include "../../src/cli/tool_memtrace.c"
#include "../../src/cli/tool_smload.c"
#include "../../src/cli/tool_threadhist.c"

/* tool_map's messages (main.c's cli_error is not linked in). */
void cli_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ---- a tiny JSON checker: one value, whitespace allowed around tokens ---- */

static const char *js_value(const char *p);

static const char *js_ws(const char *p)
{
	while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
		p++;
	return p;
}

static const char *js_string(const char *p)
{
	if (*p++ != '"')
		return NULL;
	for (; *p && *p != '"'; p++) {
		if ((unsigned char)*p < 0x20)
			return NULL;
		if (*p == '\\' && !*++p)
			return NULL;
	}
	return *p == '"' ? p + 1 : NULL;
}

static const char *js_number(const char *p)
{
	const char *s = p;
	if (*p == '-')
		p++;
	if (*p < '0' || *p > '9')
		return NULL;
	while ((*p >= '0' && *p <= '9') || *p == '.' || *p == 'e' || *p == 'E' || *p == '+' ||
	       (*p == '-' && p > s))
		p++;
	return p;
}

static const char *js_list(const char *p, char close, int keyed)
{
	p = js_ws(p + 1);
	if (*p == close)
		return p + 1;
	for (;;) {
		if (keyed) {
			if (!(p = js_string(js_ws(p))))
				return NULL;
			p = js_ws(p);
			if (*p++ != ':')
				return NULL;
		}
		if (!(p = js_value(p)))
			return NULL;
		p = js_ws(p);
		if (*p == close)
			return p + 1;
		if (*p++ != ',')
			return NULL;
	}
}

static const char *js_value(const char *p)
{
	p = js_ws(p);
	if (*p == '{')
		return js_list(p, '}', 1);
	if (*p == '[')
		return js_list(p, ']', 0);
	if (*p == '"')
		return js_string(p);
	if (!strncmp(p, "true", 4) || !strncmp(p, "null", 4))
		return p + 4;
	if (!strncmp(p, "false", 5))
		return p + 5;
	return js_number(p);
}

/* Every line of text is one JSON value. */
static void assert_json_lines(const char *text)
{
	int lines = 0;
	while (*text) {
		const char *end = js_value(text);
		if (!end || *end != '\n')
			fail_msg("not one JSON value per line at: %.200s", text);
		text = end + 1;
		lines++;
	}
	assert_true(lines > 0);
}

static void test_json_checker(void **state)
{
	assert_non_null(js_value("{\"a\":[1,2,{\"b\":-3.5}],\"c\":\"x\"}"));
	assert_null(js_value("{\"a\":[1,2,}"));
	assert_null(js_value("{\"a\" 1}"));
	assert_null(js_value("[1,,2]"));
}

/* ---- output captured in memory ---- */

struct capture {
	char *buf;
	size_t len;
	FILE *f;
};

static FILE *cap_open(struct capture *c)
{
	c->buf = NULL;
	c->len = 0;
	c->f = open_memstream(&c->buf, &c->len);
	assert_non_null(c->f);
	return c->f;
}

static char *cap_close(struct capture *c)
{
	fclose(c->f);
	return c->buf;
}

/* ---- histograms ---- */

static void test_hist_log2(void **state)
{
	struct hist_log2 h = {{0}};
	hist_log2_add(&h, 0, 1);
	hist_log2_add(&h, 1, 2);
	hist_log2_add(&h, 3, 4);
	hist_log2_add(&h, 1500, 8);
	hist_log2_add(&h, 2047, 1);
	struct capture c;
	hist_log2_print(cap_open(&c), "lat", &h, 0);
	char *text = cap_close(&c);
	assert_string_equal(
		text,
		"@lat:\n"
		"[0]                         1 |@@@@@                                               |\n"
		"[1]                         2 |@@@@@@@@@@@                                         |\n"
		"[2, 4)                      4 |@@@@@@@@@@@@@@@@@@@@@@@                             |\n"
		"[4, 8)                      0 |                                                    |\n"
		"[8, 16)                     0 |                                                    |\n"
		"[16, 32)                    0 |                                                    |\n"
		"[32, 64)                    0 |                                                    |\n"
		"[64, 128)                   0 |                                                    |\n"
		"[128, 256)                  0 |                                                    |\n"
		"[256, 512)                  0 |                                                    |\n"
		"[512, 1K)                   0 |                                                    |\n"
		"[1K, 2K)                    9 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"\n");
	free(text);
	hist_log2_print(cap_open(&c), "lat", &h, 1);
	fputc('\n', c.f);
	text = cap_close(&c);
	assert_json_lines(text);
	assert_non_null(strstr(text, "{\"min\":1024,\"max\":2047,\"count\":9}]}"));
	free(text);

	/* the top bucket, [2^63, 2^64), and an empty histogram */
	struct hist_log2 top = {{0}}, none = {{0}};
	hist_log2_add(&top, UINT64_MAX, 1);
	assert_int_equal(top.count[64], 1);
	hist_log2_print(cap_open(&c), "top", &top, 0);
	text = cap_close(&c);
	assert_non_null(strstr(text, "[8E, 16E)"));
	free(text);
	hist_log2_print(cap_open(&c), "none", &none, 0);
	text = cap_close(&c);
	assert_string_equal(text, "@none:\n\n");
	free(text);
}

static void test_hist_linear_and_bars(void **state)
{
	const uint64_t counts[] = {3, 0, 6};
	struct capture c;
	hist_linear_print(cap_open(&c), "x", counts, 3, 10, 5, 0);
	char *text = cap_close(&c);
	assert_string_equal(
		text,
		"@x:\n"
		"[10, 15)                    3 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |\n"
		"[15, 20)                    0 |                                                    |\n"
		"[20, 25)                    6 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"\n");
	free(text);
	const uint64_t label[] = {0, 0x200000};
	const uint64_t value[] = {1, 4};
	hist_bars_print(cap_open(&c), "heat", label, value, 2, 1, 0);
	text = cap_close(&c);
	assert_string_equal(
		text,
		"@heat[0x0]:                     1 |@@@@@@@@@@@@@                                       |\n"
		"@heat[0x200000]:                4 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"\n");
	free(text);
	hist_bars_print(cap_open(&c), "heat", label, value, 2, 1, 1);
	fputc('\n', c.f);
	text = cap_close(&c);
	assert_json_lines(text);
	assert_string_equal(text, "{\"hist\":\"heat\",\"type\":\"bars\",\"buckets\":[{\"key\":0,"
				  "\"count\":1},{\"key\":2097152,\"count\":4}]}\n");
	free(text);
	char b[16];
	hist_fmt_pow2(b, sizeof(b), 3 << 20);
	assert_string_equal(b, "3M");
	hist_fmt_pow2(b, sizeof(b), 1000);
	assert_string_equal(b, "1000");
}

/* ---- the device programs in the interpreter ---- */

/* The warp the faked GPU helpers describe. */
static struct {
	uint64_t lanes, warp, sm, timer, launch;
	uint64_t block[3], grid[3], bdim[3];
} gpu;

static uint64_t fake_lane_count(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e)
{
	return gpu.lanes;
}
static uint64_t fake_warp_id(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e)
{
	return gpu.warp;
}
static uint64_t fake_sm_id(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e)
{
	return gpu.sm;
}
static uint64_t fake_block_idx(uint64_t dim, uint64_t b, uint64_t c, uint64_t d, uint64_t e)
{
	return dim < 3 ? gpu.block[dim] : 0;
}
static uint64_t fake_grid_dim(uint64_t dim, uint64_t b, uint64_t c, uint64_t d, uint64_t e)
{
	return dim < 3 ? gpu.grid[dim] : 1;
}
static uint64_t fake_block_dim(uint64_t dim, uint64_t b, uint64_t c, uint64_t d, uint64_t e)
{
	return dim < 3 ? gpu.bdim[dim] : 1;
}
/* bpf_gpu_block_index(): x + gridDim.x * (y + gridDim.y * z) */
static uint64_t fake_block_index(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e)
{
	return gpu.block[0] + gpu.grid[0] * (gpu.block[1] + gpu.grid[1] * gpu.block[2]);
}
static uint64_t fake_timer(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e)
{
	return gpu.timer;
}
static uint64_t fake_launch_id(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e)
{
	return gpu.launch;
}

static struct helper_table fake_helpers;

static struct object *tool_open(const char *name)
{
	char path[256];
	struct object *obj;
	struct err e = {{0}};
	snprintf(path, sizeof(path), TEST_BPF_DIR "/tools/%s.bpf.o", name);
	if (object_open(path, &obj, &e) || object_create_maps(obj, &e))
		fail_msg("%s: %s", path, e.msg);
	/* every program passes the verifier's profile for its type (GPU for gpu/...) */
	for (size_t i = 0; i < obj->prog_cnt; i++) {
		struct vfy_opts vo = {.profile = VFY_PROFILE_AUTO};
		if (verifier_check(obj->progs[i], &vo, NULL, &e))
			fail_msg("%s: %s: %s", path, obj->progs[i]->name, e.msg);
	}
	fake_helpers = *helper_table_default();
	fake_helpers.fn[501] = fake_lane_count;
	fake_helpers.fn[503] = fake_warp_id;
	fake_helpers.fn[504] = fake_sm_id;
	fake_helpers.fn[505] = fake_block_idx;
	fake_helpers.fn[507] = fake_grid_dim;
	fake_helpers.fn[508] = fake_block_dim;
	fake_helpers.fn[509] = fake_timer;
	fake_helpers.fn[512] = fake_launch_id;
	fake_helpers.fn[514] = fake_block_index;
	return obj;
}

static void run_prog(struct object *obj, const char *name, void *ctx)
{
	struct prog *p = object_find_prog(obj, name);
	assert_non_null(p);
	struct prog_run_opts o = {.args = {(uint64_t)(uintptr_t)ctx}, .helpers = &fake_helpers};
	struct err e = {{0}};
	uint64_t r0 = 1;
	if (prog_run(p, PROG_BACKEND_INTERP, &o, &r0, &e))
		fail_msg("%s: %s", name, e.msg);
	assert_int_equal(r0, 0);
}

static void set_warp(uint64_t bx, uint64_t by, uint64_t warp, uint64_t lanes, uint64_t sm)
{
	gpu.block[0] = bx;
	gpu.block[1] = by;
	gpu.block[2] = 0;
	gpu.warp = warp;
	gpu.lanes = lanes;
	gpu.sm = sm;
}

static char *summary(int (*fn)(FILE *, const struct object *, const struct session_status *,
			       int), struct object *obj, int json)
{
	struct capture c;
	assert_int_equal(fn(cap_open(&c), obj, NULL, json), 0);
	char *text = cap_close(&c);
	if (json)
		assert_json_lines(text);
	return text;
}

/* What block probes receive (struct gpuext_block_ctx, include/bpf/). */
struct block_ctx {
	uint64_t start_ns, end_ns, block;
	uint32_t sm, threads, warps, pad, exit_threads, exit_warps;
};
_Static_assert(sizeof(struct block_ctx) == 48, "the verifier's block ctx size");

/* Run block probe NAME for block (bx, by) of a grid gpu.grid[0] wide. */
static void run_block(struct object *obj, const char *name, uint32_t bx, uint32_t by,
		      uint32_t sm, uint32_t threads, uint64_t start, uint64_t end)
{
	struct block_ctx c = {start, end, bx + gpu.grid[0] * by, sm, threads, (threads + 31) / 32,
			      0, end ? threads : 0, end ? (threads + 31) / 32 : 0};
	set_warp(bx, by, 0, 32, sm);
	run_prog(obj, name, &c);
}

/* A 2x2 grid of blocks of 70 threads (3 warps) on SMs 0 and 3. */
static void test_threadhist(void **state)
{
	struct object *obj = tool_open("threadhist");
	gpu.grid[0] = 2;
	gpu.grid[1] = 2;
	gpu.grid[2] = 1;
	for (unsigned by = 0; by < 2; by++)
		for (unsigned bx = 0; bx < 2; bx++)
			run_block(obj, "th_block", bx, by, bx + by ? 3 : 0, 70, 1000, 0);
	char *text = summary(tool_threadhist_summary, obj, 0);
	assert_string_equal(
		text,
		"threads 280, warps 12, blocks 4, SMs used 2\n\n"
		"@threads_per_sm[0]:            70 |@@@@@@@@@@@@@@@@@                                   |\n"
		"@threads_per_sm[3]:           210 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"\n"
		"@threads_per_block:\n"
		"[64, 128)                   4 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"\n");
	free(text);
	text = summary(tool_threadhist_summary, obj, 1);
	assert_non_null(strstr(text, "{\"threads\":280,\"warps\":12,\"blocks\":4,\"per_sm\":[{\"sm\":0,"
				     "\"threads\":70,\"warps\":3},{\"sm\":3,\"threads\":210,\"warps\":9}]"));
	free(text);
	object_free(obj);
}

/* vecadd-like: 3 warps (32, 32, 16 lanes) each load 2 floats and store 1. */
/* A gpu/mem program's ctx (include/bpf/gpuext_helpers.h). */
struct mem_ctx {
	uint64_t addr;
	uint32_t size, kind;
};
enum { MEM_LOAD, MEM_STORE, MEM_ATOMIC };

/*
 * Regions a multiple of MT_MAX_REGIONS apart share a slot: R, R + span and
 * R + 2 x span (slot 0) are counted as untracked, R+1 and R+2 keep their
 * slots and regions; so is a region past 8 PiB (its tag has no 32-bit form,
 * memtrace.h), which no GPU address reaches.
 */
static void test_memtrace_collisions(void **state)
{
	struct object *obj = tool_open("memtrace");
	const uint64_t r0 = 0x7f0000000000, span = (uint64_t)MT_MAX_REGIONS << MT_REGION_SHIFT;
	const uint64_t addr[] = {r0, r0 + (1 << MT_REGION_SHIFT), r0 + (2 << MT_REGION_SHIFT),
				 r0 + span, r0 + 2 * span, 1ull << 60};
	set_warp(0, 0, 5, 32, 1);
	for (size_t i = 0; i < 6; i++) {
		struct mem_ctx a = {addr[i], 4, MEM_LOAD};
		run_prog(obj, "mt_access", &a);
	}
	char *text = summary(tool_memtrace_summary, obj, 1);
	assert_non_null(strstr(text, "\"load\":{\"bytes\":768,\"accesses\":192,\"instructions\":6}"));
	assert_non_null(strstr(text, "\"regions\":2,\"untracked_accesses\":128,"));
	assert_non_null(strstr(text, "{\"key\":139637978824704,\"count\":32}")); /* r0 + 1 */
	assert_null(strstr(text, "{\"key\":139637976727552,")); /* r0 */
	free(text);
	text = summary(tool_memtrace_summary, obj, 0);
	assert_non_null(strstr(text, "\n2 regions of 2 MiB touched\n128 accesses to regions that "
				     "found no slot (more than 1024 regions, or collisions)\n"));
	free(text);
	object_free(obj);
}

/*
 * More than the 64 rows a heat map shows, all as busy: the rows are the 64
 * lowest addresses, whichever slots the regions took (here they wrap
 * around the slots: region 1000 + i in slot (1000 + i) % 1024).
 */
static void test_memtrace_heat_ties(void **state)
{
	struct object *obj = tool_open("memtrace");
	const uint64_t r0 = (uint64_t)(1000 + 3 * MT_MAX_REGIONS) << MT_REGION_SHIFT;
	char want[80];
	set_warp(0, 0, 1, 32, 1);
	for (unsigned i = 0; i < 70; i++) {
		struct mem_ctx a = {r0 + ((uint64_t)i << MT_REGION_SHIFT), 4, MEM_LOAD};
		run_prog(obj, "mt_access", &a);
	}
	char *text = summary(tool_memtrace_summary, obj, 1);
	assert_non_null(strstr(text, "\"regions\":70,\"untracked_accesses\":0,"));
	for (unsigned i = 0; i < 70; i++) {
		snprintf(want, sizeof(want), "{\"key\":%llu,\"count\":32}",
			 (unsigned long long)(r0 + ((uint64_t)i << MT_REGION_SHIFT)));
		if (i < 64)
			assert_non_null(strstr(text, want));
		else
			assert_null(strstr(text, want));
	}
	free(text);
	object_free(obj);
}

/*
 * The end of a block under memtrace_block: its gpu/block_exit program adds the
 * block's counts to the global maps, then its block-local arrays are
 * zeroed for the next block (what the injector does at block entry; on the
 * host a block-local array is one block's copy, map_array.c).
 */
static void mt_block_end(struct object *obj, uint32_t bx, uint32_t sm)
{
	run_block(obj, "mt_block_flush", bx, 0, sm, 96, 1000, 2000);
	for (size_t i = 0; i < obj->map_cnt; i++) {
		struct map *m = obj->maps[i].map;
		const struct map_def *d = map_get_def(m);
		if (d->type != MAP_TYPE_GPU_BLOCK_ARRAY)
			continue;
		for (uint32_t k = 0; k < d->max_entries; k++)
			memset(map_lookup(m, &k), 0, d->value_size);
	}
}

/*
 * memtrace and memtrace_block give the same output for the same accesses;
 * memtrace_block's counts reach the global maps only when their block ends
 * (block_end), before which its summary shows nothing.
 */
struct mt_variant {
	const char *tool;
	int (*fmt)(FILE *, const struct object *, const struct session_status *, int);
	void (*block_end)(struct object *obj, uint32_t bx, uint32_t sm);
};
static const struct mt_variant mt_warp = {"memtrace", tool_memtrace_summary, NULL};
static const struct mt_variant mt_block = {"memtrace_block", tool_memtrace_block_summary,
					   mt_block_end};

static void test_memtrace(void **state)
{
	const struct mt_variant *v = *state;
	struct object *obj = tool_open(v->tool);
	static const uint64_t lanes[] = {32, 32, 16};
	for (unsigned w = 0; w < 3; w++) {
		set_warp(0, 0, w, lanes[w], 1);
		struct mem_ctx a = {0x7f0000000000 + w * 128, 4, MEM_LOAD};
		struct mem_ctx b = {0x7f0000200000 + w * 128, 4, MEM_LOAD};
		struct mem_ctx c = {0x7f0000400000 + w * 128, 4, MEM_STORE};
		run_prog(obj, "mt_access", &a);
		run_prog(obj, "mt_access", &b);
		run_prog(obj, "mt_access", &c);
	}
	struct mem_ctx at = {0x7f0000400000, 8, MEM_ATOMIC};
	set_warp(0, 0, 0, 1, 1);
	run_prog(obj, "mt_access", &at);
	char *text;
	if (v->block_end) { /* counted in the block until it ends */
		text = summary(v->fmt, obj, 1);
		assert_non_null(strstr(text, "\"load\":{\"bytes\":0,\"accesses\":0,\"instructions\":0}"));
		assert_non_null(strstr(text, "\"regions\":0,"));
		free(text);
		v->block_end(obj, 0, 1);
	}
	text = summary(v->fmt, obj, 0);
	assert_string_equal(
		text,
		"kind                bytes         accesses      warp_instrs\n"
		"load                  640              160                6\n"
		"store                 320               80                3\n"
		"atomic                  8                1                1\n"
		"\n3 regions of 2 MiB touched\n"
		"@accesses_per_2MiB[0x7f0000000000]:           80 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@ |\n"
		"@accesses_per_2MiB[0x7f0000200000]:           80 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@ |\n"
		"@accesses_per_2MiB[0x7f0000400000]:           81 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"\n");
	free(text);
	text = summary(v->fmt, obj, 1);
	assert_non_null(strstr(text, "\"load\":{\"bytes\":640,\"accesses\":160,\"instructions\":6}"));
	free(text);
	object_free(obj);
}

/* Every size class, whole and partial warps, and a size outside the
 * classes (memtrace.h): bytes, accesses and instructions stay exact. */
static void test_memtrace_sizes(void **state)
{
	const struct mt_variant *v = *state;
	struct object *obj = tool_open(v->tool);
	static const uint32_t sizes[] = {1, 2, 4, 8, 16, 32, 12};
	static const uint64_t lanes[] = {32, 7};
	uint64_t bytes = 0, accesses = 0, instrs = 0;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		for (size_t l = 0; l < 2; l++) {
			set_warp(0, 0, (unsigned)(i + l), lanes[l], 1);
			struct mem_ctx a = {0x7f0000000000 + i * 4096, sizes[i], MEM_STORE};
			run_prog(obj, "mt_access", &a);
			bytes += sizes[i] * lanes[l];
			accesses += lanes[l];
			instrs++;
		}
	if (v->block_end)
		v->block_end(obj, 0, 1);
	char *text = summary(v->fmt, obj, 1), want[160];
	snprintf(want, sizeof(want), "\"store\":{\"bytes\":%llu,\"accesses\":%llu,"
		 "\"instructions\":%llu}", (unsigned long long)bytes,
		 (unsigned long long)accesses, (unsigned long long)instrs);
	if (!strstr(text, want))
		fail_msg("want %s in %s", want, text);
	free(text);
	object_free(obj);
}

/*
 * Regions a multiple of MTB_MAX_REGIONS apart share a slot of the global
 * heat map: R, R + MTB_MAX_REGIONS and R + 2 x MTB_MAX_REGIONS (the last one
 * finds its MT_BLOCK_PROBES block slots taken and goes to the global map
 * at its access, the others at the block's end) are counted as untracked;
 * R+1 and R+2 keep their slots and regions.
 */
static void test_memtrace_block_collisions(void **state)
{
	struct object *obj = tool_open("memtrace_block");
	const uint64_t r0 = 0x7f0000000000, span = (uint64_t)MTB_MAX_REGIONS << MT_REGION_SHIFT;
	const uint64_t addr[] = {r0, r0 + (1 << MT_REGION_SHIFT), r0 + (2 << MT_REGION_SHIFT),
				 r0 + span, r0 + 2 * span};
	set_warp(0, 0, 5, 32, 1);
	for (size_t i = 0; i < 5; i++) {
		struct mem_ctx a = {addr[i], 4, MEM_LOAD};
		run_prog(obj, "mt_access", &a);
	}
	mt_block_end(obj, 0, 1);
	char *text = summary(tool_memtrace_block_summary, obj, 1);
	assert_non_null(strstr(text, "\"load\":{\"bytes\":640,\"accesses\":160,\"instructions\":5}"));
	assert_non_null(strstr(text, "\"regions\":2,\"untracked_accesses\":96,"));
	assert_non_null(strstr(text, "{\"key\":139637978824704,\"count\":32}")); /* r0 + 1 */
	free(text);
	text = summary(tool_memtrace_block_summary, obj, 0);
	assert_non_null(strstr(text, "\n2 regions of 2 MiB touched\n96 accesses to regions that "
				     "found no slot (more than 4096 regions, or collisions)\n"));
	free(text);
	object_free(obj);
}

/*
 * More regions than a block's cache has slots (MT_BLOCK_SLOTS): block 0
 * touches MT_BLOCK_SLOTS + 2 consecutive regions, a warp of 32 lanes each
 * (the first MT_BLOCK_SLOTS in the block's cache, the last 2 find their
 * MT_BLOCK_PROBES slots taken and are counted in the global heat map at
 * the access); block 1 (SM 4) touches the first region again with a partial
 * warp of 16 lanes.  Every access counted once, wherever it was counted.
 */
static void test_memtrace_block_many(void **state)
{
	struct object *obj = tool_open("memtrace_block");
	const uint64_t r0 = 0x7f0000000000;
	const unsigned regions = MT_BLOCK_SLOTS + 2;
	char want[160];
	for (unsigned i = 0; i < regions; i++) {
		set_warp(0, 0, i % 3, 32, 2);
		struct mem_ctx a = {r0 + ((uint64_t)i << MT_REGION_SHIFT), 4, MEM_LOAD};
		run_prog(obj, "mt_access", &a);
	}
	mt_block_end(obj, 0, 2);
	set_warp(1, 0, 0, 16, 4);
	struct mem_ctx b = {r0 + 64, 4, MEM_LOAD};
	run_prog(obj, "mt_access", &b);
	mt_block_end(obj, 1, 4);
	char *text = summary(tool_memtrace_block_summary, obj, 1);
	snprintf(want, sizeof(want), "\"load\":{\"bytes\":%u,\"accesses\":%u,\"instructions\":%u}",
		 4 * (32 * regions + 16), 32 * regions + 16, regions + 1);
	assert_non_null(strstr(text, want));
	snprintf(want, sizeof(want), "\"regions\":%u,\"untracked_accesses\":0,", regions);
	assert_non_null(strstr(text, want));
	assert_non_null(strstr(text, "{\"key\":139637976727552,\"count\":48}")); /* r0 */
	snprintf(want, sizeof(want), "{\"key\":%llu,\"count\":32}", /* the last */
		 (unsigned long long)(r0 + ((uint64_t)(regions - 1) << MT_REGION_SHIFT)));
	assert_non_null(strstr(text, want));
	free(text);
	object_free(obj);
}

/*
 * SM 2 runs 3 blocks of 2 warps (64 threads) of 100, 1100 and 100 ns, SM 5
 * one of 500 ns.  Warp-time: SM 2 2 x 1300 = 2600 ns, SM 5 2 x 500 = 1000:
 * imbalance 2600 / 1800 = 1.444; warps 6 and 2: 1.5.  A block whose end
 * reads before its start (a clock step) adds no time.
 */
static void test_smload(void **state)
{
	struct object *obj = tool_open("smload");
	gpu.grid[0] = 8, gpu.grid[1] = 1, gpu.grid[2] = 1;
	static const uint64_t dur[] = {100, 1100, 100, 500};
	for (unsigned b = 0; b < 4; b++)
		run_block(obj, "sl_block", b, 0, b < 3 ? 2 : 5, 64, 1000 * (b + 1),
			  1000 * (b + 1) + dur[b]);
	char *text = summary(tool_smload_summary, obj, 0);
	assert_string_equal(
		text,
		"SMs used 2, blocks 4, warps 8, warp-time 3600 ns\n"
		"imbalance (max/mean): warp-time 1.444, warps 1.500\n\n"
		"@busy_ns_per_sm[2]:          2600 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"@busy_ns_per_sm[5]:          1000 |@@@@@@@@@@@@@@@@@@@@                                |\n"
		"\n");
	free(text);
	text = summary(tool_smload_summary, obj, 1);
	assert_non_null(strstr(text, "\"blocks\":4,\"warps\":8,\"busy_ns\":3600,"));
	assert_non_null(strstr(text, "\"busy_max_over_mean\":1.444"));
	assert_non_null(strstr(text, "{\"sm\":2,\"blocks\":3,\"warps\":6,\"threads\":192,"
				     "\"busy_ns\":2600}"));
	free(text);
	run_block(obj, "sl_block", 7, 0, 5, 64, 9000, 8000); /* end before start */
	text = summary(tool_smload_summary, obj, 1);
	assert_non_null(strstr(text, "{\"sm\":5,\"blocks\":2,\"warps\":4,\"threads\":128,"
				     "\"busy_ns\":1000}"));
	free(text);
	object_free(obj);
}

/*
 * kernelretsnoop's block (bx, by, bz) on SM sm: its block_entry program at
 * start, then each warp's exit program at its exit time (in any order: the
 * end is their maximum).
 */
static void krs_run_block(struct object *obj, uint32_t bx, uint32_t by, uint32_t bz, uint32_t sm,
			  uint64_t start, const uint64_t *exits, size_t warps)
{
	set_warp(bx, by, 0, 32, sm);
	gpu.block[2] = bz;
	struct block_ctx c = {.block = fake_block_index(0, 0, 0, 0, 0), .sm = sm};
	gpu.timer = start;
	run_prog(obj, "krs_block_start", &c);
	for (size_t w = 0; w < warps; w++) {
		gpu.warp = w;
		gpu.timer = exits[w];
		run_prog(obj, "krs_warp_end", NULL);
	}
}

/* A launch table row: id, grid, block, kernel name. */
struct krs_row {
	struct gpuext_launch row;
	char name[8];
};

static void krs_send_row(struct object *obj, const struct krs_row *row)
{
	struct capture c;
	assert_int_equal(tool_kernelretsnoop_event(cap_open(&c), obj, GPUEXT_LAUNCHES_MAP, row,
						   sizeof(*row), 0), 0);
	assert_int_equal(tool_kernelretsnoop_event(c.f, obj, "other", row, sizeof(*row), 0), 1);
	free(cap_close(&c));
}

/*
 * Launch 1 (grid 3,2,2 of 40x2 threads: 3 warps) runs blocks (0,0,0) and
 * (1,1,1) (linear index 10, its warps exiting out of order), then launch 2
 * (grid 4 of 52 threads: 2 warps) block 0: the records are each index's
 * last run, and so are the per-launch counts (launch 1 keeps block 10
 * only) and the histograms; (x, y, z), threads and warps come from each
 * launch's row; end_rel_ns counts from the earliest recorded start (5100).
 */
static void test_kernelretsnoop(void **state)
{
	struct object *obj = tool_open("kernelretsnoop");
	tool_launch_reset();
	gpu.grid[0] = 3, gpu.grid[1] = 2, gpu.grid[2] = 2;
	gpu.launch = 1;
	krs_run_block(obj, 0, 0, 0, 7, 5000, (const uint64_t[]){6000, 5900, 5800}, 3);
	krs_run_block(obj, 1, 1, 1, 7, 5100, (const uint64_t[]){8800, 9100, 9000}, 3);
	gpu.grid[0] = 4, gpu.grid[1] = 1, gpu.grid[2] = 1;
	gpu.launch = 2;
	krs_run_block(obj, 0, 0, 0, 3, 20000, (const uint64_t[]){20400, 20500}, 2);
	const struct krs_row rows[] = {
		{{1, 4000, 0, {3, 2, 2}, {40, 2, 1}, 0, GPUEXT_LAUNCH_KERNEL}, "_Z1kv"},
		{{2, 19000, 0, {4, 1, 1}, {52, 1, 1}, 0, GPUEXT_LAUNCH_KERNEL}, "_Z1jv"},
	};
	for (size_t i = 0; i < 2; i++)
		krs_send_row(obj, &rows[i]);
	char *text = summary(tool_kernelretsnoop_summary, obj, 0);
	assert_string_equal(
		text,
		"launch 1: _Z1kv grid=3,2,2 block=40,2,1: 1 blocks in 4000 ns\n"
		"@dur_ns:\n"
		"[2K, 4K)                    1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"\n"
		"launch 2: _Z1jv grid=4,1,1 block=52,1,1: 1 blocks in 500 ns\n"
		"@dur_ns:\n"
		"[256, 512)                  1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"\n"
		"2 launches (2 launch table rows)\n"
		"block=0,0,0 launch=2 sm=3 threads=52 warps=2 start_ns=20000 end_ns=20500 dur_ns=500 "
		"end_rel_ns=15400\n"
		"block=1,1,1 launch=1 sm=7 threads=80 warps=3 start_ns=5100 end_ns=9100 dur_ns=4000 "
		"end_rel_ns=4000\n"
		"2 blocks recorded above (the last run of each block index)\n"
		"@dur_ns:\n"
		"[256, 512)                  1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"[512, 1K)                   0 |                                                    |\n"
		"[1K, 2K)                    0 |                                                    |\n"
		"[2K, 4K)                    1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"\n"
		"@end_rel_ns:\n"
		"[2K, 4K)                    1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"[4K, 8K)                    0 |                                                    |\n"
		"[8K, 16K)                   1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"\n");
	free(text);
	/* a summary counts the records into the launches: once a table */
	tool_launch_reset();
	for (size_t i = 0; i < 2; i++)
		krs_send_row(obj, &rows[i]);
	text = summary(tool_kernelretsnoop_summary, obj, 1);
	assert_non_null(strstr(text, "{\"launch\":1,\"kernel\":\"_Z1kv\",\"grid\":[3,2,2],"
				     "\"block\":[40,2,1],\"blocks\":1,\"span_ns\":4000,\"dur_ns\":"));
	assert_non_null(strstr(text, "{\"launches\":2,\"launch_rows\":2}\n"));
	assert_non_null(strstr(text, "{\"block\":[1,1,1],\"launch\":1,\"sm\":7,\"threads\":80,"
				     "\"warps\":3,\"start_ns\":5100,\"end_ns\":9100,\"dur_ns\":4000,"
				     "\"end_rel_ns\":4000}\n"));
	assert_non_null(strstr(text, "{\"recorded\":2,\"clock_backwards\":0,"));
	free(text);
	tool_launch_reset();
	object_free(obj);
}

/*
 * Records whose launch has no row (launch 0: a kernel that could not take
 * the id; launch 9: its row never came) print their linear index and no
 * threads or warps; block 70000's slot is 70000 % 2^16, its index whole.
 */
static void test_kernelretsnoop_no_row(void **state)
{
	struct object *obj = tool_open("kernelretsnoop");
	tool_launch_reset();
	gpu.grid[0] = 70001, gpu.grid[1] = 1, gpu.grid[2] = 1;
	gpu.launch = 0;
	krs_run_block(obj, 5, 0, 0, 2, 1000, (const uint64_t[]){1500}, 1);
	gpu.launch = 9;
	krs_run_block(obj, 70000, 0, 0, 4, 2000, (const uint64_t[]){2600}, 1);
	char *text = summary(tool_kernelretsnoop_summary, obj, 0);
	assert_non_null(strstr(text, "launch 0: (no launch table row) grid=0,0,0 block=0,0,0: "
				     "1 blocks in 500 ns\n"));
	assert_non_null(strstr(text, "2 launches (0 launch table rows)\n"
				     "block=? index=5 launch=0 sm=2 start_ns=1000 end_ns=1500 "
				     "dur_ns=500 end_rel_ns=500\n"
				     "block=? index=70000 launch=9 sm=4 start_ns=2000 end_ns=2600 "
				     "dur_ns=600 end_rel_ns=1600\n"
				     "2 blocks recorded above"));
	free(text);
	text = summary(tool_kernelretsnoop_summary, obj, 1);
	assert_non_null(strstr(text, "{\"block\":null,\"index\":70000,\"launch\":9,\"sm\":4,"
				     "\"start_ns\":2000,\"end_ns\":2600,\"dur_ns\":600,"
				     "\"end_rel_ns\":1600}\n"));
	free(text);
	/* the row, come late, places it: 70000 = 70000 % 70001 */
	const struct krs_row row = {{9, 1500, 0, {70001, 1, 1}, {64, 1, 1}, 0, GPUEXT_LAUNCH_KERNEL},
				    "_Z1kv"};
	krs_send_row(obj, &row);
	text = summary(tool_kernelretsnoop_summary, obj, 0);
	assert_non_null(strstr(text, "block=70000,0,0 launch=9 sm=4 threads=64 warps=2 "
				     "start_ns=2000"));
	free(text);
	tool_launch_reset();
	object_free(obj);
}

static int wrs_consume(void *arg, const void *data, size_t size)
{
	return tool_warpretsnoop_event(arg, NULL, "events", data, size, 0);
}

/* Two warps of block (1,0,0) of a grid of 2 blocks of 2 warps (global warp
 * ids 2 and 3): entry then exit each, one record each, also for the warp
 * whose lanes leave by two exits. */
static void test_warpretsnoop(void **state)
{
	struct object *obj = tool_open("warpretsnoop");
	tool_warpretsnoop_reset();
	gpu.launch = 5;
	gpu.grid[0] = 2, gpu.grid[1] = 1, gpu.grid[2] = 1;
	gpu.bdim[0] = 52, gpu.bdim[1] = 1, gpu.bdim[2] = 1;
	set_warp(1, 0, 0, 32, 7);
	gpu.timer = 5000;
	run_prog(obj, "wrs_entry", NULL);
	set_warp(1, 0, 1, 20, 7);
	gpu.timer = 5100;
	run_prog(obj, "wrs_entry", NULL);
	gpu.timer = 9100;
	run_prog(obj, "wrs_exit", NULL);
	set_warp(1, 0, 1, 20, 7); /* a second exit of that warp: no record */
	run_prog(obj, "wrs_exit", NULL);
	set_warp(1, 0, 0, 32, 7);
	gpu.timer = 6000;
	run_prog(obj, "wrs_exit", NULL);
	set_warp(0, 0, 9, 32, 7); /* an exit whose entry was not seen: no record */
	run_prog(obj, "wrs_exit", NULL);
	struct capture c;
	cap_open(&c);
	assert_int_equal(map_ringbuf_consume(object_find_map(obj, "events")->map, wrs_consume, c.f),
			 2);
	assert_int_equal(tool_warpretsnoop_summary(c.f, obj, NULL, 0), 0);
	char *text = cap_close(&c);
	assert_string_equal(
		text,
		"block=1,0,0 warp=1 launch=5 sm=7 lanes=20 start_ns=5100 end_ns=9100 dur_ns=4000\n"
		"block=1,0,0 warp=0 launch=5 sm=7 lanes=32 start_ns=5000 end_ns=6000 dur_ns=1000\n"
		"launch 5: (no launch table row) grid=0,0,0 block=0,0,0: 2 warps in 4100 ns\n"
		"@dur_ns:\n"
		"[512, 1K)                   1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"[1K, 2K)                    0 |                                                    |\n"
		"[2K, 4K)                    1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"\n"
		"1 launches (0 launch table rows)\n"
		"2 warps\n"
		"@dur_ns:\n"
		"[512, 1K)                   1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"[1K, 2K)                    0 |                                                    |\n"
		"[2K, 4K)                    1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"\n");
	free(text);
	/* the slots (2 and 3) were taken at exit */
	struct map *starts = object_find_map(obj, "starts")->map;
	for (uint32_t k = 0; k < 4; k++) {
		uint64_t v = 1;
		assert_int_equal(map_lookup_copy(starts, &k, &v), 0);
		assert_int_equal(v, 0);
	}
	struct wrs_event ev = {100, 50, {1, 2, 3}, 4, 5, 6, 5};
	cap_open(&c);
	assert_int_equal(tool_warpretsnoop_event(c.f, obj, "events", &ev, sizeof(ev), 1), 0);
	assert_int_equal(tool_warpretsnoop_event(c.f, obj, "events", &ev, 3, 1), 1);
	assert_int_equal(tool_warpretsnoop_summary(c.f, obj, NULL, 1), 0);
	text = cap_close(&c);
	assert_json_lines(text);
	assert_non_null(strstr(text, "\"warps\":3,\"clock_backwards\":1"));
	assert_non_null(strstr(text, "{\"launch\":5,\"kernel\":\"\",\"grid\":[0,0,0],"
				     "\"block\":[0,0,0],\"warps\":3,"));
	free(text);
	object_free(obj);
}

static int brs_consume(void *arg, const void *data, size_t size)
{
	return tool_blockretsnoop_event(arg, NULL, "events", data, size, 0);
}

static int brs_consume_launch(void *arg, const void *data, size_t size)
{
	return tool_blockretsnoop_event(arg, NULL, GPUEXT_LAUNCHES_MAP, data, size, 0);
}

/* Block 1 of a grid of 2 (52 threads), 5000..9100 on SM 7: one record. */
static void test_blockretsnoop(void **state)
{
	struct object *obj = tool_open("blockretsnoop");
	tool_blockretsnoop_reset();
	gpu.grid[0] = 2, gpu.grid[1] = 1, gpu.grid[2] = 1;
	gpu.launch = 3;
	run_block(obj, "brs_block", 1, 0, 7, 52, 5000, 9100);
	/* the agent's row of launch 3 (agent_launch_note), after its block's record */
	struct {
		struct gpuext_launch row;
		char name[16];
	} row = {{3, 4000, 0x10, {2, 1, 1}, {52, 1, 1}, 0, GPUEXT_LAUNCH_KERNEL}, "_Z6vecaddPfi"};
	struct map *launches = object_find_map(obj, GPUEXT_LAUNCHES_MAP)->map;
	assert_int_equal(map_ringbuf_output(launches, &row, sizeof(row), 0), 0);
	struct capture c;
	cap_open(&c);
	assert_int_equal(map_ringbuf_consume(object_find_map(obj, "events")->map, brs_consume, c.f),
			 1);
	assert_int_equal(map_ringbuf_consume(launches, brs_consume_launch, c.f), 1);
	assert_int_equal(tool_blockretsnoop_summary(c.f, obj, NULL, 0), 0);
	char *text = cap_close(&c);
	assert_string_equal(
		text,
		"block=1,0,0 launch=3 sm=7 threads=52 start_ns=5000 end_ns=9100 dur_ns=4100\n"
		"launch=3 kernel=_Z6vecaddPfi grid=2,1,1 block=52,1,1 shmem=0 stream=0x10 "
		"kind=kernel host_ns=4000\n"
		"launch 3: _Z6vecaddPfi grid=2,1,1 block=52,1,1: 1 blocks in 4100 ns\n"
		"@dur_ns:\n"
		"[4K, 8K)                    1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"\n"
		"1 launches (1 launch table rows)\n"
		"1 blocks\n"
		"@dur_ns:\n"
		"[4K, 8K)                    1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"\n");
	free(text);
	struct brs_event ev = {100, 50, {1, 2, 3}, 4, 64, 0, 3};
	cap_open(&c);
	assert_int_equal(tool_blockretsnoop_event(c.f, obj, "events", &ev, sizeof(ev), 1), 0);
	assert_int_equal(tool_blockretsnoop_event(c.f, obj, "events", &ev, 3, 1), 1);
	assert_int_equal(tool_blockretsnoop_summary(c.f, obj, NULL, 1), 0);
	text = cap_close(&c);
	assert_json_lines(text);
	assert_non_null(strstr(text, "{\"block\":[1,2,3],\"launch\":3,\"sm\":4,\"threads\":64,"));
	assert_non_null(strstr(text, "{\"launch\":3,\"kernel\":\"_Z6vecaddPfi\",\"grid\":[2,1,1],"
				     "\"block\":[52,1,1],\"blocks\":2,"));
	assert_non_null(strstr(text, "{\"launches\":1,\"launch_rows\":1}"));
	assert_non_null(strstr(text, "\"blocks\":2,\"clock_backwards\":1"));
	free(text);
	object_free(obj);
}

static int ll_consume(void *arg, const void *data, size_t size)
{
	return tool_launchlate_event(arg, NULL, "events", data, size, 0);
}

/* The device program only records block (0,0,0) warp 0; the formatter pairs
 * host and device records in launch order with a fixed clock offset. */
static void test_launchlate(void **state)
{
	struct object *obj = tool_open("launchlate");
	struct map *events = object_find_map(obj, "events")->map;
	set_warp(0, 0, 1, 32, 4); /* warp 1: nothing */
	gpu.timer = 1;
	run_prog(obj, "ll_first_block", NULL);
	set_warp(0, 1, 0, 32, 4); /* block (0,1,0): nothing */
	run_prog(obj, "ll_first_block", NULL);
	struct ll_event host1 = {1000, LL_HOST_LAUNCH, 0}, host2 = {2000, LL_HOST_LAUNCH, 0};
	assert_int_equal(map_ringbuf_output(events, &host1, sizeof(host1), 0), 0);
	assert_int_equal(map_ringbuf_output(events, &host2, sizeof(host2), 0), 0);
	set_warp(0, 0, 0, 32, 4);
	gpu.timer = 1700000000000005000ull; /* epoch ns */
	run_prog(obj, "ll_first_block", NULL);
	gpu.timer = 1700000000000100000ull;
	run_prog(obj, "ll_first_block", NULL);
	tool_launchlate_reset(-1700000000000000000ll, 1);
	struct capture c;
	cap_open(&c);
	assert_int_equal(map_ringbuf_consume(events, ll_consume, c.f), 4);
	assert_int_equal(tool_launchlate_summary(c.f, obj, NULL, 0), 0);
	char *text = cap_close(&c);
	assert_string_equal(
		text,
		"launch 1: latency_ns=4000 sm=4\n"
		"launch 2: latency_ns=98000 sm=4\n"
		"2 launches, 2 matched with their first block\n"
		"@latency_ns:\n"
		"[2K, 4K)                    1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"[4K, 8K)                    0 |                                                    |\n"
		"[8K, 16K)                   0 |                                                    |\n"
		"[16K, 32K)                  0 |                                                    |\n"
		"[32K, 64K)                  0 |                                                    |\n"
		"[64K, 128K)                 1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"\n");
	free(text);
	/* a device record with no launch before it, and JSON */
	cap_open(&c);
	struct ll_event dev = {1700000000000000000ull, LL_DEVICE_ENTRY, 1};
	assert_int_equal(tool_launchlate_event(c.f, obj, "events", &dev, sizeof(dev), 1), 0);
	assert_int_equal(tool_launchlate_event(c.f, obj, "events", &host1, sizeof(host1), 1), 0);
	assert_int_equal(tool_launchlate_summary(c.f, obj, NULL, 1), 0);
	text = cap_close(&c);
	assert_json_lines(text);
	assert_non_null(strstr(text, "\"launches\":3,\"matched\":2,\"unmatched\":1,\"lost\":1"));
	free(text);
	object_free(obj);
}

/* A summary on an object that is not the tool's falls back (non-zero). */
static void test_wrong_object(void **state)
{
	struct object *obj = tool_open("smload");
	struct capture c;
	assert_int_not_equal(tool_memtrace_summary(cap_open(&c), obj, NULL, 0), 0);
	assert_int_not_equal(tool_threadhist_summary(c.f, obj, NULL, 0), 0);
	free(cap_close(&c));
	object_free(obj);
}

static void test_cli_tools(void **state)
{
	char cmd[512];
	int status;
	snprintf(cmd, sizeof(cmd), "%s tools", test_cli_path());
	char *out = test_run_cmd(cmd, &status);
	assert_int_equal(status, 0);
	static const char *const names[] = {"blockretsnoop", "kernelretsnoop", "launchlate",
					    "memtrace", "memtrace_block", "smload", "threadhist",
					    "warpretsnoop"};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char path[256];
		assert_non_null(strstr(out, names[i]));
		snprintf(path, sizeof(path), TEST_BPF_DIR "/tools/%s.bpf.o", names[i]);
		assert_int_equal(access(path, R_OK), 0);
	}
	free(out);
	snprintf(cmd, sizeof(cmd), "%s --json tools", test_cli_path());
	out = test_run_cmd(cmd, &status);
	assert_int_equal(status, 0);
	assert_json_lines(out);
	free(out);
}

/*
 * Each tool under `gpuext run TOOL.bpf.o` (the formatter is chosen by the
 * file name, as with --tool, which looks next to the binary: not build/san)
 * with the agent and the fake driver (tests/fakecuda): the app's kernels get
 * the tool's device programs (its function in the loaded PTX), the run is
 * silent and the app succeeds, and ptxas accepts every instrumented module
 * for sm_75 and sm_90.
 */
static void test_tools_injected(void **state)
{
	static const char *const tool[][2] = {
		{"tools/blockretsnoop", "brs_block"}, {"tools/kernelretsnoop", "krs_warp_end"},
		{"tools/launchlate", "ll_first_block"}, {"tools/memtrace", "mt_access"},
		{"tools/memtrace_block", "mt_access"},
		{"tools/smload", "sl_block"}, {"tools/threadhist", "th_block"},
		{"tools/warpretsnoop", "wrs_exit"},
	};
	if (access("build/fakecuda/app", X_OK) || access("build/libgpuext-agent.so", R_OK))
		skip();
	for (size_t t = 0; t < sizeof(tool) / sizeof(tool[0]); t++) {
		char dir[] = "/tmp/gpuext-tools-test-XXXXXX", cmd[2048], path[600];
		int status, instrumented = 0;
		assert_non_null(mkdtemp(dir));
		snprintf(cmd, sizeof(cmd),
			 "FAKECUDA_LOG=%s/log FAKECUDA_DUMP=%s GPUEXT_AGENT=build/libgpuext-agent.so "
			 "%s run " TEST_BPF_DIR "/%s.bpf.o -- build/fakecuda/app "
			 "tests/ptx_corpus/checked.compute_75.ptx vec_add reduce_atomic",
			 dir, dir, test_cli_path(), tool[t][0]);
		char *out = test_run_cmd(cmd, &status);
		assert_non_null(out);
		if (status || !strstr(out, "app ok") || strstr(out, "gpuext: "))
			fail_msg("%s: status %d:\n%s", tool[t][0], status, out);
		free(out);
		for (int mod = 1; mod < 16; mod++) {
			snprintf(path, sizeof(path), "%s/mod-%d.ptx", dir, mod);
			char *ptx = test_read_file(path, NULL);
			if (ptx && strstr(ptx, tool[t][1])) {
				instrumented++;
				/* threadhist's lookups are in arrays whose geometry the
				 * agent passes: address arithmetic, no runtime call */
				if (!strcmp(tool[t][0], "tools/threadhist") &&
				    (!strstr(ptx, "map_lookup_elem, inline") ||
				     strstr(ptx, "gx_rt_map_lookup")))
					fail_msg("threadhist: lookups not inline in %s", path);
				/* memtrace_block counts in block-local arrays:
				 * .shared arrays the module declares, shared
				 * reductions */
				if (!strcmp(tool[t][0], "tools/memtrace_block") &&
				    (!strstr(ptx, ".shared .align 16 .b8 gx_block_map") ||
				     !strstr(ptx, "red.shared.add.u32")))
					fail_msg("memtrace_block: no block-local counters in %s", path);
				/* kernelretsnoop: both programs; the warp exit's
				 * slot from the block index register the kernel
				 * computes, its end time by one red.max */
				if (!strcmp(tool[t][0], "tools/kernelretsnoop") &&
				    (!strstr(ptx, "krs_block_start") ||
				     !strstr(ptx, "mul.wide.u32 " PTX_BLOCK_INDEX_REG) ||
				     !strstr(ptx, "red.global.max.u64")))
					fail_msg("kernelretsnoop: no block entry program, block "
						 "index register or red.max in %s", path);
				/* a module that declares the runtime is linked with
				 * the prebuilt one, as the driver's JIT linker does */
				int linked = strstr(ptx, ".extern .func") != NULL;
				/* the fake device is sm_90: the probes elect by
				 * elect.sync, the module's target raised to it */
				if (!strstr(ptx, "\n.target sm_90"))
					fail_msg("%s: target not raised to sm_90 in %s", tool[t][0], path);
				const char *arch = "sm_90";
				if (linked)
					snprintf(cmd, sizeof(cmd),
						 "/usr/local/cuda/bin/ptxas -c -arch=%s -o %s/i.o %s"
						 " && /usr/local/cuda/bin/nvlink -arch=%s %s/i.o "
						 "build/gen/ptx_rt_dev.fatbin -o /dev/null",
						 arch, dir, path, arch, dir);
				else
					snprintf(cmd, sizeof(cmd),
						 "/usr/local/cuda/bin/ptxas -arch=%s -o /dev/null %s", arch,
						 path);
				char *as = test_run_cmd(cmd, &status);
				if (status)
					fail_msg("%s: ptxas %s: %s", tool[t][0], path, as);
				free(as);
			}
			free(ptx);
			unlink(path);
		}
		snprintf(path, sizeof(path), "%s/log", dir);
		unlink(path);
		snprintf(path, sizeof(path), "%s/i.o", dir);
		unlink(path);
		rmdir(dir);
		assert_int_equal(instrumented, 2); /* vec_add's and reduce_atomic's modules */
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_checker),
		cmocka_unit_test(test_hist_log2),
		cmocka_unit_test(test_hist_linear_and_bars),
		cmocka_unit_test(test_threadhist),
		cmocka_unit_test_prestate(test_memtrace, (void *)&mt_warp),
		cmocka_unit_test(test_memtrace_collisions),
		cmocka_unit_test(test_memtrace_heat_ties),
		cmocka_unit_test_prestate(test_memtrace_sizes, (void *)&mt_warp),
		cmocka_unit_test_prestate(test_memtrace, (void *)&mt_block),
		cmocka_unit_test(test_memtrace_block_collisions),
		cmocka_unit_test_prestate(test_memtrace_sizes, (void *)&mt_block),
		cmocka_unit_test(test_memtrace_block_many),
		cmocka_unit_test(test_smload),
		cmocka_unit_test(test_kernelretsnoop),
		cmocka_unit_test(test_kernelretsnoop_no_row),
		cmocka_unit_test(test_warpretsnoop),
		cmocka_unit_test(test_blockretsnoop),
		cmocka_unit_test(test_launchlate),
		cmocka_unit_test(test_wrong_object),
		cmocka_unit_test(test_cli_tools),
		cmocka_unit_test(test_tools_injected),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
