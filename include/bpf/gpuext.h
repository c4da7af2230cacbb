/* SPDX-License-Identifier: MIT */
/* gpuext.h - everything gpuext adds for the user's .bpf.c programs. */
#ifndef GPUEXT_BPF_GPUEXT_H
#define GPUEXT_BPF_GPUEXT_H

#include "gpuext_helpers.h"
#include "gpuext_maps.h"

#endif
