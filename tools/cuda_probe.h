/* SPDX-License-Identifier: MIT */
/*
 * cuda_probe.h - what the host tools' programs share (BPF side only):
 * the facts of cuda_calls.h as constant-folding functions of the call id,
 * and the entry/return pairing per thread.
 *
 * Each probed function gets its own pair of programs, generated from
 * CUDA_CALLS, so the call id is a constant in each and the switches below
 * fold away.  The entry program keeps the arguments in `pending[tid]`; the
 * return program takes them back.  A thread is in at most one probed call
 * at a time (the driver does not call itself through the application's
 * pointers, and probes do not nest: apiprobe.h's recursion guard).
 */
#ifndef GPUEXT_TOOLS_CUDA_PROBE_H
#define GPUEXT_TOOLS_CUDA_PROBE_H

#define __TARGET_ARCH_x86
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/gpuext.h>

#include "cuda_calls.h"

#define CALL_CASE_CLASS(n, cls, detail, arg, blk) case CALL_##n: return cls;
#define CALL_CASE_DETAIL(n, cls, detail, arg, blk) case CALL_##n: return detail;
#define CALL_CASE_ARG(n, cls, detail, arg, blk) case CALL_##n: return arg;

static __always_inline __u32 call_class(__u32 c)
{
	switch (c) { CUDA_CALLS(CALL_CASE_CLASS) }
	return 0;
}

static __always_inline __u32 call_detail(__u32 c)
{
	switch (c) { CUDA_CALLS(CALL_CASE_DETAIL) }
	return 0;
}

static __always_inline __u32 call_arg(__u32 c)
{
	switch (c) { CUDA_CALLS(CALL_CASE_ARG) }
	return 0;
}

static __always_inline __u32 current_tid(void)
{
	return (__u32)bpf_get_current_pid_tgid();
}

/* The return address of a probed call: at entry, sp points at it. */
static __always_inline __u64 call_site(struct pt_regs *ctx)
{
	__u64 ra = 0;

	bpf_probe_read_user(&ra, sizeof(ra), (void *)PT_REGS_SP(ctx));
	return ra;
}

/* log2 bucket as hist.h counts them: 0 for 0, i for [2^(i-1), 2^i). */
static __always_inline __u32 log2_bucket(__u64 v)
{
	__u32 b = 0;

	if (v >> 32) { v >>= 32; b += 32; }
	if (v >> 16) { v >>= 16; b += 16; }
	if (v >> 8) { v >>= 8; b += 8; }
	if (v >> 4) { v >>= 4; b += 4; }
	if (v >> 2) { v >>= 2; b += 2; }
	if (v >> 1) { v >>= 1; b += 1; }
	return v ? b + 1 : 0;
}

#endif
