/* SPDX-License-Identifier: MIT */
/*
 * core_read: CO-RE relocations (BPF_CORE_READ, bpf_core_field_size,
 * bpf_core_field_exists) on the real struct pt_regs.  gpuext leaves them as
 * compiled, which is right for its fixed context layouts.
 * Returns rdi + sizeof(rdi) + (rsi exists).
 */
#include "progs.h"
#include <bpf/bpf_core_read.h>

SEC("uprobe/cuInit")
int core_read(struct pt_regs *ctx)
{
	return BPF_CORE_READ(ctx, rdi) + bpf_core_field_size(ctx->rdi) +
	       bpf_core_field_exists(ctx->rsi);
}

char LICENSE[] SEC("license") = "GPL";
