/* SPDX-License-Identifier: MIT */
/*
 * gpu_block_fields: every field of struct gpuext_block_ctx checked against what
 * the GPU helpers say, in a block_entry and a block_exit program, on a GPU
 * (tests/gpu/block_ctx.sh).  Each run adds one block to `checks[0]`
 * (entry) or `checks[2]` (exit) when every field is right, else to
 * `checks[1]` / `checks[3]` and the failed fields' bits to `failed[0]` /
 * `failed[1]` (bit n: the check numbered n below).  So, on any kernel, the
 * blocks launched are checks[0] = checks[2] and checks[1] = checks[3] = 0,
 * whether the block code gives the program its record in registers (the
 * default, where the program only reads fields) or in shared memory
 * (GPUEXT_PTX_BLOCK_RECORD=1).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpuext.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} checks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} failed SEC(".maps");

/* The bits of the fields that are wrong; exit: the block_exit record. */
static __always_inline __u64 bf_wrong(const struct gpuext_block_ctx *ctx, int exit)
{
	__u64 block = bpf_gpu_block_idx(0) +
		      bpf_gpu_grid_dim(0) * (bpf_gpu_block_idx(1) +
					     bpf_gpu_grid_dim(1) * bpf_gpu_block_idx(2));
	__u64 threads = bpf_gpu_block_dim(0) * bpf_gpu_block_dim(1) * bpf_gpu_block_dim(2);
	__u64 now = bpf_gpu_globaltimer(), bad = 0;

	bad |= (__u64)(ctx->block != block) << 0;
	bad |= (__u64)(ctx->sm != bpf_gpu_sm_id()) << 1;
	bad |= (__u64)(ctx->threads != threads) << 2;
	bad |= (__u64)(ctx->warps != (threads + 31) / 32) << 3;
	bad |= (__u64)(ctx->start_ns == 0 || ctx->start_ns > now) << 4;
	if (exit) {
		bad |= (__u64)(ctx->end_ns < ctx->start_ns || ctx->end_ns > now) << 5;
		bad |= (__u64)(ctx->exit_threads != threads) << 6;
		/* a warp whose lanes leave apart counts once per part (counted) */
		bad |= (__u64)(ctx->exit_warps < ctx->warps) << 7;
	} else {
		bad |= (__u64)(ctx->end_ns != 0) << 5;
		bad |= (__u64)(ctx->exit_threads != 0 || ctx->exit_warps != 0) << 6;
	}
	return bad;
}

static __always_inline void bf_count(__u32 base, __u64 bad)
{
	__u32 k = base + (bad != 0), f = base / 2;
	__u64 *n = bpf_map_lookup_elem(&checks, &k);
	if (n)
		__sync_fetch_and_add(n, 1);
	__u64 *b = bpf_map_lookup_elem(&failed, &f);
	if (b && bad)
		__sync_fetch_and_or(b, bad);
}

SEC("gpu/block_entry/*")
int bf_entry(struct gpuext_block_ctx *ctx)
{
	bf_count(0, bf_wrong(ctx, 0));
	return 0;
}

SEC("gpu/block_exit/*")
int bf_exit(struct gpuext_block_ctx *ctx)
{
	bf_count(2, bf_wrong(ctx, 1));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
