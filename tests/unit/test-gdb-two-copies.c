/* SPDX-License-Identifier: MIT */
/* test-gdb-two-copies.c - two copies of jitunwind in one process: this
 * program links libjitunwind.a (copy A, exporting only the two GDB symbols)
 * and dlopens libjitunwind.so (copy B, RTLD_LOCAL), as happens when two
 * libraries each bring their own.  The dynamic linker binds B's references to
 * A's descriptor; B must notice that it is a jitunwind descriptor and share
 * it, extension and all, with the sequence lock serialising the two copies'
 * writers (their mutexes know nothing of each other).
 *
 *   the_second_copy_shares_the_first_copys_descriptor
 *   two_copies_publishing_at_once_keep_the_list_whole
 *       both copies churn from their own threads while a reader follows the
 *       protocol; every validated snapshot must be whole, and at the end the
 *       list is empty and n_entries is 0 (a lost update would show).
 */
#include "test-gdb-reader.h"

#include <dlfcn.h>
#include <sys/mman.h>

extern gdbjit_descriptor __jit_debug_descriptor; /* copy A's, in this program */

/* The API of one copy. */
typedef struct api {
	int (*open)(const ju_options *, ju_ctx **);
	int (*close)(ju_ctx *);
	int (*publish_batch)(ju_ctx *, const ju_blob *, size_t);
	int (*unpublish)(ju_ctx *, const void *);
	int (*unpublish_all)(ju_ctx *);
} api;

static api copy_a = { ju_open, ju_close, ju_publish_batch, ju_unpublish, ju_unpublish_all };
static api copy_b;
static void *lib_b;

static char b_log[512];

static void log_b(void *arg, int level, const char *msg)
{
	(void)arg;
	(void)level;
	if (strstr(msg, "gdb channel"))
		snprintf(b_log, sizeof b_log, "%s", msg);
}

static bool load_copy_b(void)
{
	lib_b = dlopen(JU_SO_PATH, RTLD_NOW | RTLD_LOCAL);
	if (!lib_b)
		return false;
	copy_b.open = (int (*)(const ju_options *, ju_ctx **))dlsym(lib_b, "ju_open");
	copy_b.close = (int (*)(ju_ctx *))dlsym(lib_b, "ju_close");
	copy_b.publish_batch = (int (*)(ju_ctx *, const ju_blob *, size_t))dlsym(lib_b, "ju_publish_batch");
	copy_b.unpublish = (int (*)(ju_ctx *, const void *))dlsym(lib_b, "ju_unpublish");
	copy_b.unpublish_all = (int (*)(ju_ctx *))dlsym(lib_b, "ju_unpublish_all");
	return copy_b.open && copy_b.close && copy_b.publish_batch && copy_b.unpublish &&
	       copy_b.unpublish_all;
}

static void the_second_copy_shares_the_first_copys_descriptor(void)
{
	CHECK((void *)copy_b.open != (void *)ju_open, "copy B is a distinct copy");
	ju_options o = {
		.sz = sizeof(ju_options), .channels = JU_CH_GDB, .flags = JU_OPT_NO_ENV, .log = log_b
	};
	ju_ctx *ctx = NULL;
	CHECK_RC(copy_b.open(&o, &ctx), 0);
	CHECK(strstr(b_log, "shared") != NULL, "copy B says: \"%s\"", b_log);
	if (!ctx)
		return;
	uint64_t seq = __jit_debug_descriptor.seq;
	ju_blob b;
	blob_buf bb;
	b = make_blob(3000, &bb);
	CHECK_RC(copy_b.publish_batch(ctx, &b, 1), 0);
	CHECK(__jit_debug_descriptor.seq == seq + 2 && __jit_debug_descriptor.n_entries == 1,
	      "copy B's change is on copy A's descriptor: seq %" PRIu64 ", n_entries %" PRIu64,
	      __jit_debug_descriptor.seq, __jit_debug_descriptor.n_entries);
	CHECK_RC(copy_b.unpublish_all(ctx), 0);
	CHECK_RC(copy_b.close(ctx), 0);
	const gdbjit_descriptor *own_b = dlsym(lib_b, GDBJIT_DESCRIPTOR_SYMBOL);
	CHECK(own_b && own_b != &__jit_debug_descriptor && own_b->seq == 0 && own_b->first_entry == 0,
	      "copy B's own descriptor is unused");
}

