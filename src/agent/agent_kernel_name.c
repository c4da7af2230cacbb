/* SPDX-License-Identifier: MIT */
/*
 * agent_kernel_name.c - the host helper bpf_cuda_kernel_name (helpers.h):
 * the name of a CUfunction or CUkernel for API-probe programs.
 *
 * First the agent's own table (kernels it saw loaded: cuModuleGetFunction,
 * cuLibraryGetKernel and their aliases), which costs no driver call; then
 * the driver.  cuFuncGetName fails on a CUkernel launched as a CUfunction
 * (cudart does that) while cuKernelGetName answers it, so both are asked,
 * the function first.  The driver functions are the real ones, never the
 * application's probed pointers: a probe calling this cannot recurse.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "agent_impl.h"
#include "bpf/helpers.h"

typedef CUresult (*name_of_fn)(const char **name, void *handle);

static long agent_kernel_name(uint64_t handle, char *buf, size_t size)
{
	static name_of_fn func_name, kernel_name;
	const struct agent_kernel *k = agent_kernel_find((const void *)(uintptr_t)handle);
	const char *name = k ? k->name : NULL;

	if (!name && handle) {
		if (!func_name)
			func_name = (name_of_fn)agent_real_driver("cuFuncGetName");
		if (!kernel_name)
			kernel_name = (name_of_fn)agent_real_driver("cuKernelGetName");
		if (func_name && func_name(&name, (void *)(uintptr_t)handle) != CUDA_SUCCESS)
			name = NULL;
		if (!name && kernel_name &&
		    kernel_name(&name, (void *)(uintptr_t)handle) != CUDA_SUCCESS)
			name = NULL;
	}
	if (!name) {
		buf[0] = 0;
		return -ENOENT;
	}
	snprintf(buf, size, "%s", name);
	return (long)strlen(name);
}

__attribute__((constructor(101))) static void agent_kernel_name_init(void)
{
	helper_set_kernel_name_fn(agent_kernel_name);
}
