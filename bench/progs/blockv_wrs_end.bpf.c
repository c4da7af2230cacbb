/* SPDX-License-Identifier: MIT */
/* bench/results/2026-11-22-h200-block-probes-s5.md, kernelretsnoop without the
 * exit barrier: each warp's exit (its lowest lane) stores its own
 * %globaltimer at (block index, warp), for the host to take the block's
 * latest; no block probe */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpuext.h>
#define WE_SLOTS (1 << 20)
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, WE_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} ends SEC(".maps");
SEC("gpu/exit/*")
int wrs_end(void *ctx)
{
	__u32 slot = (bpf_gpu_block_idx(0) * 32 + bpf_gpu_warp_id()) & (WE_SLOTS - 1);
	__u64 *e = bpf_map_lookup_elem(&ends, &slot);
	if (e)
		*e = bpf_gpu_globaltimer();
	return 0;
}
char LICENSE[] SEC("license") = "GPL";
