/* SPDX-License-Identifier: MIT */
/*
 * kernelsnoop: every kernel the GPU ran, from CUPTI's activity records, so
 * also kernels that carry no PTX (cuBLAS, cuDNN, PyTorch's own): name,
 * grid, block, start/end, stream, and the host time of the launching call.
 * The record is copied into the ring buffer as it is; the CLI prints one
 * line per kernel and a per-kernel summary (src/cli/tool_kernelsnoop.c).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "kernelsnoop.h"

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, KS_RINGBUF_BYTES);
} events SEC(".maps");

SEC("cupti/kernel")
int ks_kernel(const struct gpuext_cupti_kernel *k)
{
	struct gpuext_cupti_kernel *rec = bpf_ringbuf_reserve(&events, sizeof(*rec), 0);

	if (!rec)
		return 0; /* full: counted as a drop by the ring buffer */
	__builtin_memcpy(rec, k, sizeof(*rec));
	bpf_ringbuf_submit(rec, 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
