/* source_gdb.c - the GDB JIT interface's images as a source (source.h):
 * the row over jitmodules.h.
 * SPDX-License-Identifier: MIT
 */
#include "jit/jitmodules.h"
#include "jit/source.h"

static uint64_t gdb_changes(const js_source *src)
{
	const js_jit *j = src->r;
	return j->changes;
}

static bool gdb_report(js_source *src, Dwfl *dwfl, const js_source *list, size_t n)
{
	(void)list, (void)n;
	return js_jit_report(src->r, dwfl);
}

static void gdb_reap(js_source *src)
{
	js_jit_reap(src->r);
}

static void gdb_free(js_source *src)
{
	js_jit_free(src->r);
}

const js_source_ops js_source_gdb = {
	.name = "gdb",
	.changes = gdb_changes,
	.report = gdb_report,
	.reap = gdb_reap,
	.free = gdb_free,
};
