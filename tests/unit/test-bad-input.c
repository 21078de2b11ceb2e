/* SPDX-License-Identifier: MIT */
/* test-bad-input.c - every kind of bad input gets its error code and a
 * message, and nothing already published is lost or left behind.
 *
 * After each refused call the blobs published before it must still be found
 * by libgcc (the in-process unwinder) and by the library, and the refused
 * blobs must not be.
 */
#include "internal.h"
#include "unit.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static const void *(*find_fde)(void *pc, void *bases);
static ju_ctx *ctx;
static uint8_t *R; /* an inaccessible reservation: addresses, never run */

/* A valid blob at offset `at` of the reservation. */
static ju_blob good(uint32_t at, uint32_t size, const char *name)
{
	return (ju_blob){ .sz = sizeof(ju_blob),
			  .start = R + at,
			  .size = size,
			  .name = name,
			  .frame = { .kind = JU_FRAME_LEAF } };
}

static bool unwinder_finds(const void *pc)
{
	void *bases[3];
	return find_fde && find_fde((void *)pc, bases) != NULL;
}

static bool published(const void *start)
{
	arena *a;
	return arena_find(ctx, (uintptr_t)start, &a) != NULL;
}

/* The state every failing call must leave: exactly the two anchors. */
static void anchors_intact(const char *after)
{
	CHECK(ju_count(ctx) == 2, "after %s: %zu blobs published, want 2", after, ju_count(ctx));
	CHECK(published(R + 0x100) && published(R + 0x900), "after %s: an anchor was lost", after);
	CHECK(unwinder_finds(R + 0x108) && unwinder_finds(R + 0x908), "after %s: libgcc lost an anchor",
	      after);
}

static void expect_refused(const ju_blob *b, int want, const char *msg_part, const char *what)
{
	int rc = ju_publish(ctx, b);
	CHECK(rc == want, "%s: got %d (%s), want %d", what, rc, ju_errmsg(), want);
	CHECK(ju_errmsg()[0] && (!msg_part || strstr(ju_errmsg(), msg_part)),
	      "%s: message \"%s\" should mention \"%s\"", what, ju_errmsg(), msg_part ? msg_part : "");
	/* a refused blob that does not lie over an anchor must be invisible */
	uintptr_t at = b ? (uintptr_t)b->start - (uintptr_t)R : 0;
	if (b && b->start && at < 0x10000 && !(at >= 0xf0 && at < 0x110) && !(at >= 0x900 && at < 0x910))
		CHECK(!published(b->start) && !unwinder_finds(b->start), "%s: a refused blob is visible",
		      what);
	anchors_intact(what);
}

static void ranges(void)
{
	ju_blob b = good(0x200, 16, "r");
	b.start = NULL;
	expect_refused(&b, JU_EINVAL, "start is NULL", "NULL start");
	expect_refused(NULL, JU_EINVAL, "NULL", "NULL blob");
	b = good(0x200, 0, "r");
	expect_refused(&b, JU_EINVAL, "size is 0", "zero size");
	b = good(0x200, 16, "r");
	b.size = (size_t)1 << 32;
	expect_refused(&b, JU_ERANGE, "4 GiB", "4 GiB blob");
	b.start = (void *)(UINTPTR_MAX - 8);
	b.size = 16;
	expect_refused(&b, JU_ERANGE, "wraps", "wrapping range");
	/* overlaps with published code: inside, straddling either end, covering */
	uint32_t starts[] = { 0x100, 0x104, 0xf8, 0xf0 };
	uint32_t sizes[] = { 16, 4, 16, 64 };
	for (int i = 0; i < 4; i++) {
		b = good(starts[i], sizes[i], "overlap");
		expect_refused(&b, JU_EOVERLAP, "overlaps code already published", "overlap");
	}
	/* touching is not overlapping */
	b = good(0x110, 16, "touching");
	CHECK_RC(ju_publish(ctx, &b), 0);
	CHECK_RC(ju_unpublish(ctx, b.start), 0);
	/* overlap inside one batch: nothing of the batch is published */
	ju_blob batch[3] = { good(0x300, 16, "a"), good(0x400, 32, "b"), good(0x410, 16, "c") };
	CHECK_RC(ju_publish_batch(ctx, batch, 3), JU_EOVERLAP);
	CHECK(strstr(ju_errmsg(), "same batch"), "message: %s", ju_errmsg());
	CHECK(!published(R + 0x300), "first blob of a refused batch was published");
	anchors_intact("overlapping batch");
	CHECK_RC(ju_publish_batch(ctx, NULL, 2), JU_EINVAL);
	CHECK_RC(ju_publish_batch(ctx, batch, 0), 0);
}

