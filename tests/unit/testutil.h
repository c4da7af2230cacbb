/* SPDX-License-Identifier: MIT */
/*
 * testutil.h - what every test binary shares: cmocka, and paths.
 *
 * Tests run from the repository root (tests/run.sh does so), which is where
 * the paths below are relative to.
 */
#ifndef GPUEXT_TESTUTIL_H
#define GPUEXT_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

/* Folder of the shared conformance cases. */
#define TEST_CONFORMANCE_DIR "../shared/conformance/tests"
/* Folder of the compiled eBPF programs (make bpf). */
#define TEST_BPF_DIR "build/bpf"

/* Read a whole file (NUL-terminated); NULL if it cannot be read. */
char *test_read_file(const char *path, size_t *len);

/* Path of the build's gpuext CLI (build/gpuext or build/san/gpuext). */
const char *test_cli_path(void);

/* Run a shell command, capture stdout+stderr (malloc'd) and the exit status. */
char *test_run_cmd(const char *cmd, int *status);

#endif
