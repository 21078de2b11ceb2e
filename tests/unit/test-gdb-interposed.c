/* SPDX-License-Identifier: MIT */
/* test-gdb-interposed.c - plays the debugger: this program (linked with
 * libjitunwind.so) defines its own __jit_debug_register_code, which the
 * library's call binds to exactly as gdb's breakpoint would catch it, and
 * checks what a debugger sees at each stop.
 *
 *   each_stop_is_one_action_as_the_gdb_manual_says
 *       every call has action_flag and relevant_entry set; a registered
 *       entry is on the list, an unregistered one is not; a swap registers
 *       the new images before it unregisters the old ones; one call per
 *       entry; the list is consistent at every stop.
 *   seq_is_odd_while_a_debugger_is_stopped_in_a_change
 *       the sequence lock covers the whole change, so an outside reader
 *       retries while a debugger holds the process in the middle of one.
 *   readers_never_see_a_torn_list_under_a_slow_debugger
 *       the callback spins for a while (a debugger reading the image), and
 *       a reader thread must still never validate a torn snapshot.
 */
#include "test-gdb-reader.h"

#include <dlfcn.h>
#include <sys/mman.h>

static gdbjit_descriptor *D; /* the library's descriptor, via dlsym */

/* What the "debugger" saw. */
enum { MAX_STOPS = 64 };
static struct stop {
	uint32_t action;
	uint64_t entry;
	bool on_list;
	bool seq_odd;
	size_t list_len;
} stops[MAX_STOPS];
static _Atomic size_t n_stops;
static atomic_int record = 1;
static _Atomic uint64_t slow_ns;
static atomic_ulong even_stops, total_stops;

static bool on_list(uint64_t e, size_t *len)
{
	size_t n = 0;
	bool found = false;
	for (uint64_t p = D->first_entry; p && n < MAX_ENTRIES;
	     p = ((gdbjit_entry *)(uintptr_t)p)->next_entry) {
		found |= p == e;
		n++;
	}
	*len = n;
	return found;
}

__attribute__((visibility("default"), noinline)) void __jit_debug_register_code(void)
{
	total_stops++;
	bool odd = D->seq & 1;
	if (!odd)
		even_stops++;
	if (record && n_stops < MAX_STOPS) {
		struct stop *s = &stops[n_stops++];
		s->action = D->action_flag;
		s->entry = D->relevant_entry;
		s->seq_odd = odd;
		s->on_list = on_list(s->entry, &s->list_len);
	}
	if (slow_ns) {
		uint64_t until = now_ns() + slow_ns;
		while (now_ns() < until)
			;
	}
}

static void each_stop_is_one_action_as_the_gdb_manual_says(void)
{
	ju_ctx *ctx = open_gdb_only();
	if (!ctx)
		return;
	n_stops = 0;
	size_t a[3] = { 10, 12, 14 };
	CHECK_RC(publish_slots(ctx, a, 3), 0);
	CHECK(n_stops == 1, "%zu stops for one new arena", (size_t)n_stops);
	CHECK(stops[0].action == GDBJIT_REGISTER_FN && stops[0].on_list && stops[0].list_len == 1,
	      "register: action %u, on list %d, list %zu", stops[0].action, stops[0].on_list,
	      stops[0].list_len);
	uint64_t first = stops[0].entry;
	CHECK(first == D->first_entry, "relevant_entry is the new head");

	/* A blob inside the arena's hull: the arena is rebuilt, so one register
	 * (the new image) and then one unregister (the old one). */
	n_stops = 0;
	size_t b[1] = { 11 };
	CHECK_RC(publish_slots(ctx, b, 1), 0);
	CHECK(n_stops == 2, "%zu stops for a rebuilt arena", (size_t)n_stops);
	CHECK(stops[0].action == GDBJIT_REGISTER_FN && stops[0].on_list && stops[0].list_len == 2,
	      "new image first, both listed: action %u, list %zu", stops[0].action, stops[0].list_len);
	CHECK(stops[1].action == GDBJIT_UNREGISTER_FN && stops[1].entry == first && !stops[1].on_list &&
		      stops[1].list_len == 1,
	      "then the old one goes: action %u, on list %d, list %zu", stops[1].action, stops[1].on_list,
	      stops[1].list_len);

	/* Far away: a second entry; then everything goes, one stop each. */
	size_t c[2] = { 3000, 3001 };
	CHECK_RC(publish_slots(ctx, c, 2), 0);
	n_stops = 0;
	CHECK_RC(ju_unpublish_all(ctx), 0);
	CHECK(n_stops == 2, "%zu stops unpublishing two arenas", (size_t)n_stops);
	for (size_t i = 0; i < n_stops && i < 2; i++)
		CHECK(stops[i].action == GDBJIT_UNREGISTER_FN && !stops[i].on_list &&
			      stops[i].list_len == 1 - i,
		      "stop %zu: action %u, list %zu", i, stops[i].action, stops[i].list_len);
	CHECK(D->first_entry == 0, "list empty");
	CHECK_RC(ju_close(ctx), 0);
}

static void seq_is_odd_while_a_debugger_is_stopped_in_a_change(void)
{
	CHECK(total_stops > 0, "the library never called our __jit_debug_register_code");
	CHECK(even_stops == 0, "%lu of %lu stops saw an even seq", (unsigned long)even_stops,
	      (unsigned long)total_stops);
}

static void readers_never_see_a_torn_list_under_a_slow_debugger(void)
{
	record = 0;
	slow_ns = 20000; /* 20 us per stop */
	static atomic_int stop;
	reader r = { .pid = getpid(), .desc = (uintptr_t)D };
	void *args[2] = { &r, (void *)&stop };
	pthread_t t;
	if (pthread_create(&t, NULL, reader_thread, args)) {
		CHECK(0, "pthread_create");
		return;
	}
	unsigned long changes = churn(1.0, 3);
	stop = 1;
	pthread_join(t, NULL);
	slow_ns = 0;
	printf("slow debugger: writer made %lu changes\n", changes);
	CHECK(changes >= 100, "the writer made only %lu changes", changes);
	report_reader("reader under a slow debugger", &r);
	free(r.img);
	seq_is_odd_while_a_debugger_is_stopped_in_a_change();
}

int main(void)
{
	elf_version(EV_CURRENT);
	D = dlsym(RTLD_DEFAULT, GDBJIT_DESCRIPTOR_SYMBOL);
	if (!D)
		UNIT_SKIP("no %s in the process", GDBJIT_DESCRIPTOR_SYMBOL);
	region = mmap(NULL, REGION_SIZE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED)
		UNIT_SKIP("cannot reserve address space");
	struct iovec l = { &l, 1 }, r = { &l, 1 };
	if (process_vm_readv(getpid(), &l, 1, &r, 1, 0) != 1)
		UNIT_SKIP("process_vm_readv is not permitted here");
	CHECK(!memcmp(D->magic, GDBJIT_EXT_MAGIC, GDBJIT_EXT_MAGIC_LEN),
	      "the library's descriptor has no extension");

	each_stop_is_one_action_as_the_gdb_manual_says();
	seq_is_odd_while_a_debugger_is_stopped_in_a_change();
	readers_never_see_a_torn_list_under_a_slow_debugger();
	return unit_done("test-gdb-interposed");
}
