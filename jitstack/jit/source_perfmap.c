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

static void perfmap_describe(const js_source *src, FILE *f, bool json, js_json_str_fn *str)
{
	const js_perfmap *pm = src->r;
	if (json && !pm->found) {
		fputs("null", f);
		return;
	}
	if (!pm->found)
		return;
	if (json) {
		fputs("{\"path\": ", f);
		str(f, pm->path);
		fprintf(f,
			", \"lines\": %lu, \"not_read\": %lu, \"ranges\": %zu, \"skipped\": %lu, \"tombstones\": "
			"%lu}",
			pm->lines, pm->unkept, js_perfmap_size(pm), pm->bad + pm->over_limit, pm->tombstones);
		return;
	}
	fprintf(f, "JIT: perf map %s, %lu lines", pm->path, pm->lines);
	if (pm->unkept)
		fprintf(f, " (%lu not read: no pc of the stacks in them)", pm->unkept);
	fprintf(f, ", %zu ranges\n", js_perfmap_size(pm));
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
	.json_key = "perf_map",
	.describe = perfmap_describe,
	.changes = perfmap_changes,
	.refresh = perfmap_refresh,
	.stats = perfmap_stats,
	.free = perfmap_free,
};
