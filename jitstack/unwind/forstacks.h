/* SPDX-License-Identifier: MIT */
/* forstacks.h - the perf map and the jitdump read for a dump's stacks only.
 *
 * A dump prints a few stacks, while a JIT's perf map or jitdump may hold
 * millions of functions.  So a dump first unwinds its threads, then reads
 * each file once and keeps only the entries whose code holds a pc of those
 * stacks (perfmap.h, jitdump.h: js_*_read_for): its memory does not grow
 * with the files.
 * - The jitdump gives CFI, which the unwind needs: the stacks with a pc in
 *   code that has CFI are unwound again with it, and pcs new then have the
 *   dump read again (a round per frame found so, bounded).
 * - The perf map gives names alone: it is read once the stacks are final.
 *   A chain of guest functions ("a <- b", libjitunwind's pieces of one
 *   function) whose pieces before the pc's were not kept has the map read
 *   again for the addresses below it (name.h: js_chain_gap).
 */
#ifndef JS_FORSTACKS_H
#define JS_FORSTACKS_H

#include "unwind/session.h"
#include "unwind/stack.h"

#include <stdbool.h>
#include <stddef.h>

/* Read the perf map for the pcs of the n stacks (s->opt->for_stacks). */
void js_perfmap_for_stacks(js_session *s, const js_stack *st, size_t n);

/* Read the jitdump for the pcs of the n stacks that it was not read for
 * yet, and report the modules of its code with CFI.  true when some code
 * with CFI holds one of those pcs: the stacks js_stack_in_jitdump_cfi
 * names must then be unwound again. */
bool js_jitdump_for_stacks(js_session *s, const js_stack *st, size_t n);
/* Has st a pc in jitdump code reported with its CFI? */
bool js_stack_in_jitdump_cfi(js_session *s, const js_stack *st);

#endif
