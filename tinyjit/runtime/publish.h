/* SPDX-License-Identifier: MIT */
/* publish.h - hand compiled functions to native unwinders, debuggers and
 * profilers through libjitunwind (run time).
 */
#ifndef TJ_PUBLISH_H
#define TJ_PUBLISH_H

#include <stddef.h>

#include "jit.h"

typedef struct tj_publisher tj_publisher;

/* spec: NULL (the library's default, the in-memory channels whose consumer
 * is present; the JITUNWIND environment variable may override: JITUNWIND=perf
 * adds the perf map and the jitdump), "default", "all" (the perf files too;
 * each channel where it can open), "none", or a comma-separated list of
 * channel names (unwinder,libunwind,gdb,perfmap,jitdump), each of which must
 * then work.  *out is NULL for "none".  Returns 0, or -1 with a message. */
int tj_publish_open(const char *spec, tj_publisher **out, char *err, size_t errlen);

/* Publish every function of j as "tj:<name>" with its .tj line table and
 * its frame description (cfi: the shim region rule, or the stencils' own
 * FDEs), in one batch. */
int tj_publish_program(tj_publisher *pub, const tj_jit *j, const tj_program *p, enum tj_cfi_mode cfi,
		       char *err, size_t errlen);

/* Unpublish everything and close.  NULL is accepted. */
void tj_publish_close(tj_publisher *pub);

/* The channels in use, as names ("gdb,perfmap"), for diagnostics. */
void tj_publish_describe(const tj_publisher *pub, char *out, size_t n);

/* 0 when this build has publishing compiled out (TJ_NO_PUBLISH). */
extern const int tj_publish_available;

#endif
