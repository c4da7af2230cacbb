/* SPDX-License-Identifier: MIT */
/*
 * prefetch-pid-tree: the density tree with a threshold per process, from
 * the map `threshold_pct` (pid -> percent, 1..100; written by the user):
 * a low threshold prefetches eagerly for a latency-critical process, a high
 * one keeps a background process from filling the budget with prefetch.
 * Pids without an entry get PID_TREE_DEFAULT_PCT, below the driver's 51%:
 * by default this prefetches more eagerly than the driver.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpu_mem_ops.h>

#include "policy_common.h"

#define PID_TREE_DEFAULT_PCT 34

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u32);
} threshold_pct SEC(".maps");

SEC("struct_ops/gpu_page_prefetch")
int pid_tree_prefetch(struct gpu_mem_prefetch_ctx *ctx)
{
	__u32 pid = ctx->pid;
	__u32 *pct = bpf_map_lookup_elem(&threshold_pct, &pid);
	__u32 t = pct ? *pct : PID_TREE_DEFAULT_PCT;

	if (t < 1 || t > 100)
		t = POLICY_TREE_THRESHOLD;
	return policy_tree_region(ctx, t);
}

SEC(".struct_ops")
struct gpu_mem_ops prefetch_pid_tree = {
	.gpu_page_prefetch = (void *)pid_tree_prefetch,
};

char LICENSE[] SEC("license") = "GPL";
