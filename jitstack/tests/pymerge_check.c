/* SPDX-License-Identifier: MIT */
/* pymerge_check.c - python/merge.c on stacks written out by hand: stdin
 * holds one case a line (# starts a comment),
 *   NATIVE | PYTHON | MERGED
 * NATIVE the native frames, innermost first: "E" an activation of the
 * eval loop, "J:a,b" a JIT frame whose guest frames are the Python
 * functions a then b, any other word a native function; PYTHON the
 * thread's chain of Python frames, innermost first, "name*" an entry
 * frame; MERGED the stack expected, native words as they are, each Python
 * frame inserted as "py:name", and a last word "!" when a warning is
 * expected.  A line "name: FUNC => QUAL" checks js_py_guest_name on a JIT
 * frame's name (QUAL "-": no Python function).  Prints each case that differs and "N cases, M wrong"; exits
 * 1 when M > 0. */
#include "python/merge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX = 64 };

static size_t words(char *s, char **w)
{
	size_t n = 0;
	for (char *save = NULL, *t = strtok_r(s, " \t\n", &save); t && n < MAX;
	     t = strtok_r(NULL, " \t\n", &save))
		w[n++] = t;
	return n;
}

int main(void)
{
	char line[4096];
	unsigned long cases = 0, wrong = 0;
	while (fgets(line, sizeof line, stdin)) {
		if (strncmp(line, "name: ", 6) == 0) {
			char *arrow = strstr(line, " => "), q[256];
			if (!arrow)
				continue;
			*arrow = '\0';
			arrow[strcspn(arrow + 4, "\n") + 4] = '\0';
			bool is = js_py_guest_name(line + 6, q, sizeof q);
			const char *want = arrow + 4, *got = is ? q : "-";
			cases++;
			if (strcmp(got, want) != 0) {
				wrong++;
				printf("case %lu: name of \"%s\": %s, wanted %s\n", cases, line + 6, got,
				       want);
			}
			continue;
		}
		char *bar1 = strchr(line, '|'), *bar2 = bar1 ? strchr(bar1 + 1, '|') : NULL;
		if (line[0] == '#' || !bar2)
			continue;
		*bar1 = *bar2 = '\0';
		char copy[4096 + 16];
		snprintf(copy, sizeof copy, "%s | %s | %s", line, bar1 + 1, bar2 + 1);
		char *nw[MAX], *pw[MAX], *mw[MAX];
		size_t nn = words(line, nw), np = words(bar1 + 1, pw), nm = words(bar2 + 1, mw);
		js_py_native nat[MAX] = { 0 };
		const char *guest[MAX][MAX];
		char gbuf[MAX][256];
		for (size_t i = 0; i < nn; i++) {
			nat[i].eval = strcmp(nw[i], "E") == 0;
			if (strncmp(nw[i], "J:", 2) == 0) {
				char *save = NULL, *g = gbuf[i];
				snprintf(g, sizeof gbuf[i], "%s", nw[i] + 2);
				for (char *t = strtok_r(g, ",", &save); t; t = strtok_r(NULL, ",", &save))
					guest[i][nat[i].n_guests++] = t;
				nat[i].guests = guest[i];
			}
		}
		js_py_frame py[MAX] = { 0 };
		for (size_t k = 0; k < np; k++) {
			size_t len = strlen(pw[k]);
			py[k].entry = pw[k][len - 1] == '*';
			if (py[k].entry)
				pw[k][len - 1] = '\0';
			py[k].qualname = pw[k];
		}
		js_py_insert ins[MAX];
		char warning[256];
		size_t n_ins = js_py_merge(nat, nn, py, np, ins, MAX, warning, sizeof warning);
		char got[4096] = "", want[4096] = "";
		size_t at = 0, k = 0;
		for (size_t i = 0; i <= nn; i++) {
			for (; k < n_ins && ins[k].before == i; k++)
				for (size_t f = ins[k].first; f < ins[k].first + ins[k].n; f++)
					at += (size_t)snprintf(got + at, sizeof got - at, " py:%s",
							       py[f].qualname);
			if (i < nn)
				at += (size_t)snprintf(got + at, sizeof got - at, " %s", nw[i]);
		}
		if (warning[0])
			snprintf(got + at, sizeof got - at, " !");
		at = 0;
		for (size_t i = 0; i < nm; i++)
			at += (size_t)snprintf(want + at, sizeof want - at, " %s", mw[i]);
		cases++;
		if (strcmp(got, want) != 0) {
			wrong++;
			printf("case %lu: %s\n  merged:%s\n  wanted:%s\n  warning: %s\n", cases, copy, got,
			       want, warning[0] ? warning : "(none)");
		}
	}
	printf("%lu cases, %lu wrong\n", cases, wrong);
	return wrong || !cases ? 1 : 0;
}