/* Two contexts share the process's unwinders, which cannot tell whose code
 * a pc is: code one context published is refused to another, all of a batch;
 * touching is fine, and the range is free again once unpublished. */
static void overlap_with_another_context(void)
{
	ju_options o = { .sz = sizeof(ju_options), .channels = JU_CH_UNWINDER, .flags = JU_OPT_NO_ENV };
	ju_ctx *other = NULL;
	CHECK_RC(ju_open(&o, &other), 0);
	if (!other)
		return;
	ju_blob b = good(0x104, 4, "inside anchor1");
	CHECK_RC(ju_publish(other, &b), JU_EOVERLAP);
	CHECK(strstr(ju_errmsg(), "another context"), "message: %s", ju_errmsg());
	ju_blob batch[2] = { good(0x300, 16, "free"), good(0x8f8, 16, "over anchor2") };
	CHECK_RC(ju_publish_batch(other, batch, 2), JU_EOVERLAP);
	CHECK(ju_count(other) == 0 && !unwinder_finds(R + 0x308), "part of a refused batch was published");
	anchors_intact("overlap from another context");
	b = good(0x110, 16, "touching anchor1");
	CHECK_RC(ju_publish(other, &b), 0);
	/* and the other way round */
	ju_blob mine = good(0x118, 4, "inside the other's");
	CHECK_RC(ju_publish(ctx, &mine), JU_EOVERLAP);
	CHECK_RC(ju_unpublish(other, b.start), 0);
	CHECK_RC(ju_publish(ctx, &mine), 0);
	CHECK_RC(ju_unpublish(ctx, mine.start), 0);
	CHECK_RC(ju_close(other), 0);
	anchors_intact("overlap from another context");
}

static void names(void)
{
	static char longest[JU_NAME_MAX + 2];
	memset(longest, 'n', JU_NAME_MAX + 1);
	const struct {
		const char *name;
		const char *why;
	} bad[] = {
		{ NULL, "is NULL" },
		{ "", "is empty" },
		{ longest, "longer than" },
		{ "a\nb", "not valid UTF-8" }, /* would break a perf map line */
		{ "tab\there", "not valid UTF-8" },
		{ "\xff", "not valid UTF-8" },
		{ "\xc0\xaf", "not valid UTF-8" },         /* overlong '/' */
		{ "\xed\xa0\x80", "not valid UTF-8" },     /* a surrogate */
		{ "\xe2\x82", "not valid UTF-8" },         /* truncated */
		{ "\xf4\x90\x80\x80", "not valid UTF-8" }, /* past U+10FFFF */
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ju_blob b = good(0x200, 16, bad[i].name);
		expect_refused(&b, JU_ENAME, bad[i].why, "bad name");
	}
	longest[JU_NAME_MAX] = 0; /* exactly the limit is fine */
	const char *fine[] = { longest, "tj:fib", "π/2 — ünïcödé", "\xf0\x9f\x90\x8d" };
	for (size_t i = 0; i < 4; i++) {
		ju_blob b = good(0x200, 16, fine[i]);
		CHECK_RC(ju_publish(ctx, &b), 0);
		CHECK_RC(ju_unpublish(ctx, b.start), 0);
	}
}

