/* source_jitdump.c - the jitdump as a source (source.h): the row over
 * jitdump.h.  Its loads with CFI become modules, where no GDB image
 * reported before them covers their code.
 * SPDX-License-Identifier: MIT
 */
#include "jit/jitdump.h"
#include "jit/source.h"

static uint64_t jitdump_changes(const js_source *src)
{
	const js_jitdump *jd = src->r;
	return jd->changes;
}

static int jitdump_refresh(js_source *src, js_source_report *report, js_err *why)
{
	js_jitdump *jd = src->r;
	unsigned long rereads = jd->rereads;
	int rc = js_jitdump_refresh(jd, why);
	if (jd->rereads != rereads) /* a new file: its old modules must go */
		*report = JS_SOURCE_REPORT_ALL;
	else if (jd->with_cfi != jd->reported_cfi || jd->reported_cfi)
		*report = JS_SOURCE_REPORT_ADDED;
	else
		*report = JS_SOURCE_REPORT_NONE;
	return rc;
}

static bool jitdump_report(js_source *src, Dwfl *dwfl, const js_source *list, size_t n)
{
	const js_jit *j = NULL;
	for (size_t i = 0; i < n && !j; i++)
		if (list[i].ops == &js_source_gdb)
			j = list[i].r;
	return js_jitdump_report(src->r, j, dwfl);
}

static void jitdump_reap(js_source *src)
{
	js_jitdump_reap(src->r);
}

static void jitdump_stats(const js_source *src, FILE *f)
{
	const js_jitdump *jd = src->r;
	fprintf(f,
		"jitstack: stats: jitdump: %.3f ms in all, %llu bytes read, %lu loads, %lu re-reads from the "
		"start\n",
		src->ns / 1e6, (unsigned long long)jd->bytes, jd->loads, jd->rereads);
}

static void jitdump_free(js_source *src)
{
	js_jitdump_free(src->r);
}

const js_source_ops js_source_jitdump = {
	.name = "jitdump",
	.changes = jitdump_changes,
	.refresh = jitdump_refresh,
	.report = jitdump_report,
	.reap = jitdump_reap,
	.stats = jitdump_stats,
	.free = jitdump_free,
};
