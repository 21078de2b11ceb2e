/* SPDX-License-Identifier: MIT */
/* maps.c - a line of /proc/PID/maps (maps.h). */
#include "base/maps.h"

#include <string.h>

/* Hexadecimal digits at *at (at most 16), *at moved past them.  false
 * when there are none or too many. */
static bool hex(const char *line, size_t n, size_t *at, uint64_t *v)
{
	uint64_t x = 0;
	size_t i = *at;
	for (; i < n && i - *at <= 16; i++) {
		char c = line[i];
		unsigned d = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
			     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
			     : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
						    : 16;
		if (d == 16)
			break;
		x = x << 4 | d;
	}
	if (i == *at || i - *at > 16)
		return false;
	*at = i;
	*v = x;
	return true;
}

/* A field of anything but spaces at *at, *at moved past it and the
 * spaces after it.  false when there is none. */
static bool field(const char *line, size_t n, size_t *at)
{
	size_t i = *at;
	while (i < n && line[i] != ' ')
		i++;
	if (i == *at)
		return false;
	while (i < n && line[i] == ' ')
		i++;
	*at = i;
	return true;
}

bool js_maps_parse(const char *line, size_t n, js_maps_line *m)
{
	size_t at = 0;
	if (!hex(line, n, &at, &m->lo) || at >= n || line[at++] != '-' || !hex(line, n, &at, &m->hi))
		return false;
	m->range_len = at;
	if (at + 6 > n || line[at] != ' ' || line[at + 5] != ' ')
		return false;
	memcpy(m->perms, line + at + 1, 4);
	m->perms[4] = 0;
	at += 6;
	if (!hex(line, n, &at, &m->off) || at >= n || line[at++] != ' ')
		return false;
	if (!field(line, n, &at) || !field(line, n, &at)) /* device, inode */
		return false;
	m->path = line + at;
	m->path_len = n - at;
	return true;
}
