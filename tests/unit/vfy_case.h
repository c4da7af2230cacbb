/* SPDX-License-Identifier: MIT */
/*
 * vfy_case.h - one verifier corpus case (tests/verifier/README.md): parse
 * it, build the program with its maps, verify it.  Shared by
 * test_verifier_corpus.c and the kernel differential check
 * (tests/verifier/kernel_diff.c).
 */
#ifndef GPUEXT_TEST_VFY_CASE_H
#define GPUEXT_TEST_VFY_CASE_H

#include <stdint.h>

#include "bpf/err.h"
#include "bpf/map.h"

enum { VCASE_MAX_MAPS = 8 };

struct vcase {
	char *asm_text, *prog_type, *maps, *opts, *error;
	uint32_t mem_size;
};

/* Split text into its "-- name" sections (text is modified).  0 or -1. */
int vcase_parse(char *text, struct vcase *c);
void vcase_free(struct vcase *c);
/* Map definitions of a "-- maps" section (spec is modified). */
int vcase_map_defs(char *spec, struct map_def *defs, size_t *n, char *why, size_t whylen);
/*
 * Verify the case at path: *verdict is verifier_check's result, e the
 * message, expect the "-- error" line.  Returns -1 if the case itself is
 * broken (message in e).
 */
int vcase_run(const char *path, int *verdict, struct err *e, char *expect, size_t elen);

#endif
