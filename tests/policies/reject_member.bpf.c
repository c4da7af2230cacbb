/* SPDX-License-Identifier: MIT */
/* reject_member: a struct_ops member set to a program of another section;
 * the loader binds it, the policy runtime must refuse it naming the member
 * (tests/unit/test_policies.c). */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpu_mem_ops.h>

SEC("uprobe/cuLaunchKernel")
int not_an_op(void *ctx)
{
	return 0;
}

SEC(".struct_ops")
struct gpu_mem_ops bad = {
	.gpu_evict_prepare = (void *)not_an_op,
};

char LICENSE[] SEC("license") = "GPL";
