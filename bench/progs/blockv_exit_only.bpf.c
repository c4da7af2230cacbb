/* SPDX-License-Identifier: MIT */
/* bench/results/2026-11-22-h200-block-probes.md (blk_exit_only): an empty block_exit probe alone */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpuext.h>
SEC("gpu/block_exit/*")
int empty_block_exit(struct gpuext_block_ctx *ctx)
{
	return 0;
}
char LICENSE[] SEC("license") = "GPL";