static void frames(void)
{
	static const ju_range bad_epi[] = { { 10, 12 }, { 8, 9 } };
	static const ju_saved_reg save_rbp[] = { { 6, -24, 5 } };   /* the frame pointer itself */
	static const ju_saved_reg save_high[] = { { 3, -16, 5 } };  /* over the saved rbp */
	static const ju_saved_reg save_early[] = { { 3, -24, 4 } }; /* not after set_end */
	static const ju_saved_reg save_twice[] = { { 3, -24, 5 }, { 3, -32, 7 } };
	static const ju_saved_reg region_at_ra[] = { { 3, -8, 0 } }; /* where the return address is */
	static const ju_saved_reg region_end[] = { { 3, -24, 4 } };  /* the shim saved it: 0 */
	static const ju_saved_reg region_twice[] = { { 3, -24, 0 }, { 3, -32, 0 } };
	static const ju_range out_epi[] = { { 30, 40 } };
	static const uint8_t set_loc[] = { 0x01, 0, 0, 0, 0, 0, 0, 0, 0 };
	static const uint8_t vendor[] = { 0x3f };
	static const uint8_t args_size[] = { 0x2e, 0x10 };        /* DW_CFA_GNU_args_size 16 */
	static const uint8_t neg_offset[] = { 0x2f, 0x03, 0x01 }; /* GNU_negative_offset_extended */
	static const uint8_t truncated[] = { 0x0c, 0x07 };        /* def_cfa reg, no offset */
	static const uint8_t bad_reg[] = { 0x0d, 0xc8, 0x01 };    /* def_cfa_register 200 */
	static const uint8_t far[] = { 0x02, 200 };               /* advance past the range */
	static const uint8_t unbalanced[] = { 0x0b };             /* restore_state alone */
	static const ju_cfi_range cr_set_loc[] = { { 0, 16, set_loc, sizeof set_loc } };
	static const ju_cfi_range cr_vendor[] = { { 0, 16, vendor, 1 } };
	static const ju_cfi_range cr_args_size[] = { { 0, 16, args_size, sizeof args_size } };
	static const ju_cfi_range cr_neg_offset[] = { { 0, 16, neg_offset, sizeof neg_offset } };
	static const ju_cfi_range cr_trunc[] = { { 0, 16, truncated, 2 } };
	static const ju_cfi_range cr_reg[] = { { 0, 16, bad_reg, 3 } };
	static const ju_cfi_range cr_far[] = { { 0, 16, far, 2 } };
	static const ju_cfi_range cr_unbal[] = { { 0, 16, unbalanced, 1 } };
	static const ju_cfi_range cr_overlap[] = { { 0, 10, NULL, 0 }, { 8, 16, NULL, 0 } };
	static const ju_cfi_range cr_outside[] = { { 0, 40, NULL, 0 } };
	static const ju_cfi_range cr_nulls[] = { { 0, 16, NULL, 3 } };
	const struct {
		ju_frame f;
		const char *why;
	} bad[] = {
		{ { .kind = JU_FRAME_INVALID }, "frame kind" },
		{ { .kind = (enum ju_frame_kind)99 }, "frame kind" },
		{ { .kind = JU_FRAME_FP, .u.fp = { 0, 4, NULL, 0 } }, "push_end" },
		{ { .kind = JU_FRAME_FP, .u.fp = { 4, 4, NULL, 0 } }, "set_end" },
		{ { .kind = JU_FRAME_FP, .u.fp = { 1, 20, NULL, 0 } }, "beyond the blob" },
		{ { .kind = JU_FRAME_FP, .u.fp = { 1, 4, NULL, 1 } }, "epilogues is NULL" },
		{ { .kind = JU_FRAME_FP, .u.fp = { 1, 4, bad_epi, 2 } }, "epilogue 1" },
		{ { .kind = JU_FRAME_FP, .u.fp = { 1, 4, out_epi, 1 } }, "epilogue 0" },
		{ { .kind = JU_FRAME_FP, .u.fp = { 1, 4, NULL, 0, NULL, 1 } }, "saved is NULL" },
		{ { .kind = JU_FRAME_FP, .u.fp = { 1, 4, NULL, 0, save_rbp, 1 } }, "not a callee-saved" },
		{ { .kind = JU_FRAME_FP, .u.fp = { 1, 4, NULL, 0, save_high, 1 } },
		  "below the saved frame pointer" },
		{ { .kind = JU_FRAME_FP, .u.fp = { 1, 4, NULL, 0, save_early, 1 } }, "must follow set_end" },
		{ { .kind = JU_FRAME_FP, .u.fp = { 1, 4, NULL, 0, save_twice, 2 } }, "saved twice" },
		{ { .kind = JU_FRAME_REGION, .u.region = { -8, -16, -8 } }, "cfa_offset" },
		{ { .kind = JU_FRAME_REGION, .u.region = { 16, -12, -8 } }, "multiples" },
		{ { .kind = JU_FRAME_REGION, .u.region = { 16, -8, -8 } }, "both" },
		{ { .kind = JU_FRAME_REGION, .u.region = { 16, -16, -8, NULL, 1 } }, "saved is NULL" },
		{ { .kind = JU_FRAME_REGION, .u.region = { 16, -16, -8, save_rbp, 1 } },
		  "not a callee-saved" },
		{ { .kind = JU_FRAME_REGION, .u.region = { 16, -16, -8, region_at_ra, 1 } },
		  "apart from the saved frame pointer" },
		{ { .kind = JU_FRAME_REGION, .u.region = { 16, -16, -8, region_end, 1 } }, "saved_end" },
		{ { .kind = JU_FRAME_REGION, .u.region = { 16, -16, -8, region_twice, 2 } }, "saved twice" },
		{ { .kind = JU_FRAME_CFI, .u.cfi = { NULL, 1 } }, "no ranges" },
		{ { .kind = JU_FRAME_CFI, .u.cfi = { cr_overlap, 2 } }, "range 1" },
		{ { .kind = JU_FRAME_CFI, .u.cfi = { cr_outside, 1 } }, "outside the blob" },
		{ { .kind = JU_FRAME_CFI, .u.cfi = { cr_nulls, 1 } }, "insns is NULL" },
		{ { .kind = JU_FRAME_CFI, .u.cfi = { cr_set_loc, 1 } }, "opcode 0x01" },
		{ { .kind = JU_FRAME_CFI, .u.cfi = { cr_vendor, 1 } }, "opcode 0x3f" },
		{ { .kind = JU_FRAME_CFI, .u.cfi = { cr_args_size, 1 } }, "opcode 0x2e" },
		{ { .kind = JU_FRAME_CFI, .u.cfi = { cr_neg_offset, 1 } }, "opcode 0x2f" },
		{ { .kind = JU_FRAME_CFI, .u.cfi = { cr_trunc, 1 } }, "middle of an operand" },
		{ { .kind = JU_FRAME_CFI, .u.cfi = { cr_reg, 1 } }, "not a x86-64 DWARF register" },
		{ { .kind = JU_FRAME_CFI, .u.cfi = { cr_far, 1 } }, "past the range" },
		{ { .kind = JU_FRAME_CFI, .u.cfi = { cr_unbal, 1 } }, "without a remember_state" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ju_blob b = good(0x200, 16, "frame");
		b.frame = bad[i].f;
		expect_refused(&b, JU_ECFI, bad[i].why, "bad frame");
	}
	/* A range with no instructions (insns NULL, len 0) is legal: the CIE's
	 * rule holds there.  The checker and the writer must not do pointer
	 * arithmetic on the NULL (clang's UBSan reports NULL + 0). */
	static const ju_cfi_range cr_empty[] = { { 0, 16, NULL, 0 } };
	ju_blob b = good(0x200, 16, "no instructions");
	b.frame = (ju_frame){ .kind = JU_FRAME_CFI, .u.cfi = { cr_empty, 1 } };
	CHECK_RC(ju_publish(ctx, &b), 0);
	CHECK(unwinder_finds(R + 0x208), "libgcc does not find a blob whose range has no instructions");
	CHECK_RC(ju_unpublish(ctx, b.start), 0);
	anchors_intact("a range with no instructions");
}

static void lines(void)
{
	static const ju_line unordered[] = { { 4, 2 }, { 2, 3 } };
	static const ju_line beyond[] = { { 0, 1 }, { 16, 2 } };
	static const ju_line zero[] = { { 0, 0 } };
	static const ju_line ok[] = { { 0, 1 }, { 8, 2 } };
	ju_blob b = good(0x200, 16, "lines");
	b.file = "f.tj", b.lines = unordered, b.n_lines = 2;
	expect_refused(&b, JU_ELINES, "must increase", "unordered rows");
	b.lines = beyond;
	expect_refused(&b, JU_ELINES, "beyond the blob", "row past the end");
	b.lines = zero, b.n_lines = 1;
	expect_refused(&b, JU_ELINES, "line 0", "line 0");
	b.lines = NULL, b.n_lines = 2;
	expect_refused(&b, JU_ELINES, "lines is NULL", "NULL rows");
	b.lines = ok, b.n_lines = 2, b.file = NULL;
	expect_refused(&b, JU_ELINES, "file is NULL", "rows without a file");
	b.file = "bad\xff.tj";
	expect_refused(&b, JU_ENAME, "file name is not valid UTF-8", "file name not UTF-8");
	b.file = "";
	expect_refused(&b, JU_ENAME, "file name is empty", "empty file name");
	b.file = "f.tj", b.lines = NULL, b.n_lines = 0;
	expect_refused(&b, JU_ELINES, "without line rows", "a file without rows");
}

/* An LSDA is read by its personality only; a context has room for
 * JU_PERSONALITY_MAX distinct (personality, has an LSDA) pairs, ever. */
static void personalities(void)
{
	ju_blob b = good(0x200, 16, "lsda-alone");
	b.lsda = R + 0xf000;
	expect_refused(&b, JU_EINVAL, "personality is NULL", "an LSDA without a personality");
	ju_blob two[2] = { good(0x300, 16, "fine"), b };
	two[1].start = R + 0x400;
	int rc = ju_publish_batch(ctx, two, 2);
	CHECK(rc == JU_EINVAL && strstr(ju_errmsg(), "blob 1"), "a batch with one: %d (%s)", rc, ju_errmsg());
	CHECK(!published(R + 0x300) && !unwinder_finds(R + 0x300), "its good blob is not published either");
	anchors_intact("a batch with an LSDA without a personality");

	enum { N = JU_PERSONALITY_MAX };
	static ju_blob many[N];
	for (size_t i = 0; i < N; i++) {
		many[i] = good(0x1000 + 16 * (uint32_t)i, 16, "personality");
		many[i].personality = R + 0x8000 + i; /* never called: nothing is thrown */
		many[i].lsda = i % 2 ? R + 0xf000 : NULL;
	}
	CHECK_RC(ju_publish_batch(ctx, many, N), 0);
	CHECK(unwinder_finds(R + 0x1008) && unwinder_finds(R + 0x1000 + 16 * (N - 1) + 8),
	      "libgcc finds blobs with personalities");
	ju_blob more = good(0x200, 16, "one-personality-too-many");
	more.personality = R + 0x8000 + N;
	rc = ju_publish(ctx, &more);
	CHECK(rc == JU_ERANGE && strstr(ju_errmsg(), "at most 256"), "personality %d: %d (%s)", N + 1, rc,
	      ju_errmsg());
	more.personality = R + 0x8000 + 1; /* a pair already known: fine */
	more.lsda = R + 0xf100;
	CHECK_RC(ju_publish(ctx, &more), 0);
	CHECK_RC(ju_unpublish(ctx, R + 0x200), 0);
	for (size_t i = 0; i < N; i++)
		CHECK_RC(ju_unpublish(ctx, R + 0x1000 + 16 * i), 0);
	/* the pairs are the context's for its life: still full */
	more.personality = R + 0x8000 + N;
	more.lsda = NULL;
	expect_refused(&more, JU_ERANGE, "distinct personality routines", "a new pair after unpublishing");
}

static void unpublishing(void)
{
	CHECK_RC(ju_unpublish(ctx, R + 0x200), JU_ENOENT);
	CHECK(strstr(ju_errmsg(), "never published"), "message: %s", ju_errmsg());
	CHECK_RC(ju_unpublish(ctx, R + 0x104), JU_ENOENT); /* inside a blob, not its start */
	CHECK_RC(ju_unpublish(ctx, NULL), JU_ENOENT);
	ju_blob b = good(0x200, 16, "twice");
	CHECK_RC(ju_publish(ctx, &b), 0);
	CHECK_RC(ju_unpublish(ctx, b.start), 0);
	CHECK_RC(ju_unpublish(ctx, b.start), JU_ENOENT);
	CHECK(!unwinder_finds(b.start), "libgcc still finds an unpublished blob");
	anchors_intact("unpublishing twice");
}

static void closing(void)
{
	CHECK_RC(ju_close(ctx), JU_EBUSY);
	CHECK(strstr(ju_errmsg(), "2 blobs are still published"), "message: %s", ju_errmsg());
	anchors_intact("close while busy");
	CHECK_RC(ju_unpublish_all(ctx), 0);
	CHECK(ju_count(ctx) == 0, "count after unpublish_all");
	CHECK(!unwinder_finds(R + 0x108) && !unwinder_finds(R + 0x908),
	      "libgcc still finds blobs after unpublish_all");
	CHECK_RC(ju_close(ctx), 0);
	CHECK_RC(ju_close(NULL), 0);
}

static void null_context(void)
{
	ju_blob b = good(0x200, 16, "x");
	CHECK_RC(ju_publish(NULL, &b), JU_EINVAL);
	CHECK_RC(ju_publish_batch(NULL, &b, 1), JU_EINVAL);
	CHECK_RC(ju_unpublish(NULL, R), JU_EINVAL);
	CHECK_RC(ju_unpublish_all(NULL), JU_EINVAL);
	CHECK_RC(ju_after_fork(NULL), JU_EINVAL);
	CHECK(ju_count(NULL) == 0 && ju_channels(NULL) == 0, "NULL context queries");
	CHECK_RC(ju_open(NULL, NULL), JU_EINVAL);
}

static void opening(void)
{
	ju_ctx *c = (ju_ctx *)1;
	ju_options o = { .sz = sizeof(ju_options), .channels = 1u << 9 };
	CHECK_RC(ju_open(&o, &c), JU_EINVAL);
	CHECK(c == NULL, "out not cleared on failure");
	const char *bad_env[] = { "bogus", "gdb,", "unwinder,,gdb", "ALL" };
	for (int i = 0; i < 4; i++) {
		setenv("JITUNWIND", bad_env[i], 1);
		CHECK_RC(ju_open(NULL, &c), JU_EENV);
		CHECK(strstr(ju_errmsg(), "JITUNWIND"), "message: %s", ju_errmsg());
	}
	/* set but empty is the same as unset: the options choose */
	setenv("JITUNWIND", "", 1);
	o = (ju_options){ .sz = sizeof(ju_options), .channels = JU_CH_UNWINDER };
	CHECK_RC(ju_open(&o, &c), 0);
	CHECK(ju_channels(c) == JU_CH_UNWINDER, "JITUNWIND=\"\": channels %#x, want the options' %#x",
	      ju_channels(c), JU_CH_UNWINDER);
	CHECK_RC(ju_close(c), 0);
	setenv("JITUNWIND", "bogus", 1);
	/* flag bits this version does not know */
	o = (ju_options){ .sz = sizeof(ju_options), .flags = JU_OPT_NO_ENV | 1u << 7 };
	CHECK_RC(ju_open(&o, &c), JU_EINVAL);
	CHECK(strstr(ju_errmsg(), "unknown flag bits 0x80"), "message: %s", ju_errmsg());
	/* JU_OPT_NO_ENV ignores it */
	o = (ju_options){ .sz = sizeof(ju_options), .channels = JU_CH_UNWINDER, .flags = JU_OPT_NO_ENV };
	CHECK_RC(ju_open(&o, &c), 0);
	CHECK(ju_channels(c) == JU_CH_UNWINDER, "channels %#x", ju_channels(c));
	CHECK_RC(ju_close(c), 0);
	/* nongnu libunwind is not loaded in this program: asked for by name,
	 * its channel is an error; as part of a group (the default, "all") it
	 * is just off. */
	setenv("JITUNWIND", "libunwind", 1);
	CHECK_RC(ju_open(NULL, &c), JU_ENOCONSUMER);
	CHECK(strstr(ju_errmsg(), "libunwind"), "message: %s", ju_errmsg());
	unsetenv("JITUNWIND");
	o = (ju_options){ .sz = sizeof(ju_options), .channels = JU_CH_LIBUNWIND };
	CHECK_RC(ju_open(&o, &c), JU_ENOCONSUMER);
	o = (ju_options){ .sz = sizeof(ju_options), .channels = JU_CH_ALL, .flags = JU_OPT_STRICT };
	CHECK_RC(ju_open(&o, &c), JU_ENOCONSUMER);
	CHECK_RC(ju_open(NULL, &c), 0);
	CHECK(!(ju_channels(c) & JU_CH_LIBUNWIND) && (ju_channels(c) & JU_CH_UNWINDER),
	      "default channels %#x", ju_channels(c));
	CHECK_RC(ju_close(c), 0);
	setenv("JITUNWIND", "none", 1);
	CHECK_RC(ju_open(NULL, &c), 0);
	CHECK(ju_channels(c) == 0, "none: channels %#x", ju_channels(c));
	ju_blob b = good(0x200, 16, "none");
	CHECK_RC(ju_publish(c, &b), 0); /* still tracked, published nowhere */
	CHECK(!unwinder_finds(b.start), "JITUNWIND=none registered with libgcc");
	CHECK_RC(ju_unpublish(c, b.start), 0);
	CHECK_RC(ju_close(c), 0);
	unsetenv("JITUNWIND");
}

static void strings(void)
{
	for (int e = 0; e >= JU_EENV; e--) {
		const char *s = ju_strerror(e);
		CHECK(s && *s && strcmp(s, "unknown error"), "ju_strerror(%d) = %s", e, s);
		for (int f = e + 1; f <= 0; f++)
			CHECK(strcmp(s, ju_strerror(f)), "codes %d and %d share a string", e, f);
	}
	CHECK(!strcmp(ju_strerror(-999), "unknown error"), "unknown code");
	CHECK(ju_channel_name(JU_CH_GDB) && !strcmp(ju_channel_name(JU_CH_GDB), "gdb"), "name");
	CHECK(ju_channel_name(3) == NULL, "two bits have no single name");
}

int main(void)
{
	void *gcc = dlopen("libgcc_s.so.1", RTLD_NOW);
	find_fde = gcc ? (const void *(*)(void *, void *))dlsym(gcc, "_Unwind_Find_FDE") : NULL;
	if (!find_fde)
		UNIT_SKIP("libgcc_s.so.1 or its _Unwind_Find_FDE is not available");
	R = mmap(NULL, 1 << 16, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsetenv("JITUNWIND");
	null_context();
	opening();
	strings();
	ju_options o = { .sz = sizeof(ju_options), .channels = JU_CH_UNWINDER, .flags = JU_OPT_NO_ENV };
	CHECK_RC(ju_open(&o, &ctx), 0);
	ju_blob anchors[2] = { good(0x100, 16, "anchor1"), good(0x900, 16, "anchor2") };
	CHECK_RC(ju_publish_batch(ctx, anchors, 2), 0);
	anchors_intact("setup");
	ranges();
	overlap_with_another_context();
	names();
	frames();
	lines();
	personalities();
	unpublishing();
	closing();
	return unit_done("test-bad-input");
}
