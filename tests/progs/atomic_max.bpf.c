/* SPDX-License-Identifier: MIT */
/*
 * atomic_max: bpf_gpu_atomic_max (helper 513) on the host backends, on two
 * words of a map value: one whose result is used (returned: the old
 * value), one whose result is dropped (on the GPU a `red`), in an API
 * probe (the agent's programs).  Input: x, the first argument register.
 */
#include "progs.h"

#include <bpf/gpuext.h>

struct maxes {
	__u64 kept;  /* the maximum, its old value returned */
	__u64 blind; /* the maximum, its old value dropped */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct maxes);
} maxes SEC(".maps");

SEC("uprobe/cuLaunchKernel")
int atomic_max(struct pt_regs *ctx)
{
	__u32 zero = 0;
	__u64 x = PT_REGS_PARM1(ctx);
	struct maxes *m = bpf_map_lookup_elem(&maxes, &zero);

	if (!m)
		return -1;
	bpf_gpu_atomic_max(&m->blind, x);
	return bpf_gpu_atomic_max(&m->kept, x);
}

char LICENSE[] SEC("license") = "GPL";
