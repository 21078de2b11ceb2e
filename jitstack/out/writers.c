/* SPDX-License-Identifier: MIT */
/* writers.c - the table of the formats a profile is written in (writers.h). */
#include "out/writers.h"

#include <string.h>

const js_writer js_writers[] = {
	{ "collapsed", ".folded", false, js_write_collapsed },
	{ "pprof", ".pb.gz", true, js_write_pprof },
	{ "svg", ".svg", false, js_write_svg },
};
const size_t js_n_writers = sizeof js_writers / sizeof js_writers[0];

const js_writer *js_writer_named(const char *name)
{
	for (size_t i = 0; name && i < js_n_writers; i++)
		if (!strcmp(js_writers[i].name, name))
			return &js_writers[i];
	return NULL;
}

void js_writer_names(char *buf, size_t len)
{
	size_t at = 0;
	if (len)
		buf[0] = 0;
	for (size_t i = 0; i < js_n_writers && at < len; i++) {
		const char *sep = !i ? "" : i + 1 == js_n_writers ? " or " : ", ";
		int k = snprintf(buf + at, len - at, "%s%s", sep, js_writers[i].name);
		if (k < 0)
			break;
		at += (size_t)k;
	}
}
