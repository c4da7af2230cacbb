/* SPDX-License-Identifier: MIT */
/*
 * kernelsnoop.h - records of tools/kernelsnoop.bpf.c: the ring buffer
 * `events` carries each kernel's CUPTI record as it is
 * (struct gpuext_cupti_kernel, include/bpf/gpuext_cupti.h).
 */
#ifndef GPUEXT_TOOLS_KERNELSNOOP_H
#define GPUEXT_TOOLS_KERNELSNOOP_H

#include <bpf/gpuext_cupti.h>

#define KS_RINGBUF_BYTES (16 << 20)

#endif
