/* SPDX-License-Identifier: MIT */
/* test-struct-sizes.c - the size rule of ju_options and ju_blob (docs/API.md,
 * "Compatibility"), from both sides of a version change:
 *
 *   - an sz too small for any version gets JU_EINVAL, saying how to set
 *     it; sz 0 is read at the size the caller compiled (test-structs-
 *     filled-as-0.1-source-fills-them.c);
 *   - a newer caller's larger struct works while its extra bytes are zero,
 *     and gets JU_ENOTSUP, with nothing published, when one is not;
 *   - a batch is walked at the caller's stride, not ours: the size its
 *     header passes, or through the plain symbol blobs[0].sz, which every
 *     blob of it must then have;
 *   - ju_version() is the header's version.
 *
 * "Newer" is simulated by a struct that embeds this version's and adds
 * fields after it, as the next version's header would, and passes its
 * size as the next header's macros would (ju_publish_sz and so on).
 */
#include "internal.h"
#include "unit.h"

#include <string.h>
#include <sys/mman.h>

static uint8_t *R; /* an inaccessible reservation: addresses, never run */

/* What a later header's ju_blob looks like to this library. */
typedef struct newer_blob {
	ju_blob b;
	const void *new_field;
	uint64_t another;
} newer_blob;

typedef struct newer_options {
	ju_options o;
	uint64_t new_field;
} newer_options;

static ju_blob leaf(uint32_t at, const char *name)
{
	return JU_BLOB(.start = R + at, .size = 16, .name = name, .frame = { .kind = JU_FRAME_LEAF });
}

static newer_blob newer(uint32_t at, const char *name)
{
	newer_blob n;
	memset(&n, 0, sizeof n); /* padding included: the rule reads bytes */
	n.b = leaf(at, name);
	n.b.sz = sizeof n;
	return n;
}

static void options_rule(void)
{
	ju_ctx *ctx = NULL;
	ju_options small = JU_OPTIONS(.channels = JU_CH_UNWINDER, .flags = JU_OPT_NO_ENV);
	small.sz = 8;
	CHECK_RC(ju_open(&small, &ctx), JU_EINVAL);
	CHECK(strstr(ju_errmsg(), "sizeof(ju_options)"), "the message says how to set sz: %s", ju_errmsg());
	CHECK_RC((ju_open)(&small, &ctx), JU_EINVAL);

	newer_options n;
	memset(&n, 0, sizeof n);
	n.o = JU_OPTIONS(.channels = JU_CH_UNWINDER, .flags = JU_OPT_NO_ENV);
	n.o.sz = sizeof n;
	CHECK_RC(ju_open_sz(&n.o, &ctx, sizeof n), 0);
	CHECK(ctx && ju_channels(ctx) == JU_CH_UNWINDER, "a newer caller's options are read: channels %#x",
	      ctx ? ju_channels(ctx) : 0);
	CHECK_RC(ju_close(ctx), 0);
	CHECK_RC((ju_open)(&n.o, &ctx), 0);
	CHECK_RC(ju_close(ctx), 0);
	CHECK_RC(ju_open(&n.o, &ctx), JU_EINVAL); /* sz says more than the caller's header */
	CHECK(strstr(ju_errmsg(), "compiled with"), "the message says why: %s", ju_errmsg());

	n.new_field = 1;
	ctx = NULL;
	CHECK_RC(ju_open_sz(&n.o, &ctx, sizeof n), JU_ENOTSUP);
	CHECK(!ctx, "no context is made for options this library cannot honour");
	CHECK(strstr(ju_errmsg(), "does not know"), "the message says why: %s", ju_errmsg());
}

