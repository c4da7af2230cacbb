/* SPDX-License-Identifier: MIT */
/*
 * String and buffer handling as tracing tools write it: read a user string
 * with bpf_probe_read_user_str, walk it with a bounded loop, hash it; zero
 * a key struct with __builtin_memset before filling it (hash keys must
 * have no holes); copy a record with __builtin_memcpy.
 */
#include "common.h"

#define NAME_LEN 64

struct name_key {
	u32 len;
	u32 pad;
	char name[32];
};

struct stat {
	u64 count;
	u64 hash;
	char last[16];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct name_key);
	__type(value, struct stat);
} names SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct stat);
} last_stat SEC(".maps");

/* cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name) */
SEC("uprobe/cuModuleGetFunction")
int BPF_KPROBE(func_name, void *hfunc, void *hmod, const char *name)
{
	char buf[NAME_LEN];
	struct name_key key;
	struct stat zero = {}, *st;
	u64 hash = 0xcbf29ce484222325ULL;
	long len;
	u32 i;

	len = bpf_probe_read_user_str(buf, sizeof(buf), name);
	if (len <= 0)
		return 0;
	for (i = 0; i < NAME_LEN && i < len; i++) {
		if (!buf[i])
			break;
		hash = (hash ^ (u8)buf[i]) * 0x100000001b3ULL;
	}

	__builtin_memset(&key, 0, sizeof(key));
	key.len = i;
	bpf_probe_read_kernel_str(key.name, sizeof(key.name), buf);
	st = bpf_map_lookup_elem(&names, &key);
	if (!st) {
		zero.hash = hash;
		bpf_map_update_elem(&names, &key, &zero, BPF_NOEXIST);
		st = bpf_map_lookup_elem(&names, &key);
		if (!st)
			return 0;
	}
	__sync_fetch_and_add(&st->count, 1);
	__builtin_memcpy(st->last, buf, sizeof(st->last));
	return 0;
}

/* Copy the last record out of a map value onto the stack and back. */
SEC("uretprobe/cuModuleGetFunction")
int BPF_KRETPROBE(func_name_ret, long ret)
{
	u32 zero = 0;
	struct stat copy, *st = bpf_map_lookup_elem(&last_stat, &zero);

	if (!st)
		return 0;
	__builtin_memcpy(&copy, st, sizeof(copy));
	copy.count++;
	copy.hash ^= (u64)ret;
	bpf_get_current_comm(copy.last, sizeof(copy.last));
	__builtin_memcpy(st, &copy, sizeof(copy));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
