/* SPDX-License-Identifier: MIT */
/*
 * common.h - what the programs in the style of other projects include: the kernel's types as
 * libbpf programs see them (vmlinux.h would give the same), libbpf's helper
 * and tracing headers.
 */
#ifndef GPUEXT_TEST_VFY_PROGS_COMMON_H
#define GPUEXT_TEST_VFY_PROGS_COMMON_H

#define __TARGET_ARCH_x86
#include <linux/types.h>
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s32 s32;
typedef __s64 s64;
typedef int pid_t;
typedef unsigned long size_t;
typedef _Bool bool;
#define true 1
#define false 0

#endif
