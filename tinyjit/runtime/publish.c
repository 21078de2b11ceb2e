/* SPDX-License-Identifier: MIT */
/* publish.c - the one place tinyjit talks to libjitunwind (run time).
 *
 * Every compiled function becomes one ju_blob named "tj:<function>", with
 * the .tj source lines of its instructions and a frame description that
 * comes from the compiler, never from hand-written offsets:
 *   region  JU_FRAME_REGION with the shim's CFI at its call into JIT code
 *           (CFA = rbp+16 ...), valid while stencils keep rbp intact;
 *   exact   JU_FRAME_CFI with each copied stencil's own FDE instructions,
 *           valid at every instruction, frame pointer or not.
 * All functions go in one ju_publish_batch: libgcc <= 12 walks a list of
 * registered objects on every unwind, so fewer objects is faster.
 * The calls the JIT inlined (--inline) are the blob's guest frames
 * (ju_blob.inlines): each inlined callee, "tj:<callee>" over the code
 * copied for it, called at the caller's .tj line; the line rows inside it
 * are the callee's own, so debuggers show each as an inline frame at its
 * line.
 *
 * Built with -DTJ_NO_PUBLISH when libjitunwind is not available: then
 * nothing is published and asking for a channel is an error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "publish.h"

#ifdef TJ_NO_PUBLISH

const int tj_publish_available = 0;

int tj_publish_open(const char *spec, tj_publisher **out, char *err, size_t errlen)
{
	*out = NULL;
	if (!spec || strcmp(spec, "none") == 0)
		return 0;
	snprintf(err, errlen, "--publish=%s: this tinyjit was built without libjitunwind", spec);
	return -1;
}

int tj_publish_program(tj_publisher *pub, const tj_jit *j, const tj_program *p, enum tj_cfi_mode cfi,
		       char *err, size_t errlen)
{
	(void)pub, (void)j, (void)p, (void)cfi, (void)err, (void)errlen;
	return 0;
}

void tj_publish_close(tj_publisher *pub)
{
	(void)pub;
}

void tj_publish_describe(const tj_publisher *pub, char *out, size_t n)
{
	(void)pub;
	snprintf(out, n, "none (built without libjitunwind)");
}

#else

#include "jitunwind.h"

const int tj_publish_available = 1;

struct tj_publisher {
	ju_ctx *ctx;
	/* what the published blobs point at, kept until close */
	char **names;
	ju_line *lines;
	ju_cfi_range *cfi;
	ju_inline *inlines;
	size_t n_names;
};

/* The options --publish=SPEC means: the library's groups "all" and
 * "default" (each channel where it can open), or a list of channels that
 * must all open. */
static int channels_of(const char *spec, ju_options *opt, char *err, size_t errlen)
{
	/* the command line wins over the JITUNWIND environment variable */
	*opt = (ju_options){ .sz = sizeof(ju_options), .flags = JU_OPT_NO_ENV };
	if (strcmp(spec, "all") == 0) {
		opt->channels = JU_CH_ALL;
		return 0;
	}
	if (strcmp(spec, "default") == 0) {
		opt->channels = JU_CH_DEFAULT;
		return 0;
	}
	opt->flags |= JU_OPT_STRICT;
	uint32_t *mask = &opt->channels;
	const char *p = spec;
	while (*p) {
		size_t len = strcspn(p, ",");
		uint32_t bit = 0;
		for (uint32_t b = 1; b < JU_CH_ALL; b <<= 1) {
			const char *name = ju_channel_name(b);
			if (name && strlen(name) == len && strncmp(p, name, len) == 0)
				bit = b;
		}
		if (!bit) {
			snprintf(err, errlen,
				 "--publish: unknown channel '%.*s' (expected all, default, none, or a "
				 "list of unwinder,libunwind,gdb,perfmap,jitdump)",
				 (int)len, p);
			return -1;
		}
		*mask |= bit;
		p += len + (p[len] == ',');
	}
	if (!*mask) {
		snprintf(err, errlen, "--publish: empty channel list");
		return -1;
	}
	return 0;
}

int tj_publish_open(const char *spec, tj_publisher **out, char *err, size_t errlen)
{
	*out = NULL;
	if (spec && strcmp(spec, "none") == 0)
		return 0;
	ju_options opt = { .sz = sizeof(ju_options) };
	if (spec && channels_of(spec, &opt, err, errlen))
		return -1;
	tj_publisher *pub = calloc(1, sizeof *pub);
	if (!pub) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	int rc = ju_open(&opt, &pub->ctx);
	if (rc) {
		snprintf(err, errlen, "jitunwind: %s: %s", ju_strerror(rc), ju_errmsg());
		free(pub);
		return -1;
	}
	*out = pub;
	return 0;
}

