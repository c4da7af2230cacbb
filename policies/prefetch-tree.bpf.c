/* SPDX-License-Identifier: MIT */
/*
 * prefetch-tree: the driver's density-tree prefetch (threshold 51%)
 * written as a policy.  It must give exactly what no policy gives
 * (tests/unit/test_policies.c checks it): the starting point for variants
 * such as prefetch-pid-tree.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpu_mem_ops.h>

#include "policy_common.h"

SEC("struct_ops/gpu_page_prefetch")
int tree_prefetch(struct gpu_mem_prefetch_ctx *ctx)
{
	return policy_tree_region(ctx, POLICY_TREE_THRESHOLD);
}

SEC(".struct_ops")
struct gpu_mem_ops prefetch_tree = {
	.gpu_page_prefetch = (void *)tree_prefetch,
};

char LICENSE[] SEC("license") = "GPL";
