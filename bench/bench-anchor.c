/* SPDX-License-Identifier: MIT */
/* bench-anchor.c - the registration CPython's JIT, Julia and LLVM ORC use,
 * measured as the anchor for bench-publish's numbers: one libgcc object
 * per function, __register_frame on a section holding one CIE and one
 * FDE, __deregister_frame when the function dies.
 *
 *   bench-anchor [--max N]
 *       for N = 1k, 10k, 100k, 1M functions (up to --max): the first
 *       lookup after registering them all, a lookup of a random pc
 *       (_Unwind_Find_FDE, what every frame of a backtrace or an exception
 *       costs), and a churn pair (deregister a random function, register it
 *       again) with and without the lookup that brings the new object into
 *       libgcc's sorted list.
 *
 * libgcc 12 keeps objects on a list; the first lookup sorts every object
 * it has not seen and inserts it into a list ordered by address, and every
 * lookup walks that list to the first object starting below the pc, half
 * of it on average.  The functions here are registered from the highest
 * address down, the one order whose first lookup is not quadratic (each
 * newly sorted object then goes to the head of the list); ascending
 * registration made the first lookup of 100k functions take 1.3 s.  The
 * code addresses are in an inaccessible reservation: lookups never read
 * code.
 */
#include "formats/clock.h"
#include "formats/ehframe.h"

#include <dwarf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

/* libgcc_s's registration and lookup (unwind-dw2-fde.c); no header
 * declares them. */
void __register_frame(void *begin);
void __deregister_frame(void *begin);
const void *_Unwind_Find_FDE(void *pc, void *bases);

enum { SLOT = 64, SECTION = 64 };

static uint8_t *R; /* the code reservation */
static uint8_t *S; /* the sections, SECTION bytes each */

/* One CIE and one FDE for [pc, pc + 48) with a frame-pointer rule, then
 * the zero terminator __register_frame wants. */
static void write_section(uint8_t *dst, uint64_t pc)
{
	byte_buf b;
	buf_init(&b, dst, SECTION);
	size_t cie = eh_cie_begin(
		&b, &(eh_cie){ .code_align = 1, .data_align = -8, .ra_reg = 16, .fde_enc = DW_EH_PE_absptr });
	buf_u8(&b, DW_CFA_def_cfa); /* CFA = rsp + 8 at entry */
	buf_uleb(&b, 7);
	buf_uleb(&b, 8);
	buf_u8(&b, DW_CFA_offset | 16); /* return address at CFA - 8 */
	buf_uleb(&b, 1);
	eh_entry_end(&b, cie);
	size_t fde = eh_fde_begin(&b, cie, DW_EH_PE_absptr, 0, pc, 48);
	eh_entry_end(&b, fde);
	buf_u32(&b, 0);
	if (!buf_ok(&b)) {
		fprintf(stderr, "bench-anchor: a section does not fit in %d bytes\n", SECTION);
		exit(1);
	}
}

static void *pc_of(size_t i)
{
	return R + i * SLOT + 16;
}

static void lookup(size_t i)
{
	char bases[3 * sizeof(void *)];
	if (!_Unwind_Find_FDE(pc_of(i), bases)) {
		fprintf(stderr, "bench-anchor: no FDE for function %zu\n", i);
		exit(1);
	}
}

static void run(size_t n)
{
	for (size_t i = n; i-- > 0;) {
		write_section(S + i * SECTION, (uint64_t)(uintptr_t)(R + i * SLOT));
		__register_frame(S + i * SECTION);
	}
	double t0 = now_ns();
	lookup(n / 2);
	double first = now_ns() - t0;

	/* fewer rounds where each costs more, about the same time per size */
	size_t rounds = n <= 1000 ? 20000 : n <= 10000 ? 2000 : n <= 100000 ? 200 : 20;
	srand(42);
	t0 = now_ns();
	for (size_t r = 0; r < rounds; r++)
		lookup((size_t)rand() % n);
	double look = (now_ns() - t0) / (double)rounds;

	t0 = now_ns();
	for (size_t r = 0; r < rounds; r++) {
		size_t i = (size_t)rand() % n;
		__deregister_frame(S + i * SECTION);
		__register_frame(S + i * SECTION);
	}
	double pair = (now_ns() - t0) / (double)rounds;

	t0 = now_ns();
	for (size_t r = 0; r < rounds; r++) {
		size_t i = (size_t)rand() % n;
		__deregister_frame(S + i * SECTION);
		__register_frame(S + i * SECTION);
		lookup(i);
	}
	double pair_look = (now_ns() - t0) / (double)rounds;
	printf("%9zu  %12.1f  %12.2f  %12.2f  %14.2f\n", n, first / 1e6, look / 1e3, pair / 1e3,
	       pair_look / 1e3);
	fflush(stdout);
	for (size_t i = 0; i < n; i++)
		__deregister_frame(S + i * SECTION); /* the head of the list first */
}

int main(int argc, char **argv)
{
	size_t max = 1000000;
	if (argc == 3 && !strcmp(argv[1], "--max"))
		max = strtoul(argv[2], NULL, 0);
	else if (argc != 1) {
		fprintf(stderr, "usage: bench-anchor [--max N]\n");
		return 2;
	}
	R = mmap(NULL, max * SLOT, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	S = malloc(max * SECTION);
	if (R == MAP_FAILED || !S) {
		fprintf(stderr, "bench-anchor: out of memory\n");
		return 1;
	}
	printf("# one libgcc object per function (__register_frame), registered from the highest address down\n");
	printf("%9s  %12s  %12s  %12s  %14s\n", "functions", "first (ms)", "lookup (us)", "pair (us)",
	       "pair+lookup (us)");
	for (size_t n = 1000; n <= max; n *= 10)
		run(n);
	return 0;
}
