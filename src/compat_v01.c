/* SPDX-License-Identifier: MIT */
/* compat_v01.c - the entry points of binaries built against version 0.1 of
 * jitunwind.h, whose ju_options and ju_blob had no `sz`.  The shared
 * library exports them as ju_open@JITUNWIND_0.1 and so on (jitunwind.map):
 * such binaries carry unversioned references, which the dynamic linker
 * binds to a library's oldest version, so they keep reading their structs
 * as they were laid out.  Binaries built since bind to @@JITUNWIND_0.2.
 *
 * Only in the shared library: a static link is always against the header
 * it was compiled with.
 */
#include "internal.h"

#include <stdlib.h>

/* The 0.1 layouts, frozen.  ju_frame and ju_line are the same types now. */
typedef struct ju_options_v01 {
	uint32_t channels;
	uint32_t flags;
	const char *jitdump_dir;
	void (*log)(void *arg, int level, const char *msg);
	void *log_arg;
	uint64_t jitdump_max_bytes;
} ju_options_v01;

typedef struct ju_blob_v01 {
	const void *start;
	size_t size;
	const char *name;
	ju_frame frame;
	const char *file;
	const ju_line *lines;
	size_t n_lines;
} ju_blob_v01;

#define V01(name) __attribute__((visibility("default"), symver(#name "@JITUNWIND_0.1")))

static ju_blob blob_of(const ju_blob_v01 *b)
{
	return JU_BLOB(.start = b->start, .size = b->size, .name = b->name, .frame = b->frame,
		       .file = b->file, .lines = b->lines, .n_lines = b->n_lines);
}

V01(ju_open) int ju_open_v01(const ju_options_v01 *o, ju_ctx **out)
{
	if (!o)
		return ju_open(NULL, out);
	ju_options n =
		JU_OPTIONS(.channels = o->channels, .flags = o->flags, .jitdump_dir = o->jitdump_dir,
			   .log = o->log, .log_arg = o->log_arg, .jitdump_max_bytes = o->jitdump_max_bytes);
	return ju_open(&n, out);
}

V01(ju_publish_batch) int ju_publish_batch_v01(ju_ctx *ctx, const ju_blob_v01 *blobs, size_t n)
{
	if (!blobs || n == 0 || n > (1u << 26)) /* ju_publish_batch says why */
		return ju_publish_batch(ctx, NULL, n);
	ju_blob one, *v = n == 1 ? &one : ju__calloc(n, sizeof *v);
	if (!v) {
		ju__clear_error();
		return JU_FAIL(JU_ENOMEM, "out of memory for a batch of %zu blobs", n);
	}
	for (size_t i = 0; i < n; i++)
		v[i] = blob_of(&blobs[i]);
	int err = ju_publish_batch(ctx, v, n);
	if (v != &one)
		free(v);
	return err;
}

V01(ju_publish) int ju_publish_v01(ju_ctx *ctx, const ju_blob_v01 *blob)
{
	if (!blob)
		return ju_publish(ctx, NULL);
	return ju_publish_batch_v01(ctx, blob, 1);
}

V01(ju_room_after) int ju_room_after_v01(const ju_ctx *ctx, const ju_blob_v01 *blob, size_t *room)
{
	if (!blob)
		return ju_room_after(ctx, NULL, room);
	ju_blob b = blob_of(blob);
	return ju_room_after(ctx, &b, room);
}
