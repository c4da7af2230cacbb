/* SPDX-License-Identifier: MIT */
/*
 * ptx_corpus.h - the PTX corpus and probe code, for the parser and
 * injector tests.
 */
#ifndef GPUEXT_TEST_PTX_CORPUS_H
#define GPUEXT_TEST_PTX_CORPUS_H

#include <stddef.h>

#define PTX_CORPUS_DIR "tests/ptx_corpus"
#define PTX_CORPUS_PTXAS "/usr/local/cuda/bin/ptxas"

/* Paths of every corpus file: tests/ptx_corpus/ *.ptx and the examples'
 * reference PTX in build/examples/ref/ when built, and the .ptx files of
 * the folder $GPUEXT_PTX_CORPUS_EXTRA (tests/gpu/collect_ptx.sh sets it).
 * Returns the count. */
size_t ptx_corpus_list(char ***paths);
void ptx_corpus_free_list(char **paths, size_t n);

/* ptxas -arch=arch on text: its exit status (-1: could not run), output
 * in *log (malloc'd). */
int ptx_corpus_ptxas(const char *text, size_t len, const char *arch, char **log);

/*
 * The extra code of an instrumented module for target ("sm_75"): the
 * device runtime and three programs translated from eBPF assembly, wrapped
 * as the probes gx_ent_probe, gx_ext_probe and gx_mem_probe in warp mode.
 * They add to the u64 words of value 0 of their map (enum ptx_corpus_word):
 * entry and exit add the lane count and 1 (threads and probe calls), mem
 * adds the lane count, lanes x access size and 1 (accesses, bytes, calls).
 * refs: the map's device addresses (NULL: 0, for ptxas only).
 */
struct ptx_map_ref;
enum ptx_corpus_word {
	PTX_CORPUS_ENTRY_LANES, PTX_CORPUS_ENTRY_CALLS, PTX_CORPUS_EXIT_LANES,
	PTX_CORPUS_EXIT_CALLS, PTX_CORPUS_MEM_LANES, PTX_CORPUS_MEM_BYTES, PTX_CORPUS_MEM_CALLS,
	PTX_CORPUS_WORDS
};
char *ptx_corpus_probes(const char *target, const struct ptx_map_ref *refs);
/* The same with the mem program also in its inline form: *mem_code (for
 * ptx_inject_opts.mem_code, malloc'd); gx_mem_probe is then the same block
 * called (ptx_emit_mem_probe). */
char *ptx_corpus_probes_mem(const char *target, const struct ptx_map_ref *refs,
			    char **mem_code);

/* Count, in kernel KERNEL of PTX text, the instructions an independent
 * line scan finds: global/generic ld/ldu/st/atom/red, and ret/exit. */
void ptx_corpus_count(const char *text, const char *kernel, size_t *mem, size_t *exits);

#endif
