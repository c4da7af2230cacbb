/* SPDX-License-Identifier: MIT */
/*
 * test_apiprobe.c - the in-process API probe trampolines on ordinary C
 * functions: clang-compiled BPF_KPROBE/BPF_KRETPROBE programs
 * (tests/progs/apiprobe.bpf.c) see PT_REGS_PARM1..6 and the return value;
 * stack and float arguments reach the real function untouched; many
 * threads; nesting past the shadow stack; the recursion guard.
 */
#include "testutil.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <string.h>

#include "agent/apiprobe.h"
#include "bpf/helpers.h"
#include "bpf/jit.h"
#include "bpf/map.h"
#include "bpf/object.h"
#include "bpf/verifier.h"

#define PROGS TEST_BPF_DIR "/tests/progs/apiprobe.bpf.o"

typedef long fn8_t(long, long, long, long, long, long, long, double);
typedef long fn0_t(void);

static struct object *obj;
static fn8_t *fn6;           /* the trampoline of apiprobe_fn6 */
static fn0_t *reenter;       /* the trampoline of apiprobe_reenter */
static uintptr_t fn6_entry_sp;
static int nest;             /* apiprobe_fn6 calls itself a1 deep */
static _Atomic long reenter_calls;

/* Eight arguments: six in registers, one on the stack, one in xmm0. */
__attribute__((noinline)) static long real_fn6(long a1, long a2, long a3, long a4, long a5,
					       long a6, long a7, double d)
{
	/* With a frame pointer, rbp = entry sp - 8. */
	fn6_entry_sp = (uintptr_t)__builtin_frame_address(0) + 8;
	if (nest && a1 > 0)
		return fn6(a1 - 1, a2, a3, a4, a5, a6, a7, d) + 1;
	return a1 + a2 + a3 + a4 + a5 + a6 + a7 + (long)d;
}

__attribute__((noinline)) static long real_reenter(void)
{
	return ++reenter_calls;
}

/* Bound to bpf_get_current_pid_tgid for reenter_enter: a probe that calls
 * back into a probed function. */
static uint64_t helper_call_probed(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				   uint64_t r5)
{
	return (uint64_t)reenter();
}

static uint64_t get(const char *map, uint32_t key)
{
	uint64_t v = 0;
	struct object_map *m = object_find_map(obj, map);
	assert_non_null(m);
	assert_int_equal(map_lookup_copy(m->map, &key, &v), 0);
	return v;
}

static int setup(void **state)
{
	static struct helper_table helpers;
	struct err e = {{0}};

	apiprobe_reset();
	if (object_open(PROGS, &obj, &e) || object_create_maps(obj, &e))
		fail_msg("%s: %s", PROGS, e.msg);
	for (size_t i = 0; i < obj->prog_cnt; i++)
		if (verifier_check(obj->progs[i], NULL, NULL, &e))
			fail_msg("%s: verifier: %s", PROGS, e.msg);
	helpers = *helper_table_default();
	helpers.fn[14] = helper_call_probed; /* BPF_FUNC_get_current_pid_tgid */
	if (jit_compile(object_find_prog(obj, "reenter_enter"), &helpers, &e))
		fail_msg("JIT: %s", e.msg);
	int n = apiprobe_attach_object(obj, &e);
	if (n < 0)
		fail_msg("attach: %s", e.msg);
	assert_int_equal(n, 3);
	fn6 = (fn8_t *)apiprobe_wrap("apiprobe_fn6", (void *)real_fn6);
	reenter = (fn0_t *)apiprobe_wrap("apiprobe_reenter", (void *)real_reenter);
	assert_ptr_not_equal(fn6, real_fn6);
	assert_ptr_not_equal(reenter, real_reenter);
	*state = NULL;
	return 0;
}

static int teardown(void **state)
{
	apiprobe_reset();
	object_free(obj);
	obj = NULL;
	nest = 0;
	return 0;
}

