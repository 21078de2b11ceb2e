/* perfrecord.h - `jitstack record --mode perf`: the sampling loop on perf
 * events, and the unwinding of each sample off the target. */
#ifndef JS_PERFRECORD_H
#define JS_PERFRECORD_H

#include "perfevent.h"
#include "profile.h"
#include "record.h"

#include <signal.h>

/* Sample s (opened with opt.no_ptrace) into prof until r->secs passed, the
 * process exited or a signal of set arrived; pe comes from js_pe_probe.
 * Prints its --stats and adds the profile's comments.  Returns 0, or a
 * js_exit code with s->err. */
int js_record_perf(js_session *s, const js_record_opts *r, js_profile *prof, js_pe *pe, const sigset_t *set,
		   uint64_t pm_first_ns);

/* Read the JIT lists without the extension (gdb's way: every thread
 * stopped), for a session that does not keep its threads seized: seize,
 * stop, read, detach.  Returns js_refresh_jit's code. */
int js_refresh_jit_stopped(js_session *s);

#endif
