/* SPDX-License-Identifier: MIT */
/* bench/results/2026-11-22-h200-block-probes-s5.md, kernelretsnoop decomposed:
 * the end time alone (one %globaltimer after the exit barrier, one 8-byte
 * store at the block index; no start time); KRS_END_VALUE: what is stored
 * (blockv_krs_store1 stores the block index instead, no time read) */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpuext.h>
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1 << 16);
	__type(key, __u32);
	__type(value, __u64);
} ends SEC(".maps");
#ifndef KRS_END_VALUE
#define KRS_END_VALUE(ctx) ((ctx)->end_ns)
#endif
SEC("gpu/block_exit/*")
int krs_end(struct gpuext_block_ctx *ctx)
{
	__u32 slot = ctx->block & ((1 << 16) - 1);
	__u64 *e = bpf_map_lookup_elem(&ends, &slot);
	if (e)
		*e = KRS_END_VALUE(ctx);
	return 0;
}
char LICENSE[] SEC("license") = "GPL";
