/* source.c - the loops over a list of sources (source.h).
 * SPDX-License-Identifier: MIT
 */
#include "jit/source.h"

#include <stdarg.h>

time_t js_boot_time(void)
{
	FILE *f = fopen("/proc/stat", "re");
	char line[256];
	long long t = 0;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "btime %lld", &t) == 1)
			break;
	if (f)
		fclose(f);
	return (time_t)t;
}

void js_source_warn(const js_source_target *t, const char *fmt, ...)
{
	char msg[9000];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	t->warn(t->warn_arg, msg);
}

js_source *js_sources_find(js_source *list, size_t n, const js_source_ops *ops)
{
	for (size_t i = 0; i < n; i++)
		if (list[i].ops == ops)
			return &list[i];
	return NULL;
}

uint64_t js_sources_changes(const js_source *list, size_t n)
{
	uint64_t sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += list[i].ops->changes(&list[i]);
	return sum;
}

bool js_sources_report(js_source *list, size_t n, Dwfl *dwfl)
{
	bool lost = false;
	for (size_t i = 0; i < n; i++)
		if (list[i].ops->report && js_source_on(&list[i]))
			lost |= list[i].ops->report(&list[i], dwfl, list, i);
	return lost;
}

void js_sources_reap(js_source *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (list[i].ops->reap)
			list[i].ops->reap(&list[i]);
}

void js_sources_stats(const js_source *list, size_t n, FILE *f)
{
	for (size_t i = 0; i < n; i++)
		if (list[i].ops->stats && js_source_on(&list[i]))
			list[i].ops->stats(&list[i], f);
}

void js_sources_walk(js_source *list, size_t n, bool running, pid_t tid, const js_source_target *t)
{
	for (size_t i = 0; i < n; i++)
		if (list[i].ops->walk && js_source_on(&list[i]))
			list[i].ops->walk(&list[i], running, tid, t);
}

void js_sources_first_round(js_source *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		list[i].first_ns = list[i].ns;
}

void js_sources_free(js_source *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		list[i].ops->free(&list[i]);
}
