/* SPDX-License-Identifier: MIT */
/* perfrecord.h - `jitstack record --mode perf`: the sampling loop on perf
 * events, and the unwinding of each sample off the target. */
#ifndef JS_PERFRECORD_H
#define JS_PERFRECORD_H

#include "record/perfevent.h"
#include "out/profile.h"
#include "record/record.h"

#include <signal.h>

struct js_targets;

/* Sample the targets (opened for perf events: targets.h) into prof until
 * r->secs passed, every process exited or a signal of set arrived.
 * Prints its --stats and adds the profile's comments.  Returns 0, or a
 * js_exit code with ts->first. */
int js_record_perf(struct js_targets *ts, const js_record_opts *r, js_profile *prof, const sigset_t *set);

#endif