static void test_regs_layout(void **state)
{
	long r = fn6(11, 22, 33, 44, 55, 66, 77, 8.5);
	assert_int_equal(r, 11 + 22 + 33 + 44 + 55 + 66 + 77 + 8);
	for (uint32_t i = 0; i < 6; i++)
		assert_int_equal(get("args", i), 11 * (i + 1));
	assert_int_equal(get("args", 6), fn6_entry_sp); /* PT_REGS_SP: at the return address */
	assert_int_equal(get("args", 7), r);            /* PT_REGS_RC in the return probe */
	assert_int_equal(get("counts", 0), 1);
	assert_int_equal(get("counts", 1), 1);
	/* Negative and full-width values pass unchanged. */
	r = fn6(-1, INT64_MAX, INT64_MIN, 0, 1, -2, 0, -0.0);
	assert_int_equal(get("args", 0), (uint64_t)-1);
	assert_int_equal(get("args", 1), (uint64_t)INT64_MAX);
	assert_int_equal(get("args", 2), (uint64_t)INT64_MIN);
	assert_int_equal(get("args", 7), (uint64_t)r);
}

__attribute__((noinline)) static long real_fn6_other(long a1, long a2, long a3, long a4,
						     long a5, long a6, long a7, double d)
{
	return -real_fn6(a1, a2, a3, a4, a5, a6, a7, d);
}

/* One name, two real functions (two versions from cuGetProcAddress): each
 * keeps its own trampoline, both run the probes. */
static void test_one_name_two_reals(void **state)
{
	fn8_t *other = (fn8_t *)apiprobe_wrap("apiprobe_fn6", (void *)real_fn6_other);
	assert_ptr_not_equal(other, fn6);
	assert_ptr_equal(apiprobe_wrap("apiprobe_fn6", (void *)real_fn6), fn6);
	assert_int_equal(other(1, 2, 3, 4, 5, 6, 7, 8.0), -36);
	assert_int_equal(fn6(1, 2, 3, 4, 5, 6, 7, 8.0), 36);
	assert_int_equal(get("counts", 0), 2);
	assert_int_equal(get("args", 7), 36);
}

/* Varargs: al (the count of vector registers used) and the xmm registers
 * must reach the real function as the caller set them. */
__attribute__((noinline)) static double real_va_sum(int n, ...)
{
	va_list ap;
	double sum = 0;
	va_start(ap, n);
	for (int i = 0; i < n; i++)
		sum += i % 2 ? (double)va_arg(ap, long) : va_arg(ap, double);
	va_end(ap);
	return sum;
}

static void test_varargs_passthrough(void **state)
{
	typedef double va_fn(int, ...);
	struct err e = {{0}};
	struct prog *p = object_find_prog(obj, "fn6_enter");

	assert_int_equal(apiprobe_attach("apiprobe_va", p, &e), 0);
	va_fn *va = (va_fn *)apiprobe_wrap("apiprobe_va", (void *)real_va_sum);
	assert_ptr_not_equal(va, real_va_sum);
	/* 6 doubles in xmm0-5, 5 longs: rsi..r9 then the stack. */
	double got = va(11, 0.5, 1L, 1.5, 2L, 2.5, 3L, 3.5, 4L, 4.5, 5L, 5.5);
	assert_true(got == 0.5 + 1 + 1.5 + 2 + 2.5 + 3 + 3.5 + 4 + 4.5 + 5 + 5.5);
	assert_int_equal(get("args", 0), 11); /* PT_REGS_PARM1: n */
	assert_int_equal(get("args", 1), 1);  /* PARM2: the first long */
	assert_int_equal(get("counts", 0), 1);
}

static void test_unprobed_passthrough(void **state)
{
	assert_ptr_equal(apiprobe_wrap("not_probed", (void *)real_reenter), real_reenter);
	assert_null(apiprobe_wrap("apiprobe_fn6", NULL));
	assert_true(apiprobe_has("apiprobe_fn6"));
	assert_false(apiprobe_has("not_probed"));
}

enum { THREADS = 8, CALLS = 20000 };

static void *thread_main(void *arg)
{
	long t = (long)(uintptr_t)arg, sum = 0;
	for (long i = 0; i < CALLS; i++) {
		long r = fn6(t, i, 0, 0, 0, 0, 1, 0.0);
		if (r != t + i + 1)
			return (void *)1;
		sum += r;
	}
	return (void *)(uintptr_t)(sum != CALLS * (t + 1) + (long)CALLS * (CALLS - 1) / 2);
}

