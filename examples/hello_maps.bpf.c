/* SPDX-License-Identifier: MIT */
/*
 * hello_maps.bpf.c - the quickstart example: count CUDA kernel launches.
 *
 * Attached to the entry of cuLaunchKernel(f, gridDimX, gridDimY, gridDimZ,
 * blockDimX, ...), it counts launches in an array map, counts launches per
 * grid size (blocks) in a hash map, and returns the number of blocks of the
 * launch.  ./quickstart.sh runs it with
 *     gpuext test-run build/bpf/examples/hello_maps.bpf.o uprobe/cuLaunchKernel \
 *         --data examples/hello_maps.data
 * where hello_maps.data is the register image (struct pt_regs, 168 bytes) of
 * one call: a 256 x 2 x 1 grid of 128-thread blocks, so it prints r0 = 512
 * and both maps.
 */
#define __TARGET_ARCH_x86 /* pt_regs layout for PT_REGS_PARMn */
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} launches SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64);   /* blocks in the grid */
	__type(value, __u64); /* launches with that many blocks */
} launches_by_blocks SEC(".maps");

SEC("uprobe/cuLaunchKernel")
int BPF_KPROBE(count_launch, void *f, unsigned int grid_x, unsigned int grid_y,
	       unsigned int grid_z)
{
	__u64 blocks = (__u64)grid_x * grid_y * grid_z, one = 1, *count;
	__u32 zero = 0;

	count = bpf_map_lookup_elem(&launches, &zero);
	if (count)
		__sync_fetch_and_add(count, 1);
	count = bpf_map_lookup_elem(&launches_by_blocks, &blocks);
	if (count)
		__sync_fetch_and_add(count, 1);
	else
		bpf_map_update_elem(&launches_by_blocks, &blocks, &one, BPF_NOEXIST);
	return blocks;
}

char LICENSE[] SEC("license") = "MIT";
