/* SPDX-License-Identifier: MIT */
/* collapsed.c - a profile as flamegraph.pl's collapsed stacks (writers.h):
 * "thread;root;...;leaf count", one line per distinct stack of names (a
 * function inlined at a pc is a frame of its own, above the function it
 * was inlined into), counts summed; with addresses, of names and
 * addresses ("name [0xADDR]"); by_process: "comm-PID;thread;...", as
 * stackcollapse-perf.pl --pid writes the process. */
#include "formats/bytes.h"
#include "out/writers.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* A frame name as the format allows: ';' separates frames and the count
 * follows the last space, so ';' and line breaks are replaced. */
static void put_frame(byte_buf *b, const char *s)
{
	for (; *s; s++)
		buf_u8(b, *s == ';' ? ':' : (*s == '\n' || *s == '\r') ? ' ' : (uint8_t)*s);
}

typedef struct cline {
	char *stack; /* "[comm-PID;]thread;root;...;leaf" */
	uint64_t count;
} cline;

static int cmp_cline(const void *a, const void *b)
{
	return strcmp(((const cline *)a)->stack, ((const cline *)b)->stack);
}

/* One sample's line without its count; NULL when out of memory. */
static char *stack_line(const js_profile *p, const pr_sample *x, bool addresses)
{
	byte_buf b;
	buf_init_grow(&b, (size_t)1 << 30);
	if (p->by_process && x->proc < p->n_proc) {
		put_frame(&b, p->str[p->proc[x->proc].frame]);
		buf_u8(&b, ';');
	}
	put_frame(&b, p->str[x->thread]);
	for (size_t k = x->n; k-- > 0;) { /* root first */
		const pr_location *l = x->loc[k] ? &p->loc[x->loc[k] - 1] : NULL;
		/* the physical function, then what was inlined into it */
		for (uint32_t j = 0; j <= (l ? l->n_inl : 0); j++) {
			uint32_t fn = !l ? 0 : j ? p->inl[l->inl + l->n_inl - j].function : l->function;
			buf_u8(&b, ';');
			put_frame(&b, fn ? p->str[p->fn[fn - 1].name] : "[unknown]");
			if (addresses && l) {
				char a[24];
				snprintf(a, sizeof a, " [%#" PRIx64 "]", l->address);
				put_frame(&b, a);
			}
		}
	}
	buf_u8(&b, 0);
	if (!buf_ok(&b)) {
		buf_free(&b);
		return NULL;
	}
	return (char *)b.p;
}

/* Samples are kept per distinct pc stack; the format wants one line per
 * distinct stack of names, so lines that read the same are summed (sorted:
 * flamegraph.pl sorts anyway, and the output is the same for the same
 * profile). */
int js_write_collapsed(const js_profile *p, const js_write_opts *o, FILE *f, const char *name, js_err *err)
{
	bool addresses = o && o->addresses;
	cline *v = calloc(p->n_smp ? p->n_smp : 1, sizeof *v);
	int rc = v ? 0 : -1;
	size_t n = 0;
	for (size_t i = 0; !rc && i < p->n_smp; i++) {
		v[n] = (cline){ stack_line(p, &p->smp[i], addresses), p->smp[i].count };
		rc = v[n++].stack ? 0 : -1;
	}
	if (!rc)
		qsort(v, n, sizeof *v, cmp_cline);
	for (size_t i = 0; !rc && i < n;) {
		size_t j = i;
		uint64_t count = 0;
		for (; j < n && !strcmp(v[j].stack, v[i].stack); j++)
			count += v[j].count;
		fprintf(f, "%s %" PRIu64 "\n", v[i].stack, count);
		i = j;
	}
	for (size_t i = 0; i < n; i++)
		free(v[i].stack);
	free(v);
	return js_profile_flushed(f, rc, name, err);
}
