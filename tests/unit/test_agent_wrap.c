/* SPDX-License-Identifier: MIT */
/*
 * test_agent_wrap.c - the agent's interposition map, in process (the
 * agent's objects linked in, no driver): for every driver name the agent
 * wraps, the hook registry (what dlsym and cuGetProcAddress hand out)
 * returns the very function exported under that name, or under the name
 * the driver serves it as (cuCtxDestroy: cuCtxDestroy_v2's wrapper).
 * Names nobody wraps, and the names of the memory policy and CUPTI without
 * them, get the real function back.  The list is written out here, not taken from
 * agent_wrap.h, so a row lost or mistyped there fails.
 *
 * Under ASan it is skipped: the agent's objects bring its dlsym, which
 * ASan's runtime would call before it is set up (the same reason the agent
 * itself is only preloaded in its plain build).
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"

#define AGENT_SO "build/libgpuext-agent.so"

#if defined(__SANITIZE_ADDRESS__)
#define TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif

#ifdef TEST_ASAN
static void test_skipped_under_asan(void **state)
{
	skip();
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_skipped_under_asan)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
#else

/* The exported wrappers, by their symbol names (cuda.h renames some). */
#define AGENT_EXPORTED(X)                                                                 \
	X(cuModuleLoadData) X(cuModuleLoadDataEx) X(cuModuleLoadFatBinary) X(cuModuleLoad)  \
	X(cuModuleUnload) X(cuModuleGetFunction) X(cuLibraryLoadData) X(cuLibraryUnload)    \
	X(cuLibraryGetKernel) X(cuLibraryGetModule) X(cuKernelGetFunction) X(cuLaunchKernel) \
	X(cuLaunchKernel_ptsz) X(cuLaunchCooperativeKernel) X(cuLaunchCooperativeKernel_ptsz) \
	X(cuLaunchKernelEx) X(cuLaunchKernelEx_ptsz) X(cuDevicePrimaryCtxRelease_v2)        \
	X(cuDevicePrimaryCtxReset_v2) X(cuCtxDestroy_v2) X(cuLinkCreate) X(cuLinkCreate_v2) \
	X(cuLinkAddData) X(cuLinkAddData_v2) X(cuLinkAddFile) X(cuLinkAddFile_v2)          \
	X(cuLinkComplete) X(cuLinkDestroy) X(cuGraphAddKernelNode) X(cuGraphAddKernelNode_v2) \
	X(cuGraphKernelNodeSetParams) X(cuGraphKernelNodeSetParams_v2)                     \
	X(cuGraphExecKernelNodeSetParams) X(cuGraphExecKernelNodeSetParams_v2)             \
	X(cuStreamCreate) X(cuStreamCreateWithPriority) X(cuInit) X(cuMemAllocManaged)     \
	X(cuMemFree_v2) X(cuGetProcAddress) X(cuGetProcAddress_v2) X(cuDevicePrimaryCtxRetain)  \
	X(cuCtxCreate_v2) X(cuCtxCreate_v4)

#define DECLARE(sym) extern char exported_##sym[] __asm__(#sym);
AGENT_EXPORTED(DECLARE)
#undef DECLARE

/* Stands for the driver's function: never called. */
static char real_fn[1];

static void *lookup(const char *name)
{
	return agent_hook_lookup(name, real_fn);
}

static void test_every_export_handed_out(void **state)
{
	/* handed out only under a memory policy, or with CUPTI programs */
	static const char *const gated_names[] = {"cuMemAllocManaged", "cuMemFree_v2", "cuInit",
						  "cuDevicePrimaryCtxRetain", "cuCtxCreate_v2",
						  "cuCtxCreate_v4"};
#define CHECK(sym)                                                                     \
	do {                                                                           \
		int gated = 0;                                                         \
		for (size_t i = 0; i < sizeof(gated_names) / sizeof(gated_names[0]); i++)   \
			gated |= !strcmp(#sym, gated_names[i]);                           \
		void *want = gated ? (void *)real_fn : (void *)exported_##sym;         \
		if (lookup(#sym) != want)                                              \
			fail_msg("%s: the registry hands out %p, not %s (%p)", #sym,   \
				 lookup(#sym), gated ? "the real function" : "the export", \
				 want);                                                \
	} while (0);
	AGENT_EXPORTED(CHECK)
#undef CHECK
}

/* The preloaded library exports exactly the names above, dlsym and ioctl:
 * a wrapper added without a row here fails. */
static void test_exports_listed(void **state)
{
	static const char *const listed[] = {
#define NAME(sym) #sym,
		AGENT_EXPORTED(NAME)
#undef NAME
		"dlsym", "ioctl",
	};
	int st;
	char *out = test_run_cmd("nm -D --defined-only " AGENT_SO " | awk '{print $3}'", &st);
	assert_non_null(out);
	if (st)
		skip(); /* no nm, or the library is not built */
	size_t n = 0;
	for (char *save = NULL, *sym = strtok_r(out, "\n", &save); sym;
	     sym = strtok_r(NULL, "\n", &save), n++) {
		size_t i = 0;
		while (i < sizeof(listed) / sizeof(listed[0]) && strcmp(sym, listed[i]))
			i++;
		if (i == sizeof(listed) / sizeof(listed[0]))
			fail_msg("%s exports %s, which this test does not list", AGENT_SO, sym);
	}
	free(out);
	assert_int_equal(n, sizeof(listed) / sizeof(listed[0]));
}

/* Names the driver hands out for a function exported under another name. */
static void test_aliases(void **state)
{
	assert_ptr_equal(lookup("cuCtxDestroy"), exported_cuCtxDestroy_v2);
	assert_ptr_equal(lookup("cuDevicePrimaryCtxRelease"), exported_cuDevicePrimaryCtxRelease_v2);
	assert_ptr_equal(lookup("cuDevicePrimaryCtxReset"), exported_cuDevicePrimaryCtxReset_v2);
	/* the graph base names keep the v1 wrapper unless the real function is
	 * the driver's _v2 (no driver here) */
	assert_ptr_equal(lookup("cuGraphAddKernelNode"), exported_cuGraphAddKernelNode);
	assert_ptr_equal(lookup("cuMemFree"), real_fn); /* no memory policy */
}

static void test_unwrapped_names_pass(void **state)
{
	assert_ptr_equal(lookup("cuCtxSynchronize"), real_fn);
	assert_ptr_equal(lookup("cuModuleLoadDataEx_v2"), real_fn);
	assert_ptr_equal(lookup("cuLaunchHostFunc"), real_fn);
	assert_null(agent_hook_lookup("cuModuleLoadData", NULL)); /* missing stays missing */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_export_handed_out),
		cmocka_unit_test(test_exports_listed),
		cmocka_unit_test(test_aliases),
		cmocka_unit_test(test_unwrapped_names_pass),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
#endif /* TEST_ASAN */
