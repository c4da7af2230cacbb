/* SPDX-License-Identifier: MIT */
/* tool_calls.c - names of the driver calls, copy directions and memory
 * kinds of tools/cuda_calls.h, for the host tools' output (tools.h). */
#include "tools.h"
#include "../../tools/cuda_calls.h"

const char *tool_call_name(uint32_t call)
{
#define CALL_NAME(name, cls, detail, arg, blk) [CALL_##name] = #name,
	static const char *const names[CALL_COUNT] = {CUDA_CALLS(CALL_NAME)};
#undef CALL_NAME
	return call && call < CALL_COUNT ? names[call] : "?";
}

uint32_t tool_call_class(uint32_t call)
{
#define CALL_CLASS(name, cls, detail, arg, blk) [CALL_##name] = cls,
	static const uint32_t classes[CALL_COUNT] = {CUDA_CALLS(CALL_CLASS)};
#undef CALL_CLASS
	return call < CALL_COUNT ? classes[call] : 0;
}

const char *tool_dir_name(uint32_t dir)
{
	static const char *const names[CD_COUNT] = {"HtoD", "DtoH", "DtoD", "HtoH",
						    "default", "peer"};
	return dir < CD_COUNT ? names[dir] : "?";
}

const char *tool_mem_name(uint32_t kind)
{
	static const char *const names[CM_COUNT] = {"device", "managed", "pool", "host"};
	return kind < CM_COUNT ? names[kind] : "?";
}