static void free_blobs(tj_publisher *pub)
{
	for (size_t i = 0; i < pub->n_names; i++)
		free(pub->names[i]);
	free(pub->names);
	free(pub->lines);
	free(pub->cfi);
	free(pub->inlines);
	pub->names = NULL;
	pub->lines = NULL;
	pub->cfi = NULL;
	pub->inlines = NULL;
	pub->n_names = 0;
}

int tj_publish_program(tj_publisher *pub, const tj_jit *j, const tj_program *p, enum tj_cfi_mode cfi,
		       char *err, size_t errlen)
{
	if (!pub)
		return 0;
	uint32_t n = tj_jit_nfuncs(j);
	size_t nl = 0, nc = 0, ni = 0;
	for (uint32_t i = 0; i < n; i++) {
		nl += tj_jit_func_info(j, i)->n_lines;
		nc += tj_jit_func_info(j, i)->n_cfi;
		ni += tj_jit_func_info(j, i)->n_inlines;
	}
	ju_blob *blobs = calloc(n ? n : 1, sizeof *blobs);
	pub->names = calloc(n ? n : 1, sizeof *pub->names);
	pub->lines = malloc((nl ? nl : 1) * sizeof *pub->lines);
	pub->cfi = cfi == TJ_CFI_EXACT ? malloc((nc ? nc : 1) * sizeof *pub->cfi) : NULL;
	pub->inlines = malloc((ni ? ni : 1) * sizeof *pub->inlines);
	if (!blobs || !pub->names || !pub->lines || (cfi == TJ_CFI_EXACT && !pub->cfi) || !pub->inlines) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	/* every name first: an inline names its callee's blob name */
	for (uint32_t i = 0; i < n; i++) {
		size_t len = strlen(p->funcs[i].name) + 4;
		if (!(pub->names[i] = malloc(len))) {
			snprintf(err, errlen, "out of memory");
			goto fail;
		}
		pub->n_names++;
		snprintf(pub->names[i], len, "tj:%s", p->funcs[i].name);
	}
	const tj_stencil_set *set = tj_jit_stencils(j);
	ju_line *lines = pub->lines;
	ju_cfi_range *ranges = pub->cfi;
	ju_inline *inl = pub->inlines;
	for (uint32_t i = 0; i < n; i++) {
		const tj_jit_func *f = tj_jit_func_info(j, i);
		ju_blob *b = &blobs[i];
		b->sz = sizeof *b;
		b->start = f->code;
		b->size = f->size;
		b->name = pub->names[i];
		b->file = p->file;
		b->lines = lines;
		b->n_lines = f->n_lines;
		for (size_t k = 0; k < f->n_lines; k++)
			*lines++ = (ju_line){ f->lines[k].offset, f->lines[k].line };
		b->inlines = f->n_inlines ? inl : NULL;
		b->n_inlines = f->n_inlines;
		for (size_t k = 0; k < f->n_inlines; k++) {
			const tj_jit_inline *in = &f->inlines[k];
			/* file and call_file NULL: the blob's, the one .tj file */
			*inl++ = (ju_inline){ .start = in->start,
					      .end = in->end,
					      .parent = in->parent,
					      .call_line = in->call_line,
					      .name = pub->names[in->fn] };
		}
		if (cfi == TJ_CFI_REGION) {
			b->frame.kind = JU_FRAME_REGION;
			b->frame.u.region.cfa_offset = set->region_cfa_offset;
			b->frame.u.region.fp_offset = set->region_fp_offset;
			b->frame.u.region.ra_offset = set->region_ra_offset;
			continue;
		}
		b->frame.kind = JU_FRAME_CFI;
		b->frame.u.cfi.ranges = ranges;
		b->frame.u.cfi.n = f->n_cfi;
		for (size_t k = 0; k < f->n_cfi; k++) {
			const tj_cfi_range *r = &f->cfi[k];
			*ranges++ = (ju_cfi_range){ r->start, r->end, r->insns, r->len };
		}
	}
	int rc = ju_publish_batch(pub->ctx, blobs, n);
	free(blobs);
	if (rc) {
		snprintf(err, errlen, "jitunwind: publishing %u functions: %s: %s", n, ju_strerror(rc),
			 ju_errmsg());
		free_blobs(pub);
		return -1;
	}
	return 0;
fail:
	free(blobs);
	free_blobs(pub);
	return -1;
}

void tj_publish_close(tj_publisher *pub)
{
	if (!pub)
		return;
	ju_unpublish_all(pub->ctx);
	ju_close(pub->ctx);
	free_blobs(pub);
	free(pub);
}

void tj_publish_describe(const tj_publisher *pub, char *out, size_t n)
{
	uint32_t ch = pub ? ju_channels(pub->ctx) : 0;
	size_t at = 0;
	out[0] = 0;
	for (uint32_t b = 1; b < JU_CH_ALL && at < n; b <<= 1)
		if (ch & b)
			at += (size_t)snprintf(out + at, n - at, "%s%s", at ? "," : "", ju_channel_name(b));
	if (!at)
		snprintf(out, n, "none");
}

#endif
