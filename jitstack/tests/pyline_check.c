/* SPDX-License-Identifier: MIT */
/* pyline_check.c - python/linetable.c against CPython's own reading of
 * its location tables: stdin holds one code object a line,
 *   FIRSTLINENO HEX-CO_LINETABLE START:END:LINE ...
 * where each START:END:LINE is a range of co_lines() (byte offsets; LINE
 * "None" when the range has no line), and every code unit of every range
 * must get that line (0 for None) from js_py_line.  Prints "N code
 * objects, U units, M wrong" and exits 1 when M > 0.
 */
#include "python/linetable.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
	static char line[1 << 22];
	static uint8_t table[1 << 21];
	unsigned long codes = 0, units = 0, wrong = 0;
	while (fgets(line, sizeof line, stdin)) {
		char *save = NULL, *tok = strtok_r(line, " \n", &save);
		if (!tok)
			continue;
		int first = atoi(tok);
		char *hex = strtok_r(NULL, " \n", &save);
		size_t n = 0;
		for (; hex && hex[0] && hex[0] != '-' && hex[1] && n < sizeof table; hex += 2)
			table[n++] = (uint8_t)strtoul((char[]){ hex[0], hex[1], 0 }, NULL, 16);
		codes++;
		while ((tok = strtok_r(NULL, " \n", &save)) != NULL) {
			long start, end;
			char what[32];
			if (sscanf(tok, "%ld:%ld:%31s", &start, &end, what) != 3)
				return 2;
			int want = strcmp(what, "None") == 0 ? 0 : atoi(what);
			for (long u = start / 2; u < end / 2; u++, units++) {
				int got = js_py_line(table, n, first, u);
				if (got != want && wrong++ < 10)
					printf("code %lu unit %ld: line %d, CPython says %d\n", codes, u, got,
					       want);
			}
		}
	}
	printf("%lu code objects, %lu units, %lu wrong\n", codes, units, wrong);
	return wrong || !units ? 1 : 0;
}
