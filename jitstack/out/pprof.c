/* SPDX-License-Identifier: MIT */
/* pprof.c - writing a profile as pprof reads it: the Profile message of
 * profile.proto serialized by protobuf-c (profile.pb-c.c, generated at build
 * time by protoc-c), then gzip-compressed with zlib, as the format's
 * documentation requires for files.
 */
#include "out/profile.h"
#include "out/writers.h"
#include "profile.pb-c.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

/* Labels per sample: the thread's name, and its process's pid and name
 * (the keys Parca's and Pyroscope's agents give the process). */
enum { N_LABELS = 3 };

/* All the messages of one profile, allocated in arrays. */
typedef struct msgs {
	Perftools__Profiles__Profile prof;
	Perftools__Profiles__ValueType types[2], period_type;
	Perftools__Profiles__Mapping *map, **map_p;
	Perftools__Profiles__Function *fn, **fn_p;
	Perftools__Profiles__Location *loc, **loc_p;
	Perftools__Profiles__Line *line, **line_p;
	Perftools__Profiles__Sample *smp, **smp_p;
	Perftools__Profiles__Label *label, **label_p;
	Perftools__Profiles__ValueType *types_p[2];
	uint64_t *ids;
	int64_t *values;
} msgs;

static void msgs_free(msgs *m)
{
	free(m->map), free(m->map_p), free(m->fn), free(m->fn_p), free(m->loc), free(m->loc_p);
	free(m->line), free(m->line_p), free(m->smp), free(m->smp_p), free(m->label), free(m->label_p);
	free(m->ids), free(m->values);
}

static void *nalloc(size_t n, size_t size)
{
	return calloc(n ? n : 1, size);
}

static int64_t find_string(const js_profile *p, const char *s)
{
	for (size_t i = 1; s && i < p->n_str; i++)
		if (!strcmp(p->str[i], s))
			return (int64_t)i;
	return 0;
}

static int alloc_msgs(const js_profile *p, msgs *m)
{
	size_t n_ids = 0;
	for (size_t i = 0; i < p->n_smp; i++)
		n_ids += p->smp[i].n;
	m->map = nalloc(p->n_map, sizeof *m->map);
	m->map_p = nalloc(p->n_map, sizeof *m->map_p);
	m->fn = nalloc(p->n_fn, sizeof *m->fn);
	m->fn_p = nalloc(p->n_fn, sizeof *m->fn_p);
	m->loc = nalloc(p->n_loc, sizeof *m->loc);
	m->loc_p = nalloc(p->n_loc, sizeof *m->loc_p);
	m->line = nalloc(p->n_loc + p->n_inl, sizeof *m->line);
	m->line_p = nalloc(p->n_loc + p->n_inl, sizeof *m->line_p);
	m->smp = nalloc(p->n_smp, sizeof *m->smp);
	m->smp_p = nalloc(p->n_smp, sizeof *m->smp_p);
	m->label = nalloc(N_LABELS * p->n_smp, sizeof *m->label);
	m->label_p = nalloc(N_LABELS * p->n_smp, sizeof *m->label_p);
	m->ids = nalloc(n_ids, sizeof *m->ids);
	m->values = nalloc(2 * p->n_smp, sizeof *m->values);
	return m->map && m->map_p && m->fn && m->fn_p && m->loc && m->loc_p && m->line && m->line_p &&
			       m->smp && m->smp_p && m->label && m->label_p && m->ids && m->values
		       ? 0
		       : -1;
}

/* Sample types: how many samples, and the time they stand for. */
static void build_types(const js_profile *p, msgs *m)
{
	Perftools__Profiles__Profile *P = &m->prof;
	static const char *const type_names[2][2] = { { "samples", "count" }, { "cpu", "nanoseconds" } };
	for (int i = 0; i < 2; i++) {
		perftools__profiles__value_type__init(&m->types[i]);
		m->types[i].type = find_string(p, type_names[i][0]);
		m->types[i].unit = find_string(p, type_names[i][1]);
		m->types_p[i] = &m->types[i];
	}
	P->n_sample_type = 2;
	P->sample_type = m->types_p;
	perftools__profiles__value_type__init(&m->period_type);
	m->period_type = m->types[1];
	P->period_type = &m->period_type;
	P->period = (int64_t)p->period_ns;
	P->time_nanos = (int64_t)p->start_ns;
	P->duration_nanos = (int64_t)p->duration_ns;
	P->default_sample_type = find_string(p, "cpu");
}

/* Mappings, the main executable first (pprof names the profile after it). */
static void build_mappings(const js_profile *p, msgs *m)
{
	int64_t main_file = find_string(p, p->main_exe);
	size_t k = 0;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < p->n_map; i++) {
			const pr_mapping *x = &p->map[i];
			if ((pass == 0) != ((int64_t)x->file == main_file && main_file))
				continue;
			Perftools__Profiles__Mapping *o = &m->map[k];
			perftools__profiles__mapping__init(o);
			o->id = i + 1;
			o->memory_start = x->start;
			o->memory_limit = x->limit;
			o->filename = x->file;
			o->has_functions = 1;
			o->has_line_numbers = x->jit;
			m->map_p[k++] = o;
		}
	}
	m->prof.n_mapping = k;
	m->prof.mapping = m->map_p;
}

static void build_functions(const js_profile *p, msgs *m)
{
	for (size_t i = 0; i < p->n_fn; i++) {
		Perftools__Profiles__Function *o = &m->fn[i];
		perftools__profiles__function__init(o);
		o->id = i + 1;
		o->name = o->system_name = p->fn[i].name;
		o->filename = p->fn[i].file;
		m->fn_p[i] = o;
	}
	m->prof.n_function = p->n_fn;
	m->prof.function = m->fn_p;
}

