/* SPDX-License-Identifier: MIT */
/*
 * mem-signal: the device access signal of the memory-policy runtime (not a
 * policy: `gpuext run --mem-budget` loads it into the session when no other
 * object is given, and the agent reads its global data; mem_signal.h has
 * the protocol).  At every global access, once per warp (the running
 * lane's address stands for the warp's), the page's epoch in the tracked
 * window is set to the current one.  A load per access; a store the first
 * time a page is touched in an epoch; nothing for addresses outside the
 * window.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/gpuext.h>

#include "mem_signal.h"

/* .data (the agent writes it); volatile: read at every access, never
 * assumed. */
volatile struct ms_ctl ms_ctl = {.epoch = 1};
/* .bss: the epochs of the window's pages. */
volatile __u16 ms_page[MS_WINDOW_PAGES];

SEC("gpu/mem/*")
int ms_access(struct gpuext_mem_ctx *ctx)
{
	__u64 block = (ctx->addr >> MS_BLOCK_SHIFT) - ms_ctl.base;
	if (block >= ms_ctl.blocks || block >= MS_MAX_BLOCKS)
		return 0;
	__u32 page = (__u32)block * MS_PAGES + (__u32)(ctx->addr >> MS_PAGE_SHIFT) % MS_PAGES;
	__u16 ep = (__u16)ms_ctl.epoch;
	if (ms_page[page] != ep)
		ms_page[page] = ep;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
