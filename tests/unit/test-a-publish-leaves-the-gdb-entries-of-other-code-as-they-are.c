/* SPDX-License-Identifier: MIT */
/* test-a-publish-leaves-the-gdb-entries-of-other-code-as-they-are.c - code
 * that lies apart, each blob in pages of its own (CPython maps each executor
 * so), has one GDB JIT image per blob (ch_gdb.c: runs).  Publishing a blob
 * merges arenas (arena.c: binary-counter merging) but changes no other
 * blob's image: the list must keep every entry it had, at the same address,
 * with the same image and registration sequence, and gain exactly one entry
 * per new blob, covering it.  gdb and lldb then load only the new images
 * (each entry a debugger is told about is an objfile it builds), and
 * outside readers keep what they copied.
 *
 * Blobs of every frame kind are published, one by one and in batches, at
 * falling addresses (as mmap gives them) and at rising ones.
 */
#include "internal.h"
#include "formats/gdbjit.h"
#include "unit.h"

#include <string.h>
#include <sys/mman.h>

extern gdbjit_descriptor __jit_debug_descriptor;

enum { N = 300, STRIDE = 3 * 4096, MAX_ENTRIES = 4 * N };

typedef struct seen {
	const gdbjit_entry *e;
	uint64_t reg_seq, symfile_addr, symfile_size, code_lo, code_hi;
} seen;

static size_t snapshot(seen *out)
{
	size_t n = 0;
	for (uint64_t p = __jit_debug_descriptor.first_entry; p && n < MAX_ENTRIES;
	     p = ((const gdbjit_entry *)(uintptr_t)p)->next_entry, n++) {
		const gdbjit_entry *e = (const gdbjit_entry *)(uintptr_t)p;
		out[n] = (seen){ e, e->reg_seq, e->symfile_addr, e->symfile_size, e->code_lo, e->code_hi };
	}
	return n;
}

static const uint8_t push_rbx[] = { 0x41, 0x0e, 0x10, 0x83, 0x02, 0x60, 0x0e, 0x08 };
static const uint8_t call[] = { 0x44, 0x0e, 0x10, 0x4c, 0x0e, 0x08 };
static const ju_range epilogue[] = { { 30, 31 } };

static char names[N][32];
static ju_cfi_range ranges[N][3];

static ju_blob blob(uint8_t *region, size_t i, bool rising)
{
	snprintf(names[i], sizeof names[i], "apart:%zu", i);
	ju_blob b = { .sz = sizeof(ju_blob),
		      .start = rising ? region + i * STRIDE : region + (N - 1 - i) * STRIDE,
		      .size = 32,
		      .name = names[i] };
	switch (i % 4) {
	case 0: /* a cold exit: trampoline, a stencil, _FATAL_ERROR */
		ranges[i][0] = (ju_cfi_range){ 0, 16, NULL, 0 };
		ranges[i][1] = (ju_cfi_range){ 16, 64, push_rbx, sizeof push_rbx };
		ranges[i][2] = (ju_cfi_range){ 64, 96, call, sizeof call };
		b.size = 96;
		b.frame = (ju_frame){ .kind = JU_FRAME_CFI, .u.cfi = { ranges[i], 3 } };
		break;
	case 1: b.frame = (ju_frame){ .kind = JU_FRAME_FP, .u.fp = { 1, 4, epilogue, 1 } }; break;
	case 2: b.frame = (ju_frame){ .kind = JU_FRAME_REGION, .u.region = { 16, -16, -8 } }; break;
	default: b.frame = (ju_frame){ .kind = JU_FRAME_LEAF }; break;
	}
	return b;
}

/* After publishing blobs[0..n): every entry of `before` unchanged, and one
 * new entry per blob, covering exactly it. */
static void check_after(const seen *before, size_t n_before, const ju_blob *b, size_t n, const char *how)
{
	static seen after[MAX_ENTRIES];
	size_t n_after = snapshot(after);
	CHECK(n_after == n_before + n, "%s: %zu entries after publishing %zu blobs, %zu before", how, n_after,
	      n, n_before);
	size_t kept = 0;
	for (size_t i = 0; i < n_before; i++) {
		size_t j = 0;
		while (j < n_after && after[j].e != before[i].e)
			j++;
		bool same = j < n_after && !memcmp(&after[j], &before[i], sizeof after[j]);
		CHECK(same, "%s: the entry of [%#llx, %#llx) was replaced or changed", how,
		      (unsigned long long)before[i].code_lo, (unsigned long long)before[i].code_hi);
		kept += same;
	}
	for (size_t k = 0; k < n; k++) {
		size_t covering = 0;
		for (size_t j = 0; j < n_after; j++)
			covering += after[j].code_lo == (uintptr_t)b[k].start &&
				    after[j].code_hi == (uintptr_t)b[k].start + b[k].size;
		CHECK(covering == 1, "%s: %zu entries cover %s alone", how, covering, b[k].name);
	}
	(void)kept;
}

static void publish_apart(bool rising, size_t batch)
{
	size_t size = (size_t)N * STRIDE;
	uint8_t *region = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (region == MAP_FAILED) {
		CHECK(0, "no address space");
		return;
	}
	ju_options o = { .sz = sizeof o, .channels = JU_CH_GDB | JU_CH_UNWINDER, .flags = JU_OPT_NO_ENV };
	ju_ctx *ctx;
	CHECK_RC(ju_open(&o, &ctx), 0);
	if (!ctx)
		return;
	char how[64];
	snprintf(how, sizeof how, "%s addresses, %zu a call", rising ? "rising" : "falling", batch);
	static seen before[MAX_ENTRIES];
	size_t merges = 0;
	for (size_t i = 0; i < N; i += batch) {
		ju_blob b[8];
		size_t n = 0;
		while (n < batch && i + n < N) {
			b[n] = blob(region, i + n, rising);
			n++;
		}
		size_t n_before = snapshot(before), arenas = ctx->n_arenas;
		CHECK_RC(ju_publish_batch(ctx, b, n), 0);
		merges += ctx->n_arenas <= arenas; /* the new blobs joined arenas that were there */
		check_after(before, n_before, b, n, how);
	}
	/* the case is only one if arenas were merged along the way */
	CHECK(merges > N / 4 / batch, "%s: only %zu publishes merged arenas", how, merges);
	CHECK_RC(ju_unpublish_all(ctx), 0);
	CHECK_RC(ju_close(ctx), 0);
	munmap(region, size);
}

int main(void)
{
	publish_apart(false, 1);
	publish_apart(true, 1);
	publish_apart(false, 5);
	return unit_done("test-a-publish-leaves-the-gdb-entries-of-other-code-as-they-are");
}
