/* SPDX-License-Identifier: MIT */
/* test-gdb-copy-relocation.c - a program that refers to
 * __jit_debug_descriptor directly (as a debugger helper or a profiler agent
 * might) gets a copy relocation: the dynamic linker copies the library's
 * descriptor into the executable and binds every reference, the library's
 * included, to the copy.
 *
 *   a_copy_relocated_descriptor_keeps_the_extension
 *       the library recognises the copy as a jitunwind descriptor, keeps the
 *       extension up to date in it, and leaves its own original untouched.
 *
 * With "trap" as argument it publishes one blob, prints its address and
 * traps, for t-gdb-reads-a-copy-relocated-descriptor.sh.
 */
#include "test-gdb-reader.h"

#include <dlfcn.h>
#include <sys/mman.h>

extern gdbjit_descriptor __jit_debug_descriptor;

static char gdb_log[512];

static void log_gdb(void *arg, int level, const char *msg)
{
	(void)arg;
	(void)level;
	if (strstr(msg, "gdb channel"))
		snprintf(gdb_log, sizeof gdb_log, "%s", msg);
}

static void a_copy_relocated_descriptor_keeps_the_extension(void)
{
	void *lib = dlopen("libjitunwind.so.0", RTLD_NOW | RTLD_NOLOAD);
	const gdbjit_descriptor *orig = lib ? dlsym(lib, GDBJIT_DESCRIPTOR_SYMBOL) : NULL;
	CHECK(orig != NULL, "the library's own descriptor");
	if (!orig)
		return;
	if (orig == &__jit_debug_descriptor)
		UNIT_SKIP("this compiler reached the descriptor through the GOT: no copy relocation");
	ju_options o = {
		.sz = sizeof(ju_options), .channels = JU_CH_GDB, .flags = JU_OPT_NO_ENV, .log = log_gdb
	};
	ju_ctx *ctx = NULL;
	CHECK_RC(ju_open(&o, &ctx), 0);
	if (!ctx)
		return;
	CHECK(strstr(gdb_log, "shared") != NULL, "the library says: \"%s\"", gdb_log);
	size_t a[2] = { 1, 2 };
	CHECK_RC(publish_slots(ctx, a, 2), 0);
	const gdbjit_descriptor *d = &__jit_debug_descriptor;
	CHECK(d->seq == 2 && d->n_entries == 1 && d->first_entry != 0,
	      "the copy: seq %" PRIu64 ", n_entries %" PRIu64, d->seq, d->n_entries);
	CHECK(orig->seq == 0 && orig->first_entry == 0 && orig->n_entries == 0, "the original was written");
	CHECK_RC(ju_unpublish_all(ctx), 0);
	CHECK_RC(ju_close(ctx), 0);
	CHECK(d->first_entry == 0 && d->reclaim_seq == d->seq,
	      "after close: reclaim %" PRIu64 ", seq %" PRIu64, d->reclaim_seq, d->seq);
	dlclose(lib);
}

int main(int argc, char **argv)
{
	elf_version(EV_CURRENT);
	region = mmap(NULL, REGION_SIZE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED)
		UNIT_SKIP("cannot reserve address space");
	if (argc > 1 && !strcmp(argv[1], "trap")) {
		ju_ctx *ctx = open_gdb_only();
		size_t a[1] = { 7 };
		if (!ctx || publish_slots(ctx, a, 1))
			return 2;
		printf("blob %p b%x_%x\n", (void *)(region + 7 * SLOT), 7 * SLOT, slot_size(7));
		fflush(stdout);
		__builtin_trap();
	}
	a_copy_relocated_descriptor_keeps_the_extension();
	return unit_done("test-gdb-copy-relocation");
}
