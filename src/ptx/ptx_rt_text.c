/* SPDX-License-Identifier: MIT */
/*
 * ptx_rt_text.c - the device runtime's PTX, embedded into the library.
 *
 * The Makefile compiles ptx_rt_dev.cu with `nvcc -ptx` into
 * build/gen/ptx_rt_dev.ptx (module header removed, functions made
 * module-local) before this file is compiled; the assembler includes it
 * here, NUL-terminated.  Nothing needs nvcc at run time.
 *
 * A module gets only the runtime functions its programs call: the driver
 * JIT-compiles every function of a module, and the whole runtime (map
 * algorithms, ring buffers) is most of an instrumented module's JIT time.
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

enum { PTX_RT_MAX_FUNCS = 128 };

/* One top-level piece of the runtime text: a .func definition or the text
 * between two of them. */
struct ptx_rt_piece {
	const char *start, *end;
	const char *name; /* gx_rt_... of a .func; NULL for other text */
	size_t name_len;
	int used;
};

static size_t ptx_rt_ident_len(const char *s)
{
	size_t n = 0;
	while ((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= 'A' && s[n] <= 'Z') ||
	       (s[n] >= '0' && s[n] <= '9') || s[n] == '_' || s[n] == '$')
		n++;
	return n;
}

/* Split the runtime text; 0 when it has more pieces than fit. */
static size_t ptx_rt_split(struct ptx_rt_piece *pc, size_t max)
{
	const char *p = ptx_rt_text;
	size_t n = 0;

	while (*p) {
		if (n == max)
			return 0;
		struct ptx_rt_piece *x = &pc[n++];
		*x = (struct ptx_rt_piece){.start = p};
		if (!strncmp(p, ".func", 5)) {
			const char *eol = strchr(p, '\n'), *nm = strstr(p, "gx_rt_");
			if (nm && (!eol || nm < eol)) {
				x->name = nm;
				x->name_len = ptx_rt_ident_len(nm);
			}
			/* nvcc closes a function with "}" alone at column 0 */
			const char *close = strstr(p, "\n}\n");
			p = close ? close + 3 : p + strlen(p);
		} else {
			const char *next = strstr(p, "\n.func");
			p = next ? next + 1 : p + strlen(p);
		}
		x->end = p;
	}
	return n;
}

/* Mark the functions whose names occur in [s, end). */
static int ptx_rt_mark(struct ptx_rt_piece *pc, size_t n, const char *s, const char *end)
{
	int changed = 0;

	for (const char *q = s; (q = strstr(q, "gx_rt_")) && q < end; q += 6) {
		size_t len = ptx_rt_ident_len(q);
		for (size_t i = 0; i < n; i++)
			if (pc[i].name && !pc[i].used && pc[i].name_len == len &&
			    !memcmp(pc[i].name, q, len))
				pc[i].used = changed = 1;
	}
	return changed;
}

/* Split the runtime and mark the functions the texts use, with what those
 * call: the number of pieces, 0 when the text is not of the shape expected. */
static size_t ptx_rt_select(struct ptx_rt_piece *pc, const char *const *code, size_t ncode)
{
	size_t n = ptx_rt_split(pc, PTX_RT_MAX_FUNCS);

	if (!n)
		return 0;
	for (size_t k = 0; k < ncode; k++)
		if (code[k])
			ptx_rt_mark(pc, n, code[k], code[k] + strlen(code[k]));
	for (int changed = 1; changed;) { /* callees of what is used, transitively */
		changed = 0;
		for (size_t i = 0; i < n; i++)
			if (pc[i].used && ptx_rt_mark(pc, n, pc[i].start, pc[i].end))
				changed = 1;
	}
	return n;
}

/* Text between functions that is more than comments and blank lines (a
 * module-scope declaration): always kept. */
