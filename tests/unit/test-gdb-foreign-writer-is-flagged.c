/* SPDX-License-Identifier: MIT */
/* test-gdb-foreign-writer-is-flagged.c - the library's own descriptor, and
 * a second JIT whose references the dynamic linker bound to it (this program
 * links libjitunwind.so and tests/second_jit.c built to define no descriptor
 * of its own): that JIT links its entries with plain stores under its own
 * lock and never takes the sequence lock.
 *
 *   a_writer_outside_the_sequence_lock_is_flagged
 *       at the library's next change the list holds more entries than
 *       n_entries says; the library sets GDBJIT_FLAG_FOREIGN_WRITER in the
 *       descriptor (outside readers then read the list as without the
 *       extension) and logs it once.
 */
#include "test-gdb-reader.h"
#include "second_jit.h"

#include <dlfcn.h>
#include <sys/mman.h>

static int warnings;

static void on_log(void *arg, int level, const char *msg)
{
	(void)arg;
	if (level == JU_LOG_WARN && strstr(msg, "without its sequence lock"))
		warnings++;
}

static void a_writer_outside_the_sequence_lock_is_flagged(void)
{
	gdbjit_descriptor *d = dlsym(RTLD_DEFAULT, GDBJIT_DESCRIPTOR_SYMBOL);
	CHECK(d && !memcmp(d->magic, GDBJIT_EXT_MAGIC, GDBJIT_EXT_MAGIC_LEN), "the library's descriptor");
	if (!d)
		return;
	ju_options o = {
		.sz = sizeof(ju_options), .channels = JU_CH_GDB, .flags = JU_OPT_NO_ENV, .log = on_log
	};
	ju_ctx *ctx = NULL;
	CHECK_RC(ju_open(&o, &ctx), 0);
	if (!ctx)
		return;
	size_t a[1] = { 10 }, b[1] = { 200 };
	CHECK_RC(publish_slots(ctx, a, 1), 0);
	CHECK(!(d->flags & GDBJIT_FLAG_FOREIGN_WRITER), "flagged with only the library writing");
	second_fn f = { .code = region + 100 * SLOT, .size = 16, .name = "orc:one" };
	CHECK(second_jit_register(&f) == 0, "the second JIT registers");
	CHECK(d->n_entries == 1 && second_jit_list_length() == 2, "n_entries %llu, list %zu",
	      (unsigned long long)d->n_entries, second_jit_list_length());
	CHECK_RC(publish_slots(ctx, b, 1), 0);
	CHECK(d->flags & GDBJIT_FLAG_FOREIGN_WRITER, "flags %#x: the foreign writer is not flagged",
	      d->flags);
	CHECK(warnings == 1, "%d warnings, want one", warnings);
	size_t c[1] = { 300 };
	CHECK_RC(publish_slots(ctx, c, 1), 0);
	CHECK(warnings == 1, "%d warnings after another change, want still one", warnings);
	second_jit_unregister(&f);
	CHECK_RC(ju_unpublish_all(ctx), 0);
	CHECK_RC(ju_close(ctx), 0);
}

int main(void)
{
	elf_version(EV_CURRENT);
	region = mmap(NULL, REGION_SIZE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED)
		UNIT_SKIP("cannot reserve address space");
	a_writer_outside_the_sequence_lock_is_flagged();
	return unit_done("test-gdb-foreign-writer-is-flagged");
}