static void test_threads(void **state)
{
	pthread_t th[THREADS];
	uint64_t expect = 0;
	for (long t = 0; t < THREADS; t++) {
		assert_int_equal(pthread_create(&th[t], NULL, thread_main, (void *)(uintptr_t)t), 0);
		expect += CALLS * (t + 1) + (uint64_t)CALLS * (CALLS - 1) / 2;
	}
	for (int t = 0; t < THREADS; t++) {
		void *bad;
		assert_int_equal(pthread_join(th[t], &bad), 0);
		assert_null(bad);
	}
	assert_int_equal(get("counts", 0), THREADS * CALLS);
	assert_int_equal(get("counts", 1), THREADS * CALLS);
	assert_int_equal(get("counts", 2), expect);
}

/* Deeper than the shadow stack: the extra calls run without return probes
 * and every call still returns to the right place. */
static void test_nesting(void **state)
{
	enum { DEPTH = APIPROBE_MAX_DEPTH + 36 };
	struct apiprobe_stats st;

	nest = 1;
	assert_int_equal(fn6(DEPTH, 1, 2, 3, 4, 5, 6, 7.0), DEPTH + 1 + 2 + 3 + 4 + 5 + 6 + 7);
	assert_int_equal(get("counts", 0), DEPTH + 1);
	assert_int_equal(get("counts", 1), APIPROBE_MAX_DEPTH);
	apiprobe_stats_get(&st);
	assert_int_equal(st.depth_skips, DEPTH + 1 - APIPROBE_MAX_DEPTH);
	/* The shadow stack is balanced again: a plain call gets its probe. */
	nest = 0;
	fn6(1, 1, 1, 1, 1, 1, 1, 1.0);
	assert_int_equal(get("counts", 1), APIPROBE_MAX_DEPTH + 1);
}

static void test_recursion_guard(void **state)
{
	struct apiprobe_stats st;

	reenter_calls = 0;
	assert_int_equal(reenter(), 2); /* the probe's inner call ran first */
	assert_int_equal(reenter_calls, 2);
	assert_int_equal(get("counts", 0), 1); /* the probe ran for the outer call only */
	apiprobe_stats_get(&st);
	assert_int_equal(st.recursion_skips, 1);
	assert_int_equal(st.prog_errors, 0);
}

/* Several entry programs on one function (the general path of the
 * trampoline's C half): each runs once per call, in attach order. */
static void test_two_entry_programs(void **state)
{
	struct err e = {{0}};
	struct prog *p = object_find_prog(obj, "fn6_enter");
	assert_int_equal(apiprobe_attach("apiprobe_twice", p, &e), 0);
	assert_int_equal(apiprobe_attach("apiprobe_twice", p, &e), 0);
	fn8_t *twice = (fn8_t *)apiprobe_wrap("apiprobe_twice", (void *)real_fn6);
	assert_int_equal(twice(1, 2, 3, 4, 5, 6, 7, 8.0), 36);
	assert_int_equal(get("counts", 0), 2);
	assert_int_equal(get("counts", 1), 0); /* no return program on this name */
	assert_int_equal(get("args", 5), 6);
}

static void test_attach_errors(void **state)
{
	struct err e = {{0}};
	struct prog *p = object_find_prog(obj, "fn6_enter");
	enum prog_type t = p->type;

	p->type = PROG_TYPE_RAW;
	assert_int_equal(apiprobe_attach("x", p, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "fn6_enter"));
	p->type = t;
	char name[APIPROBE_NAME_MAX + 8];
	memset(name, 'a', sizeof(name) - 1);
	name[sizeof(name) - 1] = 0;
	assert_int_equal(apiprobe_attach(name, p, &e), -ENAMETOOLONG);
	for (int i = 0; i < APIPROBE_MAX_PROGS; i++)
		assert_int_equal(apiprobe_attach("many", p, &e), 0);
	assert_int_equal(apiprobe_attach("many", p, &e), -ENOSPC);
	assert_non_null(strstr(e.msg, "'many'"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_regs_layout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unprobed_passthrough, setup, teardown),
		cmocka_unit_test_setup_teardown(test_one_name_two_reals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_varargs_passthrough, setup, teardown),
		cmocka_unit_test_setup_teardown(test_threads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nesting, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recursion_guard, setup, teardown),
		cmocka_unit_test_setup_teardown(test_two_entry_programs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_attach_errors, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
