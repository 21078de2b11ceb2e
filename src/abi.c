/* abi.c - the size rule of the structs a caller fills (docs/API.md,
 * "Compatibility"), as libbpf's option structs have it: each starts with
 * `sz`, the struct's size as the caller compiled it.
 *
 *   - sz below the size the struct had when sz was introduced (0.2) is a
 *     caller that did not set it: JU_EINVAL;
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

static bool zero_bytes(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* Copy the caller's struct of `sz` bytes into `out`, ours of `lib_sz`. */
static int struct_in(const char *what, const char *type, const void *user, size_t sz, size_t min_sz,
		     void *out, size_t lib_sz)
{
	if (sz < min_sz)
		return JU_FAIL(JU_EINVAL, "%s: sz is %zu; set it to sizeof(%s) (JU_%s() does)", what, sz,
			       type, !strcmp(type, "ju_blob") ? "BLOB" : "OPTIONS");
	if (sz > lib_sz && !zero_bytes((const uint8_t *)user + lib_sz, sz - lib_sz))
		return JU_FAIL(JU_ENOTSUP,
			       "%s: sets fields that this library (%d.%d.%d) does not know: sz %zu, "
			       "%zu known",
			       what, JU_VERSION_MAJOR, JU_VERSION_MINOR, JU_VERSION_PATCH, sz, lib_sz);
	size_t n = sz < lib_sz ? sz : lib_sz;
	memcpy(out, user, n);
	memset((uint8_t *)out + n, 0, lib_sz - n);
	memcpy(out, &lib_sz, sizeof lib_sz); /* `sz` leads every such struct */
	return 0;
}

int ju__options_in(const ju_options *user, ju_options *out)
{
	if (!user) {
		*out = JU_OPTIONS(.channels = 0);
		return 0;
	}
	return struct_in("options", "ju_options", user, user->sz, OPTIONS_SZ_MIN, out, sizeof *out);
}

int ju__blob_in(const ju_blob *user, size_t i, ju_blob *out)
{
	char what[32];
	snprintf(what, sizeof what, "blob %zu", i);
	return struct_in(what, "ju_blob", user, user->sz, BLOB_SZ_MIN, out, sizeof *out);
}

int ju__blobs_in(const ju_blob *blobs, size_t n, const ju_blob **out, ju_blob **owned)
{
	*owned = NULL;
	size_t stride = blobs[0].sz;
	for (size_t i = 0; stride == sizeof(ju_blob) && i < n; i++)
		if (blobs[i].sz != stride)
			return JU_FAIL(JU_EINVAL,
				       "blob %zu: sz is %zu, blob 0's is %zu: one array has one size", i,
				       blobs[i].sz, stride);
	if (stride == sizeof(ju_blob)) { /* this version's callers: read in place */
		*out = blobs;
		return 0;
	}
	if (stride < BLOB_SZ_MIN) /* says why, as a single blob would */
		return ju__blob_in(&blobs[0], 0, &(ju_blob){ 0 });
	if (n > SIZE_MAX / stride)
		return JU_FAIL(JU_ERANGE, "a batch of %zu blobs of %zu bytes does not fit in memory", n,
			       stride);
	ju_blob *v = ju__calloc(n, sizeof *v);
	if (!v)
		return JU_FAIL(JU_ENOMEM, "out of memory for a batch of %zu blobs", n);
	for (size_t i = 0; i < n; i++) {
		const ju_blob *b = (const ju_blob *)((const uint8_t *)blobs + i * stride);
		int err = b->sz != stride
				  ? JU_FAIL(JU_EINVAL,
					    "blob %zu: sz is %zu, blob 0's is %zu: one array has one size", i,
					    b->sz, stride)
				  : ju__blob_in(b, i, &v[i]);
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
