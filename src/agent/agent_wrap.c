/* SPDX-License-Identifier: MIT */
/*
 * agent_wrap.c - the wrappers of agent_wrap.h's list, generated: for each
 * row the static holding the real function, the wrapper exported under the
 * driver's symbol (AGENT_WRAP), and a row of the table that dlsym and
 * cuGetProcAddress hand the wrappers out from.  A wrapper calls the real
 * function whatever its hooks did, so CUDA results reach the application
 * unchanged.
 */
#include <string.h>

#include "agent.h"
#include "agent_impl.h"
#include "agent_wrap.h"

#define AGENT_WRAP_DEFINE(group, name, sym, params, args, before, after) \
	static CUresult(*real_##name) params;                            \
	AGENT_WRAP(agent_w_##name, sym, params)                          \
	CUresult agent_w_##name params                                   \
	{                                                                \
		AGENT_REAL(real_##name, sym);                            \
		before;                                                  \
		CUresult r = real_##name args;                           \
		if (r == CUDA_SUCCESS) {                                 \
			after;                                           \
		}                                                        \
		return r;                                                \
	}
AGENT_DRIVER_WRAPPERS(AGENT_WRAP_DEFINE)
#undef AGENT_WRAP_DEFINE

#define AGENT_WRAP_ROW(group, name, sym, ...) {sym, (void *)agent_w_##name, (void **)&real_##name},
#define AGENT_WRAP_ALIAS_ROW(group, sym, name) {sym, (void *)agent_w_##name, (void **)&real_##name},
static const struct agent_hooked agent_wrap_rows[] = {
	AGENT_DRIVER_WRAPPERS(AGENT_WRAP_ROW) AGENT_DRIVER_ALIASES(AGENT_WRAP_ALIAS_ROW)};
#undef AGENT_WRAP_ROW
#undef AGENT_WRAP_ALIAS_ROW

/* agent_wrap_rows[i]'s group, in the same order. */
#define AGENT_WRAP_GROUP(group, ...) AGENT_WRAP_##group,
static const unsigned char agent_wrap_groups[] = {
	AGENT_DRIVER_WRAPPERS(AGENT_WRAP_GROUP) AGENT_DRIVER_ALIASES(AGENT_WRAP_GROUP)};
#undef AGENT_WRAP_GROUP

_Static_assert(sizeof(agent_wrap_rows) / sizeof(agent_wrap_rows[0]) == sizeof(agent_wrap_groups),
	       "one group per row");

const struct agent_hooked *agent_wrap_find(enum agent_wrap_group g, const char *name)
{
	for (size_t i = 0; i < sizeof(agent_wrap_groups); i++)
		if (agent_wrap_groups[i] == g && !strcmp(name, agent_wrap_rows[i].name))
			return &agent_wrap_rows[i];
	return NULL;
}

void *agent_wrap_resolve(enum agent_wrap_group g, const char *name, void *real)
{
	const struct agent_hooked *h = agent_wrap_find(g, name);
	return h ? agent_hooked_take(h, real) : NULL;
}

static void *agent_wrap_resolve_plain(const char *name, void *real)
{
	return agent_wrap_resolve(AGENT_WRAP_PLAIN, name, real);
}

__attribute__((constructor(101))) static void agent_wrap_init(void)
{
	agent_hook_register(agent_wrap_resolve_plain);
}
