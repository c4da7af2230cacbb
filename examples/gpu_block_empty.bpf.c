/* SPDX-License-Identifier: MIT */
/*
 * gpu_block_empty: a block_entry and a block_exit probe that do nothing, on
 * every kernel.  What block probes themselves cost (bench/gpu_tools_overhead.sh):
 * the block record filled in by thread (0,0,0), the entry barrier, and one
 * shared-memory atomic per warp exit.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpuext.h>

SEC("gpu/block_entry/*")
int empty_block_entry(struct gpuext_block_ctx *ctx)
{
	return 0;
}

SEC("gpu/block_exit/*")
int empty_block_exit(struct gpuext_block_ctx *ctx)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
