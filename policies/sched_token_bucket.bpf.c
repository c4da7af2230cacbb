/* SPDX-License-Identifier: MIT */
/*
 * sched_token_bucket: best-effort tenants launch against a token bucket of
 * their own (RATE launches per second, BURST at most); a launch without a
 * token is delayed until the next token is due (the agent caps the delay
 * at the session's hold limit).  Latency-critical tenants are not limited.
 * The buckets live in a map of the policy, shared by every tenant's agent
 * through the session; each tenant only writes its own slot.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpu_sched_ops.h>

#define RATE_PER_S 200
#define BURST 8
#define NS_PER_TOKEN (1000000000ull / RATE_PER_S)

struct bucket {
	__u64 tokens;  /* whole tokens available */
	__u64 last_ns; /* when tokens were last added */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, GPU_SCHED_MAX_TENANTS);
	__type(key, __u32);
	__type(value, struct bucket);
} buckets SEC(".maps");

SEC("struct_ops/gpu_task_init")
int tb_init(struct gpu_sched_task_ctx *ctx)
{
	__u32 k = ctx->tenant;
	struct bucket b = {.tokens = BURST, .last_ns = bpf_ktime_get_ns()};

	bpf_map_update_elem(&buckets, &k, &b, BPF_ANY);
	return 0;
}

SEC("struct_ops/gpu_launch_admit")
int tb_admit(struct gpu_sched_launch_ctx *ctx)
{
	__u32 k = ctx->tenant;
	struct bucket *b;
	__u64 add;

	if (ctx->klass != GPU_SCHED_BE)
		return GPU_SCHED_ADMIT;
	b = bpf_map_lookup_elem(&buckets, &k);
	if (!b)
		return GPU_SCHED_ADMIT;
	if (b->last_ns > ctx->now_ns)
		b->last_ns = ctx->now_ns; /* a clock of another process: never go back */
	add = (ctx->now_ns - b->last_ns) / NS_PER_TOKEN;
	if (add) {
		b->tokens = b->tokens + add > BURST ? BURST : b->tokens + add;
		b->last_ns += add * NS_PER_TOKEN;
	}
	if (b->tokens) {
		b->tokens--;
		return GPU_SCHED_ADMIT;
	}
	bpf_gpu_sched_delay(ctx, (b->last_ns + NS_PER_TOKEN - ctx->now_ns) / 1000 + 1);
	return GPU_SCHED_DELAY;
}

SEC(".struct_ops")
struct gpu_sched_ops token_bucket = {
	.gpu_task_init = (void *)tb_init,
	.gpu_launch_admit = (void *)tb_admit,
};
