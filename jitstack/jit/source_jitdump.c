/* source_jitdump.c - the jitdump as a source (source.h): the row over
 * jitdump.h.  Its loads with CFI become modules, where no GDB image
 * reported before them covers their code.
 * SPDX-License-Identifier: MIT
 */
#include "jit/jitdump.h"
#include "jit/source.h"
#include "target/modules.h"

#include <inttypes.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

static void use_jitdump(js_source *src, const js_source_target *t, const char *path, long owner,
			uint64_t until_ns)
{
	js_jitdump *jd = src->r;
	js_jitdump_init(jd, path, t->machine);
	jd->owner = owner;
	jd->until_ns = until_ns;
	*src->on = true;
}

/* The core's time on CLOCK_MONOTONIC, the jitdump's clock, or 0 when the
 * core was written before this machine booted (the clock started again). */
static uint64_t core_mono_ns(const js_source_target *t)
{
	struct stat c;
	struct timespec rt, mt;
	if (fstat(t->core_fd, &c) || c.st_mtime < js_boot_time())
		return 0;
	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mt);
	int64_t core_rt = (int64_t)c.st_mtim.tv_sec * 1000000000 + c.st_mtim.tv_nsec;
	int64_t now_rt = (int64_t)rt.tv_sec * 1000000000 + rt.tv_nsec;
	int64_t now_mt = (int64_t)mt.tv_sec * 1000000000 + mt.tv_nsec;
	int64_t at = now_mt - (now_rt - core_rt) + 2000000000; /* 2 s: file times are coarse */
	return at > 0 ? (uint64_t)at : 0;
}

/* A live process's dump: the one given, else the file its marker mapping
 * names (none yet: looked for again later).  A core's: the one given, else
 * the file of its marker mapping in the core's NT_FILE note.  Either way,
 * only records written before the core count (a dump begun later is
 * another process's that got the pid), when the core was written since
 * this machine booted; a dump found in the notes of a core from before is
 * not used. */
static void jitdump_open(js_source *src, const js_source_target *t)
{
	uint64_t until = t->core ? core_mono_ns(t) : 0;
	if (src->path) {
		use_jitdump(src, t, src->path, -1, until);
		return;
	}
	char path[4200];
	if (!t->core) {
		char proc[64];
		if (!js_jitdump_path_live(t->pid, path, sizeof path))
			return;
		struct stat st;
		snprintf(proc, sizeof proc, "/proc/%d", (int)t->pid);
		use_jitdump(src, t, path, stat(proc, &st) ? (long)geteuid() : (long)st.st_uid, 0);
		return;
	}
	if (!js_core_find_file(t->core_elf, js_jitdump_name_ok, path, sizeof path))
		return;
	if (!until) {
		js_source_warn(
			t,
			"%s is not used: the core was written before this machine booted (--jitdump %s reads it)",
			path, path);
		return;
	}
	struct stat c;
	use_jitdump(src, t, path, fstat(t->core_fd, &c) ? (long)geteuid() : (long)c.st_uid, until);
}

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
	.open = jitdump_open,
	.describe = jitdump_describe,
	.changes = jitdump_changes,
	.refresh = jitdump_refresh,
	.report = jitdump_report,
	.reap = jitdump_reap,
	.stats = jitdump_stats,
	.free = jitdump_free,
};
