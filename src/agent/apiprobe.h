/* SPDX-License-Identifier: MIT */
/*
 * apiprobe.h - in-process API probes: uprobe/FUNC and uretprobe/FUNC
 * programs run around any function the agent hands out a pointer for.
 *
 * A probed function gets a site (one per name and real function) and a trampoline
 * (agent_tramp.S) that needs no knowledge of the function's signature: it
 * saves the argument registers into a struct pt_regs laid out as the
 * kernel's x86-64 one (so libbpf's PT_REGS_PARM1..6 / BPF_KPROBE work
 * unchanged), runs the entry programs, and jumps to the real function with
 * every register as the caller left it (stack arguments and varargs
 * included).  When the site has return programs, the return address is
 * swapped for a return stub, the original kept on a per-thread shadow
 * stack; the stub runs the return programs with ax = the return value and
 * returns to the caller.
 *
 * Programs run JIT-compiled.  While a thread runs a probe program, calls it
 * makes to probed functions go straight to the real function (the
 * recursion guard) and are counted in apiprobe_stats.
 *
 * Attaching is done before the wrappers are handed out (the agent does it
 * at session start); it is serialised by a lock, and a program attached
 * later is seen by calls that start after it (the counts are published
 * with release order).  Detaching is apiprobe_reset(), for tests only.
 * Limits: APIPROBE_MAX_SITES names and as many (name, real) trampolines
 * (preassembled; a wrap past that returns real, counted),
 * APIPROBE_MAX_PROGS programs per site and direction, APIPROBE_MAX_DEPTH
 * nested return-probed calls per thread (deeper calls run without return
 * probes).  A function left by longjmp or an exception with a return probe
 * pending leaves a stale shadow-stack entry: the driver API is C and never
 * does so.
 */
#ifndef GPUEXT_AGENT_APIPROBE_H
#define GPUEXT_AGENT_APIPROBE_H

#include <stdint.h>

#include "bpf/err.h"

struct prog;
struct object;

enum {
	APIPROBE_MAX_SITES = 1024,
	APIPROBE_MAX_PROGS = 8,
	APIPROBE_MAX_DEPTH = 64,
	APIPROBE_NAME_MAX = 96,
};

/* The kernel's x86-64 struct pt_regs (arch/x86/include/asm/ptrace.h). */
struct apiprobe_regs {
	uint64_t r15, r14, r13, r12, bp, bx, r11, r10, r9, r8;
	uint64_t ax, cx, dx, si, di, orig_ax, ip, cs, flags, sp, ss;
};

/*
 * Attach p (verified; PROG_TYPE_UPROBE runs at entry, PROG_TYPE_URETPROBE at
 * return) to function func.  p is JIT-compiled with the default helpers
 * unless already compiled.  p must outlive the probes and not be compiled
 * again while attached (the probes call its code directly).
 */
int apiprobe_attach(const char *func, struct prog *p, struct err *e);

/*
 * Attach every uprobe/FUNC and uretprobe/FUNC program of obj (programs
 * verified); uprobe/PATH:FUNC ones are the kernel backend's and skipped.
 * Returns the number attached, or a negative errno.
 */
int apiprobe_attach_object(struct object *obj, struct err *e);

/*
 * What the application calls instead of real for function func: a
 * trampoline calling on real when func has probes, else real.  The same
 * (func, real) always gets the same trampoline; another real (a different
 * version of the function, a wrapper) gets its own.
 */
void *apiprobe_wrap(const char *func, void *real);

/* Has func any probe attached? */
int apiprobe_has(const char *func);

struct apiprobe_stats {
	uint64_t recursion_skips; /* probed calls made from inside a probe */
	uint64_t depth_skips;     /* return probes skipped: shadow stack full */
	uint64_t prog_errors;     /* probed calls in which a program reported an error */
	uint64_t site_skips;      /* wraps refused: all trampolines in use */
};
void apiprobe_stats_get(struct apiprobe_stats *out);

/* Forget every site and program (not thread-safe: no call may be in flight). */
void apiprobe_reset(void);

#endif /* GPUEXT_AGENT_APIPROBE_H */
