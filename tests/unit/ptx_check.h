/* SPDX-License-Identifier: MIT */
/*
 * ptx_check.h - checks the PTX unit tests share (cmocka: unit tests only;
 * ptx_corpus.c is also linked into the GPU programs, which have no cmocka).
 */
#ifndef GPUEXT_TEST_PTX_CHECK_H
#define GPUEXT_TEST_PTX_CHECK_H

/* The test passes only if ptxas -arch=arch accepts text (skipped without
 * ptxas); on a rejection text is kept in build/DUMP for a look and the
 * failure names what and ptxas's log. */
void ptx_corpus_ptxas_ok(const char *text, const char *arch, const char *what,
			 const char *dump);

/* Corpus file path read (*text, malloc'd) and parsed; the test fails with
 * the path and the parser's message if it cannot be. */
struct ptx_module *ptx_check_parse(const char *path, char **text);

#endif
