/* test-structs-filled-as-0.1-source-fills-them.c - source written for 0.1,
 * whose ju_options and ju_blob had no `sz`, compiled against this header:
 * its structs reach the library with sz 0, and are read at the size this
 * header gives them (docs/API.md, "Compatibility").
 *
 *   - options from `{0}`, a designated initializer and a compound literal
 *     open a context with the channels they ask for;
 *   - a blob filled field by field after memset publishes, libgcc finds
 *     its FDE, ju_room_after measures it; so does a compound literal;
 *   - an array of blobs written 0.1's way, designated initializers and no
 *     sz, publishes as a batch, each blob where it says it is;
 *   - a field set past a non-zero sz is refused (JU_EINVAL) and named;
 *   - through the plain symbols, which know no size but sz, sz 0 reads
 *     0.2's layout, and a batch of more than one such blob is refused with
 *     a reason, since its stride is unknown.
 *
 * SPDX-License-Identifier: MIT
 */
#include "unit.h"

#include <jitunwind.h>
#include <string.h>
#include <sys/mman.h>

const void *_Unwind_Find_FDE(void *pc, void *bases);

static uint8_t *R; /* an inaccessible reservation: addresses, never run */

/* libgcc finds an FDE for the blob at R + at. */
static int found(uint32_t at)
{
	void *bases[3];
	return _Unwind_Find_FDE(R + at + 1, bases) != NULL;
}

static void options_from_zero(void)
{
	ju_options o = { 0 };
	o.channels = JU_CH_UNWINDER;
	o.flags = JU_OPT_NO_ENV;
	ju_ctx *ctx = NULL;
	CHECK_RC(ju_open(&o, &ctx), 0);
	CHECK(ctx && ju_channels(ctx) == JU_CH_UNWINDER, "the channels asked for: %#x",
	      ctx ? ju_channels(ctx) : 0);
	CHECK_RC(ju_close(ctx), 0);

	ju_options d = { .channels = JU_CH_GDB, .flags = JU_OPT_NO_ENV };
	ctx = NULL;
	CHECK_RC(ju_open(&d, &ctx), 0);
	CHECK(ctx && ju_channels(ctx) == JU_CH_GDB, "the channels asked for: %#x",
	      ctx ? ju_channels(ctx) : 0);
	CHECK_RC(ju_close(ctx), 0);

	ctx = NULL; /* a compound literal's commas pass through the macro */
	CHECK_RC(ju_open(&(ju_options){ .channels = JU_CH_GDB, .flags = JU_OPT_NO_ENV }, &ctx), 0);
	CHECK(ctx && ju_channels(ctx) == JU_CH_GDB, "from a compound literal: %#x",
	      ctx ? ju_channels(ctx) : 0);
	CHECK_RC(ju_close(ctx), 0);

	ctx = NULL;
	CHECK_RC((ju_open)(&d, &ctx), 0);
	CHECK(ctx && ju_channels(ctx) == JU_CH_GDB, "through the plain symbol: %#x",
	      ctx ? ju_channels(ctx) : 0);
	CHECK_RC(ju_close(ctx), 0);
}

static void blob_after_memset(ju_ctx *ctx)
{
	ju_blob b;
	memset(&b, 0, sizeof b);
	b.start = R + 0x100;
	b.size = 32;
	b.name = "filled-after-memset";
	b.frame.kind = JU_FRAME_LEAF;
	size_t room = 1;
	CHECK_RC(ju_room_after(ctx, &b, &room), 0);
	CHECK_RC(ju_publish(ctx, &b), 0);
	CHECK(found(0x100), "libgcc finds the blob filled after memset");
	CHECK_RC(ju_unpublish(ctx, R + 0x100), 0);
	CHECK(!found(0x100), "and not once it is unpublished");

	CHECK_RC((ju_publish)(ctx, &b), 0);
	CHECK(found(0x100), "libgcc finds it published through the plain symbol");
	CHECK_RC(ju_unpublish(ctx, R + 0x100), 0);

	CHECK_RC(ju_publish(ctx, &(ju_blob){ .start = R + 0x180,
					     .size = 16,
					     .name = "compound-literal",
					     .frame = { .kind = JU_FRAME_LEAF } }),
		 0);
	CHECK(found(0x180), "libgcc finds the blob of a compound literal");
	CHECK_RC(ju_unpublish(ctx, R + 0x180), 0);
}

