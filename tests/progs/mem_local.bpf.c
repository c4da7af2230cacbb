/* SPDX-License-Identifier: MIT */
/*
 * mem_local.bpf.c - a gpu/mem program that needs local memory on the GPU:
 * its ctx pointer goes to a bpf-to-bpf callee (so the ctx is in memory, not
 * only in registers) and it indexes a stack array with a computed offset
 * (so its frame stays in memory).  Such a probe is called at each access,
 * not pasted (test_ptx_mem_inline: ptxas gives each pasted copy its own
 * frame).
 */
#include "progs.h"
#include <bpf/gpuext.h>

__noinline static __u64 region_of(struct gpuext_mem_ctx *ctx)
{
	return ctx->addr >> 21;
}

SEC("gpu/mem/*")
int mem_local(struct gpuext_mem_ctx *ctx)
{
	__u64 buckets[8] = {0};
	__u32 i = ctx->size & 7;

	buckets[i] = region_of(ctx);
	return buckets[ctx->kind & 7] != 0;
}

char LICENSE[] SEC("license") = "GPL";
