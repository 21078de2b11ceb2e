/* source_perfmap.c - the perf map as a source (source.h): the row over
 * perfmap.h.  It names code; it gives libdwfl no modules.
 * SPDX-License-Identifier: MIT
 */
#include "jit/perfmap.h"
#include "jit/source.h"

static uint64_t perfmap_changes(const js_source *src)
{
	const js_perfmap *pm = src->r;
	return pm->changes;
}

static int perfmap_refresh(js_source *src, js_source_report *report, js_err *why)
{
	*report = JS_SOURCE_REPORT_NONE; /* it gives no modules */
	return js_perfmap_refresh(src->r, why);
}

static void perfmap_stats(const js_source *src, FILE *f)
{
	const js_perfmap *pm = src->r;
	fprintf(f,
		"jitstack: stats: perf map: first read %.3f ms, %llu bytes, %lu lines, %lu re-reads from the "
		"start\n",
		src->first_ns / 1e6, (unsigned long long)pm->bytes, pm->lines, pm->rereads);
}

static void perfmap_free(js_source *src)
{
	js_perfmap_free(src->r);
}

const js_source_ops js_source_perfmap = {
	.name = "perf map",
	.changes = perfmap_changes,
	.refresh = perfmap_refresh,
	.stats = perfmap_stats,
	.free = perfmap_free,
};
