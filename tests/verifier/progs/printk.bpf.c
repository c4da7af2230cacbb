/* SPDX-License-Identifier: MIT */
/*
 * bpf_printk as libbpf-bootstrap's minimal and uprobe examples use it:
 * up to three arguments (bpf_trace_printk with the format in .rodata) and
 * more (bpf_trace_vprintk with the arguments in a stack array).
 */
#include "common.h"

int my_pid = 0;

SEC("uprobe/cuInit")
int BPF_KPROBE(handle_init, unsigned int flags)
{
	int pid = bpf_get_current_pid_tgid() >> 32;

	if (my_pid && pid != my_pid)
		return 0;
	bpf_printk("BPF triggered from PID %d.\n", pid);
	return 0;
}

SEC("uprobe/cuDeviceGet")
int BPF_KPROBE(uprobe_add, void *dev, int ordinal)
{
	bpf_printk("uprobe_add ENTRY: dev = %lx, ordinal = %d", (unsigned long)dev, ordinal);
	return 0;
}

SEC("uretprobe/cuDeviceGet")
int BPF_KRETPROBE(uretprobe_add, int ret)
{
	u64 id = bpf_get_current_pid_tgid();

	bpf_printk("uprobe_add EXIT: return = %d pid %d tid %d at %llu", ret, (int)(id >> 32),
		   (int)id, bpf_ktime_get_ns());
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
