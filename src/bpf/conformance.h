/* SPDX-License-Identifier: MIT */
/*
 * conformance.h - the ISA conformance cases of shared/conformance
 * (format in its README.md) and a runner that checks any backend on them.
 */
#ifndef GPUEXT_BPF_CONFORMANCE_H
#define GPUEXT_BPF_CONFORMANCE_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "isa.h"
#include "prog.h"

/* One case file, parsed. */
struct conf_case {
	char *name;            /* base name of the file, without ".txt" */
	char *asm_text;        /* the "-- asm" section (NULL if absent) */
	size_t asm_line;       /* line of the file where the asm section starts */
	struct isa_insn *insns; /* the "-- program" section */
	size_t insn_cnt;
	uint8_t *mem;          /* the "-- mem" section (NULL if absent) */
	size_t mem_len;
	uint64_t result;       /* the "-- result" section */
};

/* Parse the text of a case; path names it in messages ("add.txt: line 9: ..."). */
int conf_case_parse(const char *path, const char *text, struct conf_case *c, struct err *e);
/* Read and parse a file. */
int conf_case_load(const char *path, struct conf_case *c, struct err *e);
void conf_case_free(struct conf_case *c);

/* Does the program use callx (not part of RFC 9669)? */
int conf_case_uses_callx(const struct conf_case *c);

/* A backend: runs a program and stores r0 (interp_run has this shape). */
typedef int (*conf_run_fn)(const struct prog *p, const struct prog_run_opts *opts,
			   uint64_t *r0, struct err *e);

struct conf_backend {
	const char *name;
	conf_run_fn run;
	int supports_callx; /* callx means: call the helper whose id is in the register */
};

enum conf_outcome { CONF_PASS, CONF_FAIL, CONF_SKIP };

/*
 * Run one case: decode it, run it with r1 = a copy of mem, r2 = its length,
 * bounds checking on, and helper 5 returning r1; compare r0.  On failure
 * or skip, why says what happened ("r0 = 0x2, expected 0x1").
 */
enum conf_outcome conf_case_run(const struct conf_case *c, const struct conf_backend *b,
				char *why, size_t why_len);

/* The helper table conformance cases run with (helper 5 returns r1). */
const struct helper_table *conf_helpers(void);

#endif /* GPUEXT_BPF_CONFORMANCE_H */
