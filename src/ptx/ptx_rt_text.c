/* SPDX-License-Identifier: MIT */
/*
 * ptx_rt_text.c - the device runtime's PTX, embedded into the library.
 *
 * The Makefile compiles ptx_rt_dev.cu with `nvcc -ptx` into
 * build/gen/ptx_rt_dev.ptx (module header removed, functions made
 * module-local) before this file is compiled; the assembler includes it
 * here, NUL-terminated.  Nothing needs nvcc at run time.
 */
#include "ptx_emit.h"

#include <string.h>

__asm__(".section .rodata\n"
	".global ptx_rt_text\n"
	".hidden ptx_rt_text\n"
	".type ptx_rt_text, @object\n"
	"ptx_rt_text:\n"
	".incbin \"build/gen/ptx_rt_dev.ptx\"\n"
	".byte 0\n"
	".previous\n");

extern const char ptx_rt_text[];

void ptx_emit_runtime(struct ptx_buf *b)
{
	ptx_buf_printf(b, "// gpuext device runtime (ptx_rt_dev.cu)\n");
	ptx_buf_append(b, ptx_rt_text, strlen(ptx_rt_text));
	ptx_buf_printf(b, "\n");
}
