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

/* The entry and return programs of driver call `name`: enter(ctx, CALL_name)
 * at entry, leave(ctx, CALL_name) at return. */
#define CUDA_PROBE_PAIR(name, enter, leave)                                            \
	SEC("uprobe/" #name) int name##_enter(struct pt_regs *ctx)                     \
	{                                                                              \
		return enter(ctx, CALL_##name);                                        \
	}                                                                              \
	SEC("uretprobe/" #name) int name##_return(struct pt_regs *ctx)                 \
	{                                                                              \
		return leave(ctx, CALL_##name);                                        \
	}

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

/*
 * log2 bucket as hist.h counts them: 0 for 0, i for [2^(i-1), 2^i).
 * Branch-free (a comparison is a branch in BPF, and six of them multiply
 * the verifier's paths through the rest of the program by 64): the top bit
 * of LIMIT - v is set when v > LIMIT (v < 2^63: ns and byte counts are).
 */
#define LOG2_STEP(v, b, bits)                                                          \
	do {                                                                           \
		__u64 t_ = (((1ull << (bits)) - 1 - (v)) >> 63) * (bits);              \
		(v) >>= t_;                                                            \
		(b) += t_;                                                             \
	} while (0)

static __always_inline __u32 log2_bucket(__u64 v)
{
	__u64 b = 0;

	LOG2_STEP(v, b, 32);
	LOG2_STEP(v, b, 16);
	LOG2_STEP(v, b, 8);
	LOG2_STEP(v, b, 4);
	LOG2_STEP(v, b, 2);
	LOG2_STEP(v, b, 1);
	return (__u32)(b + v); /* v is now 1 if it was not 0 */
}

#endif
