/* SPDX-License-Identifier: MIT */
/* abi.c - the size rule of the structs a caller fills (docs/API.md,
 * "Compatibility"), as libbpf's option structs have it: each starts with
 * `sz`, the struct's size as the caller compiled it.
 *
 *   - sz 0 is a caller that did not set it, as source written for 0.1 (no
 *     sz) does with `{0}` or designated initializers: the struct is the
 *     size the caller's header gave it, which the header's macros pass
 *     beside the pointer (caller_sz); a call that knows no such size (the
 *     plain symbol, through a pointer or another language) reads 0.2's
 *     layout, the first with sz, which every caller's struct holds;
 *   - sz between 0.2's size and caller_sz is a struct of that size: the
 *     fields past it must be zero, or the caller set a field its sz leaves
 *     out (JU_EINVAL, naming it);
 *   - a smaller struct than this library's is an older caller: what it
 *     lacks reads as zero, the "not given" of every field;
 *   - a larger one is a newer caller: fine while every byte past what this
 *     library knows is zero, else JU_ENOTSUP (it asks for something this
 *     library cannot do, and must not be half-done).
 *
 * The rest of the library reads only whole structs of this version.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The sizes at version 0.2, the first with `sz`; structs only grow. */
#define BLOB_SZ_MIN (offsetof(ju_blob, n_lines) + sizeof(size_t))
#define OPTIONS_SZ_MIN (offsetof(ju_options, jitdump_max_bytes) + sizeof(uint64_t))

/* The fields added since 0.2, to name the one a caller set past its sz.
 * A new field gets a row. */
typedef struct field {
	size_t off, len;
	const char *name;
} field;
#define FIELD(type, f) { offsetof(type, f), sizeof(((type *)0)->f), #f }
static const field blob_fields[] = {
	FIELD(ju_blob, inlines),
	FIELD(ju_blob, n_inlines),
	FIELD(ju_blob, personality),
	FIELD(ju_blob, lsda),
};

typedef struct kind {
	const char *type;  /* "ju_blob" */
	const char *maker; /* "JU_BLOB" */
	size_t min_sz;
	const field *fields;
	size_t n_fields;
} kind;
static const kind BLOB = { "ju_blob", "JU_BLOB", BLOB_SZ_MIN, blob_fields,
			   sizeof blob_fields / sizeof blob_fields[0] };
static const kind OPTIONS = { "ju_options", "JU_OPTIONS", OPTIONS_SZ_MIN, NULL, 0 };

/* The offset of the first non-zero byte of p[from, to), or `to`. */
static size_t first_set(const uint8_t *p, size_t from, size_t to)
{
	while (from < to && !p[from])
		from++;
	return from;
}

static const char *field_at(const kind *k, size_t off)
{
	for (size_t i = 0; i < k->n_fields; i++)
		if (off >= k->fields[i].off && off < k->fields[i].off + k->fields[i].len)
			return k->fields[i].name;
	return NULL;
}

/* "options", or "blob 3": what a message names, made only for one. */
typedef struct what {
	char s[32];
} what;
static what name_of(const kind *k, size_t i)
{
	what w;
	if (k == &BLOB)
		snprintf(w.s, sizeof w.s, "blob %zu", i);
	else
		snprintf(w.s, sizeof w.s, "options");
	return w;
}

/* JU_FAIL with the struct's name first; the name lives until the call ends. */
#define FAIL_AT(code, fmt, ...) JU_FAIL((code), "%s: " fmt, name_of(k, i).s, __VA_ARGS__)

/* The size the caller's struct has, from its sz and, when the call came
 * through the header's macro, the size the caller compiled (caller_sz;
 * 0: unknown).  i: the blob's index in its batch. */
static int struct_size(const kind *k, size_t i, const void *user, size_t caller_sz, size_t *out)
{
	size_t sz;
	memcpy(&sz, user, sizeof sz);             /* `sz` leads every such struct */
	if (sz == caller_sz && sz >= k->min_sz) { /* JU_BLOB(), JU_OPTIONS() through the macros */
		*out = sz;
		return 0;
	}
	if (caller_sz && caller_sz < k->min_sz)
		return FAIL_AT(JU_EINVAL, "the caller's sizeof(%s) is %zu, less than any version's (%zu)",
			       k->type, caller_sz, k->min_sz);
	if (sz == 0) {
		*out = caller_sz ? caller_sz : k->min_sz;
		return 0;
	}
	if (sz < k->min_sz)
		return FAIL_AT(JU_EINVAL, "sz is %zu; set it to sizeof(%s) (%s() does), or to 0", sz, k->type,
			       k->maker);
	if (caller_sz && sz > caller_sz)
		return FAIL_AT(JU_EINVAL, "sz is %zu, more than the sizeof(%s) it was compiled with (%zu)",
			       sz, k->type, caller_sz);
	size_t set = caller_sz ? first_set(user, sz, caller_sz) : sz;
	if (caller_sz && set < caller_sz) {
		const char *name = field_at(k, set);
		return FAIL_AT(
			JU_EINVAL,
			"sets %s%s (byte %zu) past its sz (%zu); set sz to sizeof(%s) (%s() does), or to 0",
			name ? "." : "a field", name ? name : "", set, sz, k->type, k->maker);
	}
	*out = sz;
	return 0;
}

