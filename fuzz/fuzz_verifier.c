/* SPDX-License-Identifier: MIT */
/*
 * fuzz_verifier - random and mutated programs into the verifier; every
 * program it accepts runs in the interpreter with bounds checking on.  A
 * finding is: a crash or sanitizer report in the verifier, an internal
 * error (-EFAULT) from it, or an accepted program that touches memory
 * outside what it was given (the interpreter reports -EFAULT) or does not
 * terminate (libFuzzer's timeout).
 *
 * Input: byte 0 picks the mode.
 *   even: the rest is bytecode, as is.
 *   odd:  bytes 1-8 seed a valid, safe program (fuzz/progen.c); every
 *         following 4 bytes mutate one instruction (offset, immediate,
 *         registers, opcode, or a swap), which makes most of them unsafe.
 *         (The generator's programs are memory-safe but not all verifiable:
 *         they do 32-bit arithmetic on pointers and leave dead code.)
 * The program runs as a raw program with PROGEN_MEM_SIZE bytes of memory,
 * map 0 an array (one 64-byte value), map 1 a hash, map 2 a ring buffer.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/helpers.h"
#include "bpf/interp.h"
#include "bpf/isa.h"
#include "bpf/map.h"
#include "bpf/prog.h"
#include "bpf/verifier.h"
#include "progen.h"

enum { FUZZ_MAX_SLOTS = 2048, NMAPS = 3 };

static const uint8_t opcodes[] = {
#define X(name, code) code,
	ISA_OPCODES(X)
#undef X
};

static struct map *maps[NMAPS];
static struct helper_table helpers;

/* The generator's helpers, made harmless: the verifier treats them as opaque. */
static uint64_t fuzz_helper_mix(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5)
{
	return (r1 * 31 + r2) ^ (r3 << 7) ^ (r4 >> 3) ^ r5;
}

static uint64_t fuzz_helper_quiet(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5)
{
	return 0;
}

static const struct helper_proto fuzz_mix_proto = {
	PROGEN_HELPER_MIX, "progen_mix", fuzz_helper_mix, RET_INTEGER,
	{ARG_ANYTHING, ARG_ANYTHING, ARG_ANYTHING, ARG_ANYTHING, ARG_ANYTHING}, HELPER_F_HOST};
static const struct helper_proto fuzz_memxor_proto = {
	PROGEN_HELPER_MEMXOR, "progen_memxor", fuzz_helper_quiet, RET_INTEGER,
	{ARG_ANYTHING, ARG_ANYTHING}, HELPER_F_HOST};

static const struct helper_proto *fuzz_proto(uint32_t id)
{
	if (id == PROGEN_HELPER_MIX)
		return &fuzz_mix_proto;
	if (id == PROGEN_HELPER_MEMXOR)
		return &fuzz_memxor_proto;
	return helper_proto_find(id);
}

static void fuzz_init(void)
{
	static const struct map_def defs[NMAPS] = {
		{MAP_TYPE_ARRAY, 4, 64, 1, 0, "arr"},
		{MAP_TYPE_HASH, 4, 8, 16, 0, "hash"},
		{MAP_TYPE_RINGBUF, 0, 0, 4096, 0, "rb"},
	};
	struct err e;
	for (int i = 0; i < NMAPS; i++)
		if (map_create(&defs[i], &maps[i], &e)) {
			fprintf(stderr, "fuzz_verifier: %s\n", e.msg);
			abort();
		}
	helpers = *helper_table_default();
	helpers.fn[PROGEN_HELPER_MIX] = fuzz_helper_mix;
	helpers.fn[PROGEN_HELPER_MEMXOR] = fuzz_helper_quiet;
	/* Accepted programs may print; keep the fuzzer's output readable. */
	helpers.fn[HELPER_TRACE_PRINTK] = fuzz_helper_quiet;
	helpers.fn[HELPER_TRACE_VPRINTK] = fuzz_helper_quiet;
}

static void mutate(struct isa_insn *in, size_t cnt, const uint8_t *m)
{
	struct isa_insn *x = &in[m[0] % cnt];
	switch (m[1] % 6) {
	case 0: x->off = (int16_t)(x->off + (int8_t)m[2]); break;
	case 1: x->imm ^= (int32_t)((uint32_t)m[2] << (m[3] % 24)); break;
	case 2: x->dst = m[2] % 11; break;
	case 3: x->src = m[2] % 11; break;
	case 4: x->code = opcodes[m[2] % sizeof(opcodes)]; break;
	default: {
		struct isa_insn t = *x, *y = &in[m[2] % cnt];
		*x = *y;
		*y = t;
	}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	struct isa_insn *insns = NULL;
	size_t cnt = 0;

	if (!ready) {
		fuzz_init();
		ready = 1;
	}
	if (size < 9)
		return 0;
	if (data[0] % 2 == 0) {
		cnt = (size - 1) / sizeof(struct isa_insn);
		if (!cnt || cnt > FUZZ_MAX_SLOTS)
			return 0;
		insns = malloc(cnt * sizeof(*insns));
		memcpy(insns, data + 1, cnt * sizeof(*insns));
	} else {
		uint64_t seed;
		memcpy(&seed, data + 1, 8);
		struct progen_cfg cfg = {.target_insns = 40 + (data[0] >> 1) % 160,
					 .max_funcs = 1 + (data[0] >> 5) % 4,
					 .map_value_size = 64};
		cnt = progen_generate(seed, &cfg, &insns);
		if (!cnt)
			return 0;
		for (size_t i = 9; i + 4 <= size; i += 4)
			mutate(insns, cnt, data + i);
	}

	struct prog p = {.name = "fuzz", .section = "", .type = PROG_TYPE_RAW, .insns = insns,
			 .insn_cnt = cnt, .maps = maps, .map_cnt = NMAPS};
	struct vfy_opts vo = {.mem_size = PROGEN_MEM_SIZE, .helper_proto = fuzz_proto,
			      .insn_limit = 50000};
	struct err e = {{0}};
	int r = verifier_check(&p, &vo, NULL, &e);
	if (r == -EFAULT) {
		fprintf(stderr, "fuzz_verifier: internal verifier error: %s\n", e.msg);
		abort();
	}
	if (r == 0) {
		static uint64_t mem[PROGEN_MEM_SIZE / 8];
		memset(mem, 0x5a, sizeof(mem));
		struct prog_run_opts ro = {.args = {(uint64_t)(uintptr_t)mem, PROGEN_MEM_SIZE},
					   .helpers = &helpers, .bounds_check = 1, .mem = mem,
					   .mem_len = PROGEN_MEM_SIZE};
		uint64_t r0;
		if (interp_run(&p, &ro, &r0, &e)) {
			fprintf(stderr, "fuzz_verifier: accepted program failed at run time: %s\n",
				e.msg);
			abort();
		}
	}
	free(insns);
	return 0;
}
