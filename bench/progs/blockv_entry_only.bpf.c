/* SPDX-License-Identifier: MIT */
/* bench/results/2026-11-22-h200-block-probes.md (blk_entry_only): an empty block_entry probe alone (barrier + record) */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpuext.h>
SEC("gpu/block_entry/*")
int empty_block_entry(struct gpuext_block_ctx *ctx)
{
	return 0;
}
char LICENSE[] SEC("license") = "GPL";
