/* SPDX-License-Identifier: MIT */
/*
 * ptx_conf.h - every conformance case of a folder, for the PTX tests and the
 * GPU batch, which translate them all into one module (parsing is
 * conf_case_load's, src/bpf/conformance.h).
 */
#ifndef GPUEXT_TEST_PTX_CONF_H
#define GPUEXT_TEST_PTX_CONF_H

#include "bpf/conformance.h"

/* Every NAME.txt of dir, sorted by name; returns the count or -1. */
int ptx_conf_load_all(const char *dir, struct conf_case **out);
void ptx_conf_free_all(struct conf_case *cases, int n);

#endif
