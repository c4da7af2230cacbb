/* SPDX-License-Identifier: MIT */
/*
 * gpu_empty: an entry and an exit probe that do nothing, on every kernel.
 * What instrumentation itself costs: the probe calls, the election of the
 * warp's lowest active lane and the warp-wide wait (bench/gpu_overhead.sh).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("gpu/entry/*")
int empty_entry(void *ctx)
{
	return 0;
}

SEC("gpu/exit/*")
int empty_exit(void *ctx)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
