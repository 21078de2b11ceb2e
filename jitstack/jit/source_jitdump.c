/* source_jitdump.c - the jitdump as a source (source.h): the row over
 * jitdump.h.  Its loads with CFI become modules, where no GDB image
 * reported before them covers their code.
 * SPDX-License-Identifier: MIT
 */
#include "jit/jitdump.h"
#include "jit/source.h"

#include <inttypes.h>

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

/* Its code reported as modules (unwound with its CFI). */
static size_t jitdump_modules(const js_jitdump *jd)
{
	size_t n = 0;
	for (size_t i = 0; i < jd->n_code; i++)
		n += jd->code[i].img && jd->code[i].img->reported;
	return n;
}

static void jitdump_describe(const js_source *src, FILE *f, bool json, js_json_str_fn *str)
{
	const js_jitdump *jd = src->r;
	if (json && !jd->found) {
		fputs("null", f);
		return;
	}
	if (!jd->found)
		return;
	if (json) {
		fputs("{\"path\": ", f);
		str(f, jd->path);
		fprintf(f,
			", \"loads\": %lu, \"moves\": %lu, \"not_read\": %lu, \"with_cfi\": %lu, \"modules\": %zu, "
			"\"line_rows\": %" PRIu64 ", \"skipped\": %lu, \"late\": %lu, \"error\": ",
			jd->loads, jd->moves, jd->unkept, jd->with_cfi, jitdump_modules(jd), jd->line_rows,
			jd->bad + jd->over_limit, jd->late);
		str(f, jd->ended ? jd->why : NULL);
		fputc('}', f);
		return;
	}
	fprintf(f, "JIT: jitdump %s, %lu loads", jd->path, jd->loads + jd->moves);
	if (jd->unkept)
		fprintf(f, " (%lu not read: no pc of the stacks in their code)", jd->unkept);
	fprintf(f, ", %lu with CFI, %" PRIu64 " line rows\n", jd->with_cfi, jd->line_rows);
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
	.json_key = "jitdump",
	.describe = jitdump_describe,
	.changes = jitdump_changes,
	.refresh = jitdump_refresh,
	.report = jitdump_report,
	.reap = jitdump_reap,
	.stats = jitdump_stats,
	.free = jitdump_free,
};
