/* SPDX-License-Identifier: MIT */
/* test-gdb-foreign-descriptor.c - a host that already has a JIT (as a program
 * linking LLVM's does) defines __jit_debug_descriptor and
 * __jit_debug_register_code itself; this program, linked with
 * libjitunwind.so, is that host.
 *
 *   the_hosts_descriptor_wins_and_is_not_written_past
 *       the dynamic linker binds the library's references to the host's
 *       symbols: our entries appear on the host's list, the host's function
 *       is called, the library's own descriptor stays untouched, and the
 *       bytes right after the host's 24-byte descriptor -- made to look
 *       exactly like our extension, to tempt a writer that trusts a magic
 *       number -- are never written; the library's entries hang behind an
 *       anchor entry of its own at the tail of the host's list.
 */
#include "test-gdb-reader.h"

#include <dlfcn.h>
#include <sys/mman.h>

/* The standard descriptor only (GDB manual), followed by bait. */
struct host_area {
	struct {
		uint32_t version, action_flag;
		uint64_t relevant_entry, first_entry;
	} d;
	uint8_t bait[sizeof(gdbjit_descriptor) - GDBJIT_STD_DESCRIPTOR_SIZE + 32];
};
_Static_assert(sizeof(((struct host_area *)0)->d) == GDBJIT_STD_DESCRIPTOR_SIZE, "standard size");

__attribute__((visibility("default"), used)) struct host_area host_area = { .d = { .version = 1 } };

/* The symbol is the first 24 bytes of host_area, and says so in its size. */
__asm__(".globl __jit_debug_descriptor\n"
	".type __jit_debug_descriptor, @object\n"
	".set __jit_debug_descriptor, host_area\n"
	".size __jit_debug_descriptor, 24\n");

static unsigned long host_calls;

__attribute__((visibility("default"), noinline)) void __jit_debug_register_code(void)
{
	host_calls++;
}

static size_t host_list_length(void)
{
	size_t n = 0;
	for (uint64_t p = host_area.d.first_entry; p && n < MAX_ENTRIES;
	     p = ((gdbjit_entry *)(uintptr_t)p)->next_entry)
		n++;
	return n;
}

/* Bait: a complete, valid-looking extension header. */
static void lay_bait(uint8_t *bait)
{
	gdbjit_descriptor fake = {
		.magic = { 'J', 'I', 'T', 'U', 'N', 'W', 'N', 'D' },
		.ext_version = GDBJIT_EXT_VERSION,
		.sizeof_descriptor = sizeof(gdbjit_descriptor),
		.sizeof_entry = sizeof(gdbjit_entry),
		.seq = 1000,
	};
	memset(bait, 0xa5, sizeof host_area.bait);
	memcpy(bait, (uint8_t *)&fake + GDBJIT_STD_DESCRIPTOR_SIZE,
	       sizeof(gdbjit_descriptor) - GDBJIT_STD_DESCRIPTOR_SIZE);
}

static void the_hosts_descriptor_wins_and_is_not_written_past(void)
{
	uint8_t want[sizeof host_area.bait];
	lay_bait(want);
	memcpy(host_area.bait, want, sizeof want);

	void *lib = dlopen("libjitunwind.so.0", RTLD_NOW | RTLD_NOLOAD);
	const gdbjit_descriptor *own = lib ? dlsym(lib, GDBJIT_DESCRIPTOR_SYMBOL) : NULL;
	CHECK(own && (const void *)own != (const void *)&host_area, "the library's own descriptor");
	if (!own)
		return;
	gdbjit_descriptor own_before = *own;

	ju_ctx *ctx = open_gdb_only();
	if (!ctx)
		return;
	/* Opening links the library's anchor, an empty image, at the tail; its
	 * entries go behind it, where the host's writer never writes. */
	CHECK(host_list_length() == 1 && host_calls == 1, "after open: host list %zu, calls %lu",
	      host_list_length(), host_calls);
	const gdbjit_entry *anchor = (const gdbjit_entry *)(uintptr_t)host_area.d.first_entry;
	CHECK(anchor && anchor->symfile_size >= sizeof(Elf64_Ehdr) &&
		      !memcmp((const void *)(uintptr_t)anchor->symfile_addr, ELFMAG, SELFMAG),
	      "the anchor's image is not an ELF file");
	size_t a[3] = { 10, 12, 14 }, b[1] = { 11 }, c[2] = { 3000, 3001 };
	CHECK_RC(publish_slots(ctx, a, 3), 0);
	CHECK(host_list_length() == 2 && host_calls == 2, "host list %zu, calls %lu", host_list_length(),
	      host_calls);
	const gdbjit_entry *e = anchor ? (const gdbjit_entry *)(uintptr_t)anchor->next_entry : NULL;
	CHECK(host_area.d.action_flag == GDBJIT_REGISTER_FN && e &&
		      host_area.d.relevant_entry == (uintptr_t)e,
	      "the standard fields are maintained");
	if (e) {
		char why[160] = "";
		long n = check_image((const uint8_t *)(uintptr_t)e->symfile_addr, e->symfile_size,
				     e->symfile_addr, e->code_lo, e->code_hi, why, sizeof why);
		CHECK(n == 3, "our image on the host's list: %ld symbols, %s", n, why);
	}
	CHECK_RC(publish_slots(ctx, b, 1), 0);
	CHECK_RC(publish_slots(ctx, c, 2), 0);
	CHECK(host_list_length() == 3 && host_calls == 5, "host list %zu, calls %lu", host_list_length(),
	      host_calls);
	CHECK_RC(ju_unpublish(ctx, region + 3000 * SLOT), 0);
	CHECK_RC(ju_unpublish_all(ctx), 0);
	CHECK(host_list_length() == 1 && host_area.d.first_entry == (uintptr_t)anchor,
	      "at the end the host list holds only the anchor (%zu entries)", host_list_length());
	CHECK(host_area.d.action_flag == GDBJIT_UNREGISTER_FN, "action %u", host_area.d.action_flag);
	CHECK_RC(ju_close(ctx), 0);

	CHECK(!memcmp(host_area.bait, want, sizeof want), "bytes past the host's descriptor were written");
	CHECK(!memcmp(own, &own_before, sizeof own_before), "the library's own descriptor was written");
	CHECK(own->first_entry == 0 && own->seq == 0, "the library's own descriptor was used");
	dlclose(lib);
}

int main(void)
{
	elf_version(EV_CURRENT);
	region = mmap(NULL, REGION_SIZE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED)
		UNIT_SKIP("cannot reserve address space");
	the_hosts_descriptor_wins_and_is_not_written_past();
	return unit_done("test-gdb-foreign-descriptor");
}
