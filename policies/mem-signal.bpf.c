/* SPDX-License-Identifier: MIT */
/*
 * mem-signal: the device access signal of the memory-policy runtime (not a
 * policy: `gpuext run --mem-budget` loads it into the session when no other
 * object is given, and the agent reads its maps; mem_signal.h has the
 * protocol).  At every global access, once per warp (the running lane's
 * address stands for the warp's), the page's epoch in the tracked window is
 * set to the current one.  A load per access; a store the first time a
 * page is touched in an epoch; nothing for addresses outside the window.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpuext.h>

#include "mem_signal.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ms_ctl);
} ms_ctl SEC(".maps");

/* Value v holds the epochs of window pages 4v .. 4v + 3. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MS_VALUES);
	__type(key, __u32);
	__type(value, __u64);
} ms_page SEC(".maps");

SEC("gpu/mem/*")
int ms_access(struct gpuext_mem_ctx *ctx)
{
	__u32 zero = 0;
	struct ms_ctl *c = bpf_map_lookup_elem(&ms_ctl, &zero);
	if (!c)
		return 0;
	__u64 block = (ctx->addr >> MS_BLOCK_SHIFT) - c->base;
	if (block >= c->blocks || block >= MS_MAX_BLOCKS)
		return 0;
	__u32 page = (__u32)block * MS_PAGES + (__u32)(ctx->addr >> MS_PAGE_SHIFT) % MS_PAGES;
	__u32 key = page / MS_PAGES_PER_VALUE;
	__u16 *v = bpf_map_lookup_elem(&ms_page, &key);
	if (!v)
		return 0;
	__u16 ep = (__u16)c->epoch;
	v += page % MS_PAGES_PER_VALUE;
	if (*v != ep)
		*v = ep;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
