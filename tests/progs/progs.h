/* SPDX-License-Identifier: MIT */
/*
 * progs.h - what the test programs share: libbpf's helper declarations and
 * the x86-64 register layout uprobe programs receive (struct pt_regs).
 * The test activity records (cupti sections) are declared in each program.
 */
#ifndef GPUEXT_TEST_PROGS_H
#define GPUEXT_TEST_PROGS_H

#define __TARGET_ARCH_x86
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#endif
