/* SPDX-License-Identifier: MIT */
/*
 * ptx_agg.h - a program's reductions combined across the lanes that run it
 * at once (internal to src/ptx).
 *
 * In the lanes' form of a mem probe region (ptx_inject_opts.mem_simt) up
 * to 16 lanes run one copy of the program, each for its own access, and
 * where the accesses fall in one region of memtrace's map (reduce's loop:
 * all 16) every lane reduces into the same words.  Each `red.global` of
 * the program is rewritten to be issued once per address and value: the
 * lanes running it (activemask: a lane that took another branch, or is
 * not running the program, takes no part) are grouped by their address
 * register (match.any.sync.b64; the offset is the instruction's own, so
 * the same for all), each group by its value (match.any.sync), and the
 * lowest lane of each such group issues the combined reduction: for add
 * the value times the group's lanes; for or, and, min, max the value
 * itself (they are idempotent); for xor the value where the lanes are
 * odd in number, nothing where even.  Exact for every op, with no sum of
 * different values to compute (64-bit adds have no warp reduction):
 * lanes with distinct values issue their own reductions, as before.
 * Left as they are: guarded reductions, generic and shared ones (a
 * generic address may be a lane's own local memory), other types (a
 * float add's rounding would change) and anything not in the emitter's
 * one-line form `red.global.OP.TYPE [%REG(+OFF)], %REG;`.
 */
#ifndef GPUEXT_PTX_AGG_H
#define GPUEXT_PTX_AGG_H

#include <stddef.h>

#include "ptx_buf.h"

/*
 * code with each reduction of the form above rewritten into out (the
 * rest copied as it is), with registers named %PFX_r* in a scope of
 * their own (pfx: a prefix that occurs nowhere else); *n (may be NULL)
 * set to the reductions rewritten.  out->failed on allocation failure.
 */
void ptx_agg_reductions(struct ptx_buf *out, const char *code, const char *pfx, size_t *n);

#endif /* GPUEXT_PTX_AGG_H */
