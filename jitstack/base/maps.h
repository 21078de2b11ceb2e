/* SPDX-License-Identifier: MIT */
/* maps.h - one line of /proc/PID/maps, read without sscanf (whose
 * per-call cost, times a few hundred lines read twice, was a quarter of a
 * dump's instructions on a PHP process).
 */
#ifndef JS_MAPS_H
#define JS_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* "lo-hi perms offset major:minor inode [path]", as the kernel writes it
 * (show_map_vma): hexadecimal numbers, single spaces, the path after
 * padding. */
typedef struct js_maps_line {
	uint64_t lo, hi, off;
	char perms[5];    /* "r-xp" */
	size_t range_len; /* of "lo-hi" at the line's start */
	const char *path; /* in the line, "" when none */
	size_t path_len;
} js_maps_line;

/* Read line[0..n) (without its newline) into m.  false when it is not
 * such a line. */
bool js_maps_parse(const char *line, size_t n, js_maps_line *m);

#endif
