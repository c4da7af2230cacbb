/* SPDX-License-Identifier: MIT */
#include "ptx_refs.h"

#include "bpf/map.h"

void ptx_refs_of(const struct prog *p, struct ptx_map_ref *refs, size_t n)
{
	for (size_t i = 0; i < p->map_cnt && i < n; i++) {
		const struct map_def *d = map_get_def(p->maps[i]);
		uint32_t stride = (d->value_size + 7) & ~7u;
		refs[i] = (struct ptx_map_ref){0x7000000000ull + (i << 32),
					       0x7000000080ull + (i << 32), d->type,
					       d->max_entries, 0, 1, 0, 0};
		if (d->type == MAP_TYPE_ARRAY || d->type == MAP_TYPE_PERCPU_ARRAY) {
			refs[i].value_stride = stride;
			refs[i].value_size = d->value_size;
			refs[i].nr_sms = 132;
			refs[i].sm_stride = (uint64_t)stride * d->max_entries;
		}
	}
}
