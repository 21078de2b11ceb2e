/* SPDX-License-Identifier: MIT */
/* pprofdump.c - decode a pprof file jitstack wrote and check it: gzip
 * (zlib), then the Profile message (protobuf-c's generated unpack of
 * jitstack/out/profile.proto), then the references between its tables.
 * Prints "samples N", one "comment TEXT" line per comment and one
 * "leaf FUNCTION COUNT" line per function seen at the leaf; from the
 * samples' labels, one "process PID COMM COUNT" line per process (the
 * "pid" and "comm" labels) and one "pleaf PID FUNCTION COUNT" line per
 * function seen at the leaf of that process's samples; one "location ID
 * 0xADDRESS FUNCTION:LINE ..." line per location with all its lines
 * (innermost first: a function inlined into the next), and one "stack
 * COUNT ROOT;...;LEAF" line per sample, its locations' lines expanded so
 * (each inlined function a frame of its own).  A sample without
 * a pid label, or with a label whose strings are out of range, makes the
 * file invalid.  Exit 0 when the file is valid, 1 otherwise.
 */
#include "profile.pb-c.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static int bad(const char *why)
{
	printf("invalid: %s\n", why);
	return 1;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return bad("usage: pprofdump FILE");
	FILE *raw = fopen(argv[1], "rb");
	unsigned char magic[2] = { 0 };
	if (!raw || fread(magic, 1, 2, raw) != 2 || magic[0] != 0x1f || magic[1] != 0x8b)
		return bad("not gzip (no 1f 8b magic)");
	fclose(raw);
	gzFile g = gzopen(argv[1], "rb");
	size_t cap = 1 << 20, n = 0;
	unsigned char *buf = malloc(cap);
	int r;
	while (g && buf && (r = gzread(g, buf + n, (unsigned)(cap - n))) > 0) {
		n += (size_t)r;
		if (n == cap)
			buf = realloc(buf, cap *= 2);
	}
	if (!g || !buf)
		return bad("cannot read");
	gzclose(g);
	Perftools__Profiles__Profile *p = perftools__profiles__profile__unpack(NULL, n, buf);
	if (!p)
		return bad("not a Profile message");
	if (!p->n_string_table || p->string_table[0][0])
		return bad("string_table[0] is not \"\"");
#define STR_OK(i) ((i) >= 0 && (size_t)(i) < p->n_string_table)
	for (size_t i = 0; i < p->n_sample_type; i++)
		if (!STR_OK(p->sample_type[i]->type) || !STR_OK(p->sample_type[i]->unit))
			return bad("sample_type string out of range");
	long *leaf = calloc(p->n_function + 1, sizeof *leaf);
	long total = 0;
	/* per process: (pid, comm) and (pid, leaf function) counts */
	struct proc {
		long long pid;
		int64_t comm;
		long count;
	} *procs = calloc(p->n_sample + 1, sizeof *procs);
	struct pleaf {
		long long pid;
		uint64_t fn;
		long count;
	} *pleaf = calloc(p->n_sample + 1, sizeof *pleaf);
	size_t n_procs = 0, n_pleaf = 0;
	if (!leaf || !procs || !pleaf)
		return bad("out of memory");
	for (size_t i = 0; i < p->n_sample; i++) {
		Perftools__Profiles__Sample *s = p->sample[i];
		if (s->n_value != p->n_sample_type)
			return bad("a sample's value count differs from sample_type's");
		for (size_t k = 0; k < s->n_location_id; k++)
			if (!s->location_id[k] || s->location_id[k] > p->n_location ||
			    p->location[s->location_id[k] - 1]->id != s->location_id[k])
				return bad("a sample names a location that does not exist");
		total += s->value[0];
		long long pid = -1;
		int64_t comm = 0;
		for (size_t k = 0; k < s->n_label; k++) {
			Perftools__Profiles__Label *lb = s->label[k];
			if (!STR_OK(lb->key) || !STR_OK(lb->str) || !STR_OK(lb->num_unit))
				return bad("a label's strings are out of range");
			if (!strcmp(p->string_table[lb->key], "pid"))
				pid = (long long)lb->num;
			else if (!strcmp(p->string_table[lb->key], "comm"))
				comm = lb->str;
		}
		if (pid < 0)
			return bad("a sample has no pid label");
		size_t j = 0;
		while (j < n_procs && (procs[j].pid != pid || procs[j].comm != comm))
			j++;
		if (j == n_procs)
			procs[n_procs++] = (struct proc){ pid, comm, 0 };
		procs[j].count += s->value[0];
		if (!s->n_location_id)
			continue;
		Perftools__Profiles__Location *l = p->location[s->location_id[0] - 1];
		if (l->n_line && l->line[0]->function_id <= p->n_function) {
			uint64_t fn = l->line[0]->function_id;
			leaf[fn] += s->value[0];
			for (j = 0; j < n_pleaf && (pleaf[j].pid != pid || pleaf[j].fn != fn); j++)
				;
			if (j == n_pleaf)
				pleaf[n_pleaf++] = (struct pleaf){ pid, fn, 0 };
			pleaf[j].count += s->value[0];
		}
	}
	for (size_t i = 0; i < p->n_location; i++) {
		Perftools__Profiles__Location *l = p->location[i];
		if (l->mapping_id > p->n_mapping)
			return bad("a location names a mapping that does not exist");
		for (size_t k = 0; k < l->n_line; k++)
			if (!l->line[k]->function_id || l->line[k]->function_id > p->n_function)
				return bad("a line names a function that does not exist");
	}
	for (size_t i = 0; i < p->n_function; i++)
		if (p->function[i]->id != i + 1 || !STR_OK(p->function[i]->name))
			return bad("function ids or names out of range");
	for (size_t i = 0; i < p->n_mapping; i++)
		if (!STR_OK(p->mapping[i]->filename))
			return bad("mapping filename out of range");
	for (size_t i = 0; i < p->n_comment; i++)
		if (!STR_OK(p->comment[i]))
			return bad("comment string out of range");
	printf("samples %ld\nperiod %lld\n", total, (long long)p->period);
	for (size_t i = 0; i < p->n_comment; i++)
		printf("comment %s\n", p->string_table[p->comment[i]]);
	for (size_t i = 1; i <= p->n_function; i++)
		if (leaf[i])
			printf("leaf %s %ld\n", p->string_table[p->function[i - 1]->name], leaf[i]);
	for (size_t i = 0; i < n_procs; i++)
		printf("process %lld %s %ld\n", procs[i].pid,
		       procs[i].comm ? p->string_table[procs[i].comm] : "?", procs[i].count);
	for (size_t i = 0; i < n_pleaf; i++)
		if (pleaf[i].fn)
			printf("pleaf %lld %s %ld\n", pleaf[i].pid,
			       p->string_table[p->function[pleaf[i].fn - 1]->name], pleaf[i].count);
	for (size_t i = 0; i < p->n_location; i++) {
		Perftools__Profiles__Location *l = p->location[i];
		printf("location %llu %#llx", (unsigned long long)l->id, (unsigned long long)l->address);
		for (size_t k = 0; k < l->n_line; k++)
			printf(" %s:%lld", p->string_table[p->function[l->line[k]->function_id - 1]->name],
			       (long long)l->line[k]->line);
		putchar('\n');
	}
	for (size_t i = 0; i < p->n_sample; i++) {
		Perftools__Profiles__Sample *s = p->sample[i];
		printf("stack %lld ", (long long)s->value[0]);
		const char *sep = "";
		for (size_t k = s->n_location_id; k-- > 0;) {
			Perftools__Profiles__Location *l = p->location[s->location_id[k] - 1];
			for (size_t j = l->n_line; j-- > 0; sep = ";")
				printf("%s%s", sep,
				       p->string_table[p->function[l->line[j]->function_id - 1]->name]);
			if (!l->n_line)
				printf("%s[unknown]", sep), sep = ";";
		}
		putchar('\n');
	}
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(leaf);
	free(procs);
	free(pleaf);
	free(buf);
	return 0;
}
