// SPDX-License-Identifier: MIT
/*
 * ptx_modules.cuh - what ptx_module_cost and ptx_module_cost_reduce share:
 * their command line and a kernel loaded from a PTX module the agent wrote
 * (or a copy of it edited by hand), its map table pointed at a buffer of
 * the program's, so that the maps its probes write are real memory.
 */
#pragma once
#include <cuda.h>

#include <fstream>
#include <sstream>
#include <string>

#include "cost_rounds.cuh"

#define CU(call)                                                               \
	do {                                                                   \
		CUresult r_ = (call);                                          \
		if (r_ != CUDA_SUCCESS) {                                      \
			const char *s_ = "?";                                  \
			cuGetErrorString(r_, &s_);                             \
			printf("%s:%d: %s: %s\n", __FILE__, __LINE__, #call, s_); \
			exit(1);                                               \
		}                                                              \
	} while (0)

/* `PROG [-rounds R] PLAIN.ptx A.ptx ...`: *rounds (default 15) and the
 * index of the first module in argv; exits with the usage when none. */
static int ptx_modules_args(int argc, char **argv, int *rounds)
{
	int first = 1;
	*rounds = 15;
	if (argc > 2 && std::string(argv[1]) == "-rounds") {
		*rounds = atoi(argv[2]);
		first = 3;
	}
	if (argc - first < 1) {
		printf("usage: %s [-rounds R] PLAIN.ptx A.ptx ...\n", argv[0]);
		exit(2);
	}
	return first;
}

/*
 * Kernel `name` of the PTX module at path, loaded (the JIT's log printed
 * where it does not load: exit).  The text GX_MAPS_ADDR in the module is
 * replaced with maps' address first (variants that take a map's address
 * as an immediate), GX_MAPS_LO and GX_MAPS_HI with its low and high 32
 * bits (variants that add an offset to the low word alone: maps' 64 MiB
 * must not cross a 4 GiB line); its `gx_map_table` (the agent's map table, .const) and
 * `gx_map_gtable` (a copy in .global, for variants that read it so), where
 * it has them, get every entry pointed at maps.
 */
static CUfunction ptx_modules_load(const char *path, const char *name, void *maps)
{
	std::ifstream f(path);
	if (!f) {
		printf("cannot read %s\n", path);
		exit(1);
	}
	std::stringstream s;
	s << f.rdbuf();
	std::string ptx = s.str();
	unsigned long long m = (unsigned long long)(uintptr_t)maps;
	char addr[32], lo[16], hi[16];
	snprintf(addr, sizeof addr, "0x%llx", m);
	snprintf(lo, sizeof lo, "0x%llx", m & 0xffffffffu);
	snprintf(hi, sizeof hi, "0x%llx", m >> 32);
	if ((m & 0xffffffffu) + (64ull << 20) >> 32 && ptx.find("GX_MAPS_LO") != std::string::npos) {
		printf("%s: the maps' buffer crosses a 4 GiB line: its low word cannot be added alone\n",
		       path);
		exit(1);
	}
	for (auto &[key, val] : { std::pair<std::string, const char *>{ "GX_MAPS_ADDR", addr },
				  { "GX_MAPS_LO", lo }, { "GX_MAPS_HI", hi } })
		for (size_t at; (at = ptx.find(key)) != std::string::npos;)
			ptx.replace(at, key.size(), val);
	CUmodule mod;
	CUfunction fn;
	char log[8192] = "";
	CUjit_option opt[] = { CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES };
	void *val[] = { log, (void *)(uintptr_t)sizeof log };
	if (cuModuleLoadDataEx(&mod, ptx.c_str(), 2, opt, val) != CUDA_SUCCESS) {
		printf("%s does not load: %s\n", path, log);
		exit(1);
	}
	CU(cuModuleGetFunction(&fn, mod, name));
	for (const char *table_name : { "gx_map_table", "gx_map_gtable" }) {
		CUdeviceptr table;
		size_t size;
		if (cuModuleGetGlobal(&table, &size, mod, table_name) == CUDA_SUCCESS) {
			std::vector<unsigned long long> v(size / 8, (unsigned long long)(uintptr_t)maps);
			CU(cuMemcpyHtoD(table, v.data(), size));
		}
	}
	return fn;
}