/* Random publishes and unpublishes in slots [lo, hi) for `secs`. */
typedef struct writer {
	const api *api;
	size_t lo, hi;
	unsigned seed;
	double secs;
	unsigned long changes, errors;
} writer;

static void *writer_thread(void *arg)
{
	writer *w = arg;
	ju_options o = { .sz = sizeof(ju_options), .channels = JU_CH_GDB, .flags = JU_OPT_NO_ENV };
	ju_ctx *ctx = NULL;
	if (w->api->open(&o, &ctx)) {
		w->errors++;
		return NULL;
	}
	static _Thread_local bool live[N_SLOTS];
	uint64_t end = now_ns() + (uint64_t)(w->secs * 1e9);
	unsigned seed = w->seed;
	while (now_ns() < end) {
		seed = seed * 1103515245u + 12345u;
		size_t s = w->lo + (seed >> 8) % (w->hi - w->lo);
		if (live[s]) {
			w->errors += w->api->unpublish(ctx, region + s * SLOT) != 0;
			live[s] = false;
		} else {
			blob_buf bb;
			ju_blob b = make_blob(s, &bb);
			w->errors += w->api->publish_batch(ctx, &b, 1) != 0;
			live[s] = true;
		}
		w->changes++;
	}
	w->errors += w->api->unpublish_all(ctx) != 0;
	w->errors += w->api->close(ctx) != 0;
	return NULL;
}

static void two_copies_publishing_at_once_keep_the_list_whole(void)
{
	static atomic_int stop;
	reader r = { .pid = getpid(), .desc = (uintptr_t)&__jit_debug_descriptor };
	void *args[2] = { &r, (void *)&stop };
	writer wa = { &copy_a, 0, N_SLOTS / 2, 1, 1.0, 0, 0 };
	writer wb = { &copy_b, N_SLOTS / 2, N_SLOTS, 2, 1.0, 0, 0 };
	pthread_t tr, ta, tb;
	if (pthread_create(&tr, NULL, reader_thread, args)) {
		CHECK(0, "pthread_create");
		return;
	}
	pthread_create(&ta, NULL, writer_thread, &wa);
	pthread_create(&tb, NULL, writer_thread, &wb);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	stop = 1;
	pthread_join(tr, NULL);
	printf("copy A made %lu changes, copy B %lu\n", wa.changes, wb.changes);
	CHECK(wa.errors == 0 && wb.errors == 0, "library errors: A %lu, B %lu", wa.errors, wb.errors);
	CHECK(wa.changes >= 100 && wb.changes >= 100, "too few changes: A %lu, B %lu", wa.changes,
	      wb.changes);
	report_reader("reader of two copies", &r);
	free(r.img);
	const gdbjit_descriptor *d = &__jit_debug_descriptor;
	CHECK(d->first_entry == 0 && d->n_entries == 0 && d->seq % 2 == 0,
	      "at the end: first_entry %#" PRIx64 ", n_entries %" PRIu64 ", seq %" PRIu64, d->first_entry,
	      d->n_entries, d->seq);
}

int main(void)
{
	elf_version(EV_CURRENT);
	region = mmap(NULL, REGION_SIZE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED)
		UNIT_SKIP("cannot reserve address space");
	struct iovec l = { &l, 1 }, r = { &l, 1 };
	if (process_vm_readv(getpid(), &l, 1, &r, 1, 0) != 1)
		UNIT_SKIP("process_vm_readv is not permitted here");
	if (!load_copy_b())
		UNIT_SKIP("cannot load %s: %s", JU_SO_PATH, dlerror());
	the_second_copy_shares_the_first_copys_descriptor();
	two_copies_publishing_at_once_keep_the_list_whole();
	return unit_done("test-gdb-two-copies");
}
