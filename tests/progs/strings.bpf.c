/* SPDX-License-Identifier: MIT */
/*
 * strings: format strings in .rodata (bpf_printk, BPF_SNPRINTF) and a string
 * literal in .rodata.str1.1 read with bpf_probe_read_kernel_str.  Writes
 * "flags=<arg1> name=gpuext" into msg (.bss); returns bpf_snprintf's result
 * (length including the NUL).
 */
#include "progs.h"

char msg[64];
char name[16];

SEC("uprobe/libcuda.so.1:cuInit")
int on_init(struct pt_regs *ctx)
{
	const char *literal = "gpuext";
	long flags = PT_REGS_PARM1(ctx);

	bpf_probe_read_kernel_str(name, sizeof(name), literal);
	bpf_printk("cuInit flags=%ld", flags);
	return BPF_SNPRINTF(msg, sizeof(msg), "flags=%ld name=%s", flags, name);
}

char LICENSE[] SEC("license") = "GPL";