/* Copy the caller's struct of `sz` bytes into `out`, ours of `lib_sz`. */
static int struct_in(const kind *k, size_t i, const void *user, size_t sz, void *out, size_t lib_sz)
{
	if (sz > lib_sz && first_set(user, lib_sz, sz) < sz)
		return FAIL_AT(JU_ENOTSUP,
			       "sets fields that this library (%d.%d.%d) does not know: sz %zu, %zu known",
			       JU_VERSION_MAJOR, JU_VERSION_MINOR, JU_VERSION_PATCH, sz, lib_sz);
	size_t n = sz < lib_sz ? sz : lib_sz;
	memcpy(out, user, n);
	memset((uint8_t *)out + n, 0, lib_sz - n);
	memcpy(out, &lib_sz, sizeof lib_sz);
	return 0;
}

int ju__options_in(const ju_options *user, size_t caller_sz, ju_options *out)
{
	if (!user) {
		*out = JU_OPTIONS(.channels = 0);
		return 0;
	}
	size_t sz;
	int err = struct_size(&OPTIONS, 0, user, caller_sz, &sz);
	return err ? err : struct_in(&OPTIONS, 0, user, sz, out, sizeof *out);
}

static int blob_size(const ju_blob *user, size_t caller_sz, size_t i, size_t *sz)
{
	return struct_size(&BLOB, i, user, caller_sz, sz);
}

int ju__blob_in(const ju_blob *user, size_t caller_sz, size_t i, ju_blob *out)
{
	size_t sz;
	int err = blob_size(user, caller_sz, i, &sz);
	return err ? err : struct_in(&BLOB, i, user, sz, out, sizeof *out);
}

/* The stride of a batch that came through the plain symbol: blobs[0].sz,
 * which every blob must have.  sz 0 says nothing of the caller's stride. */
static int plain_stride(const ju_blob *blobs, size_t n, size_t *stride)
{
	*stride = blobs[0].sz;
	if (*stride == 0) {
		if (n > 1)
			return JU_FAIL(JU_EINVAL,
				       "blob 0: sz is 0, and a batch's stride is its blobs' sz: set it to "
				       "sizeof(ju_blob) (JU_BLOB() does), or call ju_publish_batch() through "
				       "jitunwind.h's macro");
		*stride = BLOB_SZ_MIN; /* one blob, read as 0.2 laid it out */
		return 0;
	}
	if (*stride < BLOB_SZ_MIN) /* says why, as a single blob would */
		return blob_size(&blobs[0], 0, 0, &(size_t){ 0 });
	for (size_t i = 1; i < n; i++) {
		const ju_blob *b = (const ju_blob *)((const uint8_t *)blobs + i * *stride);
		if (b->sz != *stride)
			return JU_FAIL(JU_EINVAL,
				       "blob %zu: sz is %zu, blob 0's is %zu: one array has one size", i,
				       b->sz, *stride);
	}
	return 0;
}

int ju__blobs_in(const ju_blob *blobs, size_t caller_sz, size_t n, const ju_blob **out, ju_blob **owned)
{
	*owned = NULL;
	size_t stride = caller_sz;
	if (!caller_sz) {
		int err = plain_stride(blobs, n, &stride);
		if (err)
			return err;
	}
	if (n > SIZE_MAX / stride)
		return JU_FAIL(JU_ERANGE, "a batch of %zu blobs of %zu bytes does not fit in memory", n,
			       stride);
	bool in_place = stride == sizeof(ju_blob);
	for (size_t i = 0; in_place && i < n; i++) {
		size_t sz;
		int err = blob_size(&blobs[i], caller_sz, i, &sz);
		if (err)
			return err;
	}
	if (in_place) { /* this version's callers: read where they are */
		*out = blobs;
		return 0;
	}
	ju_blob *v = ju__calloc(n, sizeof *v);
	if (!v)
		return JU_FAIL(JU_ENOMEM, "out of memory for a batch of %zu blobs", n);
	for (size_t i = 0; i < n; i++) {
		int err = ju__blob_in((const ju_blob *)((const uint8_t *)blobs + i * stride), caller_sz, i,
				      &v[i]);
		if (err) {
			free(v);
			return err;
		}
	}
	*out = *owned = v;
	return 0;
}

uint32_t ju_version(void)
{
	return JU_VERSION;
}
