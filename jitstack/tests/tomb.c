/* SPDX-License-Identifier: MIT */
/* tomb.c - unpublished code that is still in its arena's image.
 *
 * Publishes 100 blobs in one batch (one arena, one image), then
 * unpublishes leaf:7.  With more than 64 blobs left the arena is not
 * rebuilt: leaf:7's FDE is tombstoned in place (pc_range 0) and its symbol
 * stays (docs/OUTSIDE_READER.md, "Who owns an image").  A reader must treat
 * leaf:7 as absent.  Prints "ready PID" and waits.
 */
#include "jitunwind.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum { N = 100, SLOT = 32 };

int main(void)
{
	uint8_t *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED)
		return 2;
	memset(code, 0xc3, N * SLOT); /* ret */
	ju_blob b[N];
	static char names[N][24];
	for (int i = 0; i < N; i++) {
		snprintf(names[i], sizeof names[i], "leaf:%d", i);
		b[i] = (ju_blob){ .sz = sizeof(ju_blob),
				  .start = code + i * SLOT,
				  .size = SLOT,
				  .name = names[i],
				  .frame = { .kind = JU_FRAME_LEAF } };
	}
	ju_options o = { .sz = sizeof(ju_options), .channels = JU_CH_GDB, .flags = JU_OPT_NO_ENV };
	ju_ctx *ctx;
	if (ju_open(&o, &ctx) || ju_publish_batch(ctx, b, N) || ju_unpublish(ctx, code + 7 * SLOT)) {
		fprintf(stderr, "tomb: %s\n", ju_errmsg());
		return 2;
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (;;)
		pause();
}
