/* SPDX-License-Identifier: MIT */
/*
 * Loops as tracing programs write them: #pragma unroll over the traced
 * function's arguments, a bounded for loop with an early break over a map
 * value, a pointer chase through user memory bounded by a depth limit, and
 * nested loops over a small matrix.
 */
#include "common.h"

#define MAX_DEPTH 16
#define N 8

struct matrix {
	u32 m[N][N];
	u64 trace;
};

struct node {
	struct node *next;
	u64 value;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, u32);
	__type(value, struct matrix);
} mats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64[32]);
} samples SEC(".maps");

SEC("uprobe/cuLaunchKernel")
int BPF_KPROBE(sum_args, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	u64 args[6] = {a1, a2, a3, a4, a5, ctx->r9};
	u64 sum = 0;

#pragma unroll
	for (int i = 0; i < 6; i++)
		sum += args[i] & 0xffff;
	return sum & 0x7fffffff;
}

SEC("uprobe/cuMemsetD8_v2")
int BPF_KPROBE(first_zero, u64 dptr, u8 value, size_t n)
{
	u32 zero = 0;
	u64 *s = bpf_map_lookup_elem(&samples, &zero);
	int i, found = -1;

	if (!s)
		return 0;
	for (i = 0; i < 32; i++) {
		if (s[i] == value) {
			found = i;
			break;
		}
		s[i] += n;
	}
	return found;
}

SEC("uprobe/cuMemFree_v2")
int BPF_KPROBE(walk_list, struct node *head)
{
	struct node *cur = head;
	u64 total = 0;

	for (int depth = 0; depth < MAX_DEPTH && cur; depth++) {
		struct node n;

		if (bpf_probe_read_user(&n, sizeof(n), cur))
			break;
		total += n.value;
		cur = n.next;
	}
	return total & 0xffffffff;
}

SEC("uprobe/cuMemsetD32_v2")
int BPF_KPROBE(matrix_trace, u64 dptr, u32 value)
{
	u32 key = value & 3;
	struct matrix *mt = bpf_map_lookup_elem(&mats, &key);
	u64 trace = 0;

	if (!mt)
		return 0;
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++) {
			mt->m[i][j] += i == j;
			if (i == j)
				trace += mt->m[i][j];
		}
	mt->trace = trace;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
