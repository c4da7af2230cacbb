/* SPDX-License-Identifier: MIT */
/* reject_ctx: an evict_prepare op reading past struct gpu_mem_evict_ctx
 * (24 bytes) but inside the generic struct_ops ctx (96): the policy
 * profile must refuse it (tests/unit/test_policies.c). */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpu_mem_ops.h>

SEC("struct_ops/gpu_evict_prepare")
int past_end(struct gpu_mem_evict_ctx *ctx)
{
	return (int)((__u64 *)ctx)[4];
}

SEC(".struct_ops")
struct gpu_mem_ops past = {
	.gpu_evict_prepare = (void *)past_end,
};

char LICENSE[] SEC("license") = "GPL";