static void batch_as_0_1_wrote_it(ju_ctx *ctx)
{
	static const ju_line lines[] = { { 0, 1 }, { 8, 2 } };
	ju_blob v[3] = {
		{ .start = R + 0x200, .size = 16, .name = "batch-a", .frame = { .kind = JU_FRAME_LEAF } },
		{ .start = R + 0x300,
		  .size = 24,
		  .name = "batch-b",
		  .frame = { .kind = JU_FRAME_LEAF },
		  .file = "b.jit",
		  .lines = lines,
		  .n_lines = 2 },
		{ .start = R + 0x400, .size = 8, .name = "batch-c", .frame = { .kind = JU_FRAME_LEAF } },
	};
	CHECK_RC(ju_publish_batch(ctx, v, 3), 0);
	CHECK(ju_count(ctx) == 3, "three blobs published: %zu", ju_count(ctx));
	CHECK(found(0x200) && found(0x300) && found(0x400), "libgcc finds each blob where it says it is");
	CHECK_RC(ju_unpublish(ctx, R + 0x300), 0);
	CHECK_RC(ju_unpublish(ctx, R + 0x400), 0);
	CHECK_RC(ju_unpublish(ctx, R + 0x200), 0);

	/* the plain symbol cannot know the stride of blobs without sz */
	CHECK_RC((ju_publish_batch)(ctx, v, 3), JU_EINVAL);
	CHECK(strstr(ju_errmsg(), "stride"), "the message says why: %s", ju_errmsg());
	CHECK(ju_count(ctx) == 0, "nothing published: %zu", ju_count(ctx));
	CHECK_RC((ju_publish_batch)(ctx, v, 1), 0);
	CHECK(found(0x200), "a batch of one is read as one blob");
	CHECK_RC(ju_unpublish_all(ctx), 0);
}

static void field_past_sz(ju_ctx *ctx)
{
	ju_blob b = JU_BLOB(.start = R + 0x500, .size = 16, .name = "past-sz",
			    .frame = { .kind = JU_FRAME_LEAF });
	b.sz = offsetof(ju_blob, personality); /* the struct as it was before personality */
	b.personality = (const void *)found;
	CHECK_RC(ju_publish(ctx, &b), JU_EINVAL);
	CHECK(strstr(ju_errmsg(), ".personality"), "the message names the field: %s", ju_errmsg());
	size_t room;
	CHECK_RC(ju_room_after(ctx, &b, &room), JU_EINVAL);
	ju_blob v[2] = { b, b };
	v[0].personality = NULL;
	v[1].start = R + 0x600;
	CHECK_RC(ju_publish_batch(ctx, v, 2), JU_EINVAL);
	CHECK(strstr(ju_errmsg(), "blob 1"), "the message names the blob: %s", ju_errmsg());
	CHECK(ju_count(ctx) == 0, "nothing published: %zu", ju_count(ctx));
	b.personality = NULL;
	CHECK_RC(ju_publish(ctx, &b), 0); /* the same struct with nothing past its sz */
	CHECK_RC(ju_unpublish_all(ctx), 0);
}

int main(void)
{
	R = mmap(NULL, 1 << 16, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (R == MAP_FAILED)
		UNIT_SKIP("no address space for the reservation");
	options_from_zero();
	ju_ctx *ctx;
	CHECK_RC(ju_open(&JU_OPTIONS(.channels = JU_CH_UNWINDER | JU_CH_GDB, .flags = JU_OPT_NO_ENV), &ctx),
		 0);
	blob_after_memset(ctx);
	batch_as_0_1_wrote_it(ctx);
	field_past_sz(ctx);
	CHECK_RC(ju_close(ctx), 0);
	return unit_done("test-structs-filled-as-0.1-source-fills-them");
}
