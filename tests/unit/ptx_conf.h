/* SPDX-License-Identifier: MIT */
/*
 * ptx_conf.h - reading the shared conformance cases, for the PTX tests.
 * (Only the parts they need: the program bytes, the memory, the result.)
 */
#ifndef GPUEXT_TEST_PTX_CONF_H
#define GPUEXT_TEST_PTX_CONF_H

#include <stddef.h>
#include <stdint.h>

#include "bpf/isa.h"

struct ptx_conf_case {
	char name[128];
	struct isa_insn *insns;
	size_t insn_cnt;
	uint8_t *mem;
	size_t mem_len;
	uint64_t result;
};

/* Every case of dir, sorted by name; returns the count or -1. */
int ptx_conf_load_all(const char *dir, struct ptx_conf_case **out);
void ptx_conf_free_all(struct ptx_conf_case *cases, int n);

#endif