/* One Line of a location: a function at a line. */
static Perftools__Profiles__Line *line_of(msgs *m, size_t k, uint32_t function, int64_t line)
{
	perftools__profiles__line__init(&m->line[k]);
	m->line[k].function_id = function;
	m->line[k].line = line;
	return m->line_p[k] = &m->line[k];
}

/* Locations, each with its lines: the functions inlined at its address,
 * innermost first, then the function they were inlined into (profile.proto:
 * "line[i] is inlined into line[i+1]"); none when it is unnamed. */
static void build_locations(const js_profile *p, msgs *m)
{
	size_t k = 0;
	for (size_t i = 0; i < p->n_loc; i++) {
		const pr_location *x = &p->loc[i];
		Perftools__Profiles__Location *o = &m->loc[i];
		perftools__profiles__location__init(o);
		o->id = i + 1;
		o->mapping_id = x->mapping;
		o->address = x->address;
		o->line = &m->line_p[k];
		for (uint32_t j = 0; j < x->n_inl; j++)
			if (p->inl[x->inl + j].function)
				line_of(m, k++, p->inl[x->inl + j].function, p->inl[x->inl + j].line);
		if (x->function)
			line_of(m, k++, x->function, x->line);
		o->n_line = (size_t)(&m->line_p[k] - o->line);
		m->loc_p[i] = o;
	}
	m->prof.n_location = p->n_loc;
	m->prof.location = m->loc_p;
}

/* A sample's labels: "thread" (its name), "pid" (a number) and "comm"
 * (the process's name). */
static void build_labels(const js_profile *p, const pr_sample *x, int64_t keys[N_LABELS],
			 Perftools__Profiles__Label *l, Perftools__Profiles__Label **lp)
{
	for (int k = 0; k < N_LABELS; k++) {
		perftools__profiles__label__init(&l[k]);
		l[k].key = keys[k];
		lp[k] = &l[k];
	}
	l[0].str = x->thread;
	if (x->proc < p->n_proc) {
		l[1].num = p->proc[x->proc].pid;
		l[2].str = p->proc[x->proc].comm;
	}
}

/* Samples: locations leaf first, as pprof wants; two values (count, time);
 * the thread and the process as labels. */
static void build_samples(const js_profile *p, msgs *m)
{
	int64_t keys[N_LABELS] = { find_string(p, "thread"), find_string(p, "pid"), find_string(p, "comm") };
	uint64_t *ids = m->ids;
	for (size_t i = 0; i < p->n_smp; i++) {
		const pr_sample *x = &p->smp[i];
		Perftools__Profiles__Sample *o = &m->smp[i];
		perftools__profiles__sample__init(o);
		for (size_t j = 0; j < x->n; j++)
			ids[j] = x->loc[j];
		o->n_location_id = x->n;
		o->location_id = ids;
		ids += x->n;
		m->values[2 * i] = (int64_t)x->count;
		m->values[2 * i + 1] = (int64_t)(x->count * p->period_ns);
		o->n_value = 2;
		o->value = &m->values[2 * i];
		build_labels(p, x, keys, &m->label[N_LABELS * i], &m->label_p[N_LABELS * i]);
		o->n_label = x->proc < p->n_proc ? N_LABELS : 1;
		o->label = &m->label_p[N_LABELS * i];
		m->smp_p[i] = o;
	}
	m->prof.n_sample = p->n_smp;
	m->prof.sample = m->smp_p;
}

static int build(const js_profile *p, msgs *m)
{
	perftools__profiles__profile__init(&m->prof);
	if (alloc_msgs(p, m))
		return -1;
	build_types(p, m);
	build_mappings(p, m);
	build_functions(p, m);
	build_locations(p, m);
	build_samples(p, m);
	m->prof.n_string_table = p->n_str;
	m->prof.string_table = p->str;
	m->prof.n_comment = p->n_comment;
	m->prof.comment = (int64_t *)p->comment;
	return 0;
}

/* gzip (RFC 1952) through zlib's gz* file interface, on a descriptor of
 * its own (gzclose closes it; the caller closes f). */
static int write_gzip(const uint8_t *data, size_t len, FILE *f, const char *name, js_err *err)
{
	errno = 0;
	int fd = fflush(f) ? -1 : dup(fileno(f));
	gzFile g = fd < 0 ? NULL : gzdopen(fd, "wb");
	if (!g && fd >= 0)
		close(fd);
	int rc = g ? 0 : -1; /* errno is set (or 0 when zlib ran out of memory) */
	for (size_t at = 0; at < len && rc == 0;) {
		unsigned n = len - at > (1u << 30) ? 1u << 30 : (unsigned)(len - at);
		if (gzwrite(g, data + at, n) != (int)n)
			rc = -1;
		at += n;
	}
	if (g && gzclose(g) != Z_OK)
		rc = -1;
	int e = errno ? errno : EIO;
	return rc ? js_fail(err, JS_EXIT_FAILURE, e, "cannot write %s: %s", name, strerror(e)) : 0;
}

int js_write_pprof(const js_profile *p, const js_write_opts *o, FILE *f, const char *name, js_err *err)
{
	(void)o;
	msgs m;
	memset(&m, 0, sizeof m);
	int rc;
	uint8_t *buf = NULL;
	size_t len = 0;
	if (build(p, &m) == 0 &&
	    (len = perftools__profiles__profile__get_packed_size(&m.prof), buf = malloc(len ? len : 1))) {
		perftools__profiles__profile__pack(&m.prof, buf);
		rc = write_gzip(buf, len, f, name, err);
	} else {
		rc = js_fail(err, JS_EXIT_FAILURE, ENOMEM, "cannot write %s: %s", name, strerror(ENOMEM));
	}
	free(buf);
	msgs_free(&m);
	return rc;
}