static int ptx_rt_piece_declares(const struct ptx_rt_piece *x)
{
	if (x->name)
		return 0;
	for (const char *l = x->start; l < x->end;) {
		while (l < x->end && (*l == ' ' || *l == '\t'))
			l++;
		if (l < x->end && *l != '\n' && strncmp(l, "//", 2))
			return 1;
		const char *eol = memchr(l, '\n', (size_t)(x->end - l));
		l = eol ? eol + 1 : x->end;
	}
	return 0;
}

void ptx_emit_runtime_used(struct ptx_buf *b, const char *const *code, size_t ncode)
{
	struct ptx_rt_piece pc[PTX_RT_MAX_FUNCS];
	size_t n = ptx_rt_select(pc, code, ncode);

	if (!n) { /* not the shape expected: all of it is always right */
		ptx_emit_runtime(b);
		return;
	}
	ptx_buf_printf(b, "// gpuext device runtime (ptx_rt_dev.cu), the functions used\n");
	for (size_t i = 0; i < n; i++)
		if (pc[i].used || ptx_rt_piece_declares(&pc[i]))
			ptx_buf_append(b, pc[i].start, (size_t)(pc[i].end - pc[i].start));
	ptx_buf_printf(b, "\n");
}

/*
 * Functions of at most this many lines (the special-register readers, the
 * warp word, ring buffer submit) are compiled with the module rather than
 * linked: they cost the JIT nothing, and a call inside one module is
 * register-allocated with the caller, where a call into linked code saves
 * registers on the stack under the ABI.
 */
enum { PTX_RT_INLINE_LINES = 60 };

static size_t ptx_rt_piece_lines(const struct ptx_rt_piece *x)
{
	size_t n = 0;
	for (const char *l = x->start; (l = memchr(l, '\n', (size_t)(x->end - l))); l++)
		n++;
	return n;
}

int ptx_emit_runtime_decls(struct ptx_buf *b, const char *const *code, size_t ncode)
{
	struct ptx_rt_piece pc[PTX_RT_MAX_FUNCS];
	size_t n = ptx_rt_select(pc, code, ncode);

	if (!n)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (ptx_rt_piece_declares(&pc[i])) /* module data: not linkable this way */
			return -1;
	int declared = 0;
	ptx_buf_printf(b, "// gpuext device runtime (ptx_rt_dev.cu): small functions here, "
			  "the others linked in\n");
	for (size_t i = 0; i < n; i++) {
		if (!pc[i].used)
			continue;
		if (ptx_rt_piece_lines(&pc[i]) <= PTX_RT_INLINE_LINES) {
			ptx_buf_append(b, pc[i].start, (size_t)(pc[i].end - pc[i].start));
			continue;
		}
		declared++;
		/* the header, up to the body's "{" on a line of its own */
		const char *body = strstr(pc[i].start, "\n{");
		if (!body || body > pc[i].end)
			return -1;
		ptx_buf_printf(b, ".extern ");
		ptx_buf_append(b, pc[i].start, (size_t)(body - pc[i].start));
		ptx_buf_printf(b, ";\n");
	}
	return declared;
}

/* The runtime compiled at build time for several GPUs (nvcc -fatbin -rdc). */
__asm__(".section .rodata\n"
	".global ptx_rt_fatbin_start\n"
	".hidden ptx_rt_fatbin_start\n"
	".global ptx_rt_fatbin_end\n"
	".hidden ptx_rt_fatbin_end\n"
	".balign 8\n"
	"ptx_rt_fatbin_start:\n"
	".incbin \"build/gen/ptx_rt_dev.fatbin\"\n"
	"ptx_rt_fatbin_end:\n"
	".previous\n");

extern const unsigned char ptx_rt_fatbin_start[], ptx_rt_fatbin_end[];

const void *ptx_rt_fatbin(size_t *len)
{
	*len = (size_t)(ptx_rt_fatbin_end - ptx_rt_fatbin_start);
	return ptx_rt_fatbin_start;
}
