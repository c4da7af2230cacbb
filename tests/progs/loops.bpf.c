/* SPDX-License-Identifier: MIT */
/*
 * loops: bounded loops over the input bytes.  Returns the 32-bit FNV-1a hash
 * of the first len bytes (len = first byte, at most 63), and stores in
 * .bss the insertion-sorted copy of up to 8 following bytes.
 */
#include "progs.h"

__u8 sorted[8];

SEC("kprobe/reduce_kernel")
int hash_bytes(__u8 *data)
{
	__u32 h = 2166136261u;
	__u32 len = data[0] & 63;

#pragma clang loop unroll(disable)
	for (__u32 i = 0; i < len; i++) {
		h ^= data[1 + i];
		h *= 16777619u;
	}
#pragma clang loop unroll(disable)
	for (int i = 0; i < 8; i++) {
		__u8 v = data[1 + i];
		int j = i - 1;
#pragma clang loop unroll(disable)
		for (; j >= 0 && j < 8 && sorted[j] > v; j--)
			sorted[j + 1 < 8 ? j + 1 : 7] = sorted[j];
		sorted[(j + 1) & 7] = v;
	}
	return h;
}

char LICENSE[] SEC("license") = "GPL";
