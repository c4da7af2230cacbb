/* SPDX-License-Identifier: MIT */
/*
 * bench.h - the CPU benchmark harness (bench/cpu_bench.c) and its engines.
 *
 * An engine runs one program's bytecode on given memory.  Every engine gets
 * the same bytecode (from the program's .bpf.o), the same memory and the same
 * length, the way a raw gpuext program and uBPF's ubpf_jit_fn are called:
 * r1 = memory, r2 = its length.
 */
#ifndef GPUEXT_BENCH_H
#define GPUEXT_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "bpf/isa.h"

struct bench_engine {
	const char *name;   /* column name: "gpuext interp", "uBPF JIT", ... */
	const char *key;    /* JSON key: "gpuext_interp", "ubpf_jit", ... */
	/*
	 * Make insns[0..cnt) runnable; *state is what run() gets.  Returns 0, or
	 * -1 with a message in err.
	 */
	int (*prepare)(const char *name, const struct isa_insn *insns, size_t cnt,
		       void **state, char *err, size_t err_len);
	uint64_t (*run)(void *state, uint8_t *mem, uint64_t len);
	void (*release)(void *state);
	/*
	 * JIT engines: ns the compile step of prepare() took (translation to
	 * machine code and mapping it executable; not loading or decoding).
	 * NULL for engines that do not compile.
	 */
	double (*compile_ns)(const void *state);
};

/* The uBPF engines (bench_ubpf.c, built only with UBPF_DIR), or NULL. */
const struct bench_engine *bench_ubpf_interp(void);
const struct bench_engine *bench_ubpf_jit(void);
/* "uBPF <version or commit>" for the report. */
const char *bench_ubpf_version(void);

/* The gpuext engines (bench_gpuext.c). NULL where libgpuext lacks the backend. */
const struct bench_engine *bench_gpuext_interp(void);
const struct bench_engine *bench_gpuext_jit(void);

/*
 * The bytecode of the program in section `section` of the object at path,
 * through gpuext's object loader (bench_prog.c): a malloc'd array in *insns,
 * its length in *cnt.  Returns 0, or -1 with a message naming the file and
 * section.
 */
int bench_load_prog(const char *path, const char *section, struct isa_insn **insns,
		    size_t *cnt, char *err, size_t err_len);

#endif
