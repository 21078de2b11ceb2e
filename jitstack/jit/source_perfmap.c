/* source_perfmap.c - the perf map as a source (source.h): the row over
 * perfmap.h.  It names code; it gives libdwfl no modules.
 * SPDX-License-Identifier: MIT
 */
#include "jit/perfmap.h"
#include "jit/source.h"

#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

/* Follow the perf map at path, accepting files of owner besides ours and
 * root's (-1: any owner, the user named the file). */
static void use_perfmap(js_source *src, const char *path, long owner)
{
	js_perfmap *pm = src->r;
	js_perfmap_init(pm, path);
	pm->owner = owner;
	*src->on = true;
}

/* A core's perf map is /tmp/perf-<pid>.map (the pid from the core's notes)
 * when it can be the crashed process's own: written since this machine
 * booted, as the core was, and not after the core (a map written later
 * belongs to a new process that got the pid). */
static void perfmap_open(js_source *src, const js_source_target *t)
{
	if (src->path) {
		use_perfmap(src, src->path, -1);
		return;
	}
	if (!t->core) {
		char path[4200], proc[64];
		js_perfmap_path_live(t->pid, path, sizeof path);
		struct stat st;
		snprintf(proc, sizeof proc, "/proc/%d", (int)t->pid);
		use_perfmap(src, path, stat(proc, &st) ? (long)geteuid() : (long)st.st_uid);
		return;
	}
	char path[64];
	snprintf(path, sizeof path, "/tmp/perf-%d.map", (int)t->pid);
	struct stat m, c;
	if (lstat(path, &m) || fstat(t->core_fd, &c))
		return;
	time_t boot = js_boot_time();
	enum { SLACK_S = 2 }; /* file times of two writes moments apart */
	if (c.st_mtime < boot || m.st_mtime < boot || m.st_mtime > c.st_mtime + SLACK_S) {
		js_source_warn(t, "%s is not used: it was written %s (--perf-map %s reads it)", path,
			       m.st_mtime > c.st_mtime + SLACK_S
				       ? "after the core, by another process with that pid"
				       : "before this machine booted, or the core was",
			       path);
		return;
	}
	use_perfmap(src, path, (long)c.st_uid);
}

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
	.open = perfmap_open,
	.describe = perfmap_describe,
	.changes = perfmap_changes,
	.refresh = perfmap_refresh,
	.stats = perfmap_stats,
	.free = perfmap_free,
};