static void blob_rule(ju_ctx *ctx)
{
	ju_blob unset = leaf(0x100, "unset");
	unset.sz = offsetof(ju_blob, n_lines); /* shorter than any version's (0.2's ends after n_lines) */
	CHECK_RC(ju_publish(ctx, &unset), JU_EINVAL);
	CHECK(strstr(ju_errmsg(), "sizeof(ju_blob)"), "the message says how to set sz: %s", ju_errmsg());
	size_t room;
	CHECK_RC(ju_room_after(ctx, &unset, &room), JU_EINVAL);
	CHECK_RC((ju_publish)(ctx, &unset), JU_EINVAL);
	ju_blob small = leaf(0x100, "small-caller");
	CHECK_RC(ju_publish_sz(ctx, &small, 16), JU_EINVAL);
	CHECK(strstr(ju_errmsg(), "less than any version's"), "the message says why: %s", ju_errmsg());

	/* the caller of the version before personality and lsda were added */
	ju_blob older = leaf(0x180, "older");
	older.sz = offsetof(ju_blob, personality);
	CHECK_RC(ju_publish(ctx, &older), 0);
	CHECK_RC(ju_unpublish(ctx, R + 0x180), 0);

	newer_blob n = newer(0x200, "newer");
	CHECK_RC(ju_publish_sz(ctx, &n.b, sizeof n), 0);
	CHECK_RC(ju_room_after_sz(ctx, &n.b, &room, sizeof n), 0);
	CHECK_RC((ju_room_after)(ctx, &n.b, &room), 0);
	n = newer(0x300, "newer-with-a-field-set");
	n.another = 7;
	CHECK_RC(ju_publish_sz(ctx, &n.b, sizeof n), JU_ENOTSUP);
	CHECK_RC((ju_publish)(ctx, &n.b), JU_ENOTSUP);
	CHECK_RC(ju_room_after_sz(ctx, &n.b, &room, sizeof n), JU_ENOTSUP);
	CHECK(ju_count(ctx) == 1, "only the blob without unknown fields is published: %zu", ju_count(ctx));
	CHECK_RC(ju_unpublish_all(ctx), 0);
}

static void batch_stride(ju_ctx *ctx)
{
	/* at our stride, blob 1 would be read from the middle of blob 0 */
	newer_blob v[3] = { newer(0x400, "stride-a"), newer(0x500, "stride-b"), newer(0x600, "stride-c") };
	CHECK_RC(ju_publish_batch_sz(ctx, &v[0].b, 3, sizeof v[0]), 0);
	CHECK(ju_count(ctx) == 3, "three newer blobs published: %zu", ju_count(ctx));
	CHECK_RC(ju_unpublish(ctx, R + 0x500), 0); /* found where blob 1 said it was */
	CHECK_RC(ju_unpublish_all(ctx), 0);
	CHECK_RC((ju_publish_batch)(ctx, &v[0].b, 3), 0); /* at blobs[0].sz */
	CHECK_RC(ju_unpublish(ctx, R + 0x600), 0);
	CHECK_RC(ju_unpublish_all(ctx), 0);

	v[2].new_field = R;
	CHECK_RC(ju_publish_batch_sz(ctx, &v[0].b, 3, sizeof v[0]), JU_ENOTSUP);
	CHECK(ju_count(ctx) == 0, "a batch with one unknown field set publishes nothing: %zu", ju_count(ctx));
	v[2].new_field = NULL;
	v[1].b.sz = sizeof(ju_blob);
	CHECK_RC((ju_publish_batch)(ctx, &v[0].b, 3), JU_EINVAL);
	CHECK(strstr(ju_errmsg(), "blob 1"), "the message names the blob: %s", ju_errmsg());
	/* at a known stride, each blob says its own size */
	CHECK_RC(ju_publish_batch_sz(ctx, &v[0].b, 3, sizeof v[0]), 0);
	CHECK_RC(ju_unpublish_all(ctx), 0);

	ju_blob ours[2] = { leaf(0x700, "ours-a"), leaf(0x800, "ours-b") };
	ours[1].sz = sizeof(newer_blob);
	CHECK_RC(ju_publish_batch(ctx, ours, 2), JU_EINVAL);
	CHECK_RC((ju_publish_batch)(ctx, ours, 2), JU_EINVAL);
	CHECK(ju_count(ctx) == 0, "nothing published: %zu", ju_count(ctx));
}

int main(void)
{
	R = mmap(NULL, 1 << 16, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (R == MAP_FAILED)
		UNIT_SKIP("no address space for the reservation");
	CHECK(ju_version() == JU_VERSION, "ju_version() %#x is the header's %#x", ju_version(), JU_VERSION);
	CHECK(JU_VERSION == JU_VERSION_NUMBER(0, 2, 0), "this is 0.2.0");
	CHECK(strcmp(ju_strerror(JU_ENOTSUP), "unknown error"), "JU_ENOTSUP has a description");
	options_rule();
	ju_ctx *ctx;
	CHECK_RC(ju_open(&JU_OPTIONS(.channels = JU_CH_UNWINDER | JU_CH_GDB, .flags = JU_OPT_NO_ENV), &ctx),
		 0);
	blob_rule(ctx);
	batch_stride(ctx);
	CHECK_RC(ju_close(ctx), 0);
	return unit_done("test-struct-sizes");
}
