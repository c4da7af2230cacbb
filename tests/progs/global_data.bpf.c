/* SPDX-License-Identifier: MIT */
/*
 * global_data: .rodata (const volatile, set before load), .data (initialised)
 * and .bss (zeroed) globals.  Each call: calls++, last = calls * scale +
 * bias, returns last.
 */
#include "progs.h"

const volatile __u32 scale = 3;    /* .rodata */
const volatile __u64 bias = 100;   /* .rodata */
__u64 calls = 5;                   /* .data */
__u64 last;                        /* .bss */
__u32 history[4];                  /* .bss */

SEC("gpu/entry/vecadd*")
int on_entry(void *ctx)
{
	calls++;
	last = calls * scale + bias;
	history[calls & 3] = (__u32)last;
	return last;
}

char LICENSE[] SEC("license") = "GPL";
