/* SPDX-License-Identifier: MIT */
/* test-libgcc-fde-reuse.c - what libgcc does with an FDE rewritten in place
 * inside a registered object: the consumer fact that reusing a freed FDE
 * slot for new code rests on (docs/ARCHITECTURE.md, "Reusing FDE slots").
 *
 * libgcc sorts an object's FDEs by pc_begin at the first lookup that
 * reaches it and from then on binary-searches that order, reading each
 * FDE's pc_begin and pc_range from the section itself.  So:
 *   - an FDE whose pc_range is stored as 0 matches no pc (the tombstone);
 *   - an FDE given a new pc_begin that keeps its place among its
 *     neighbours, new instructions and then a pc_range, is found for the
 *     new code, and its instructions are the new ones;
 *   - lookups of the neighbours never miss, even while another thread
 *     rewrites the slot over and over.
 * The object is registered with __register_frame, as one per-arena image
 * would be.
 */
#include "formats/ehframe.h"
#include "unit.h"

#include <dwarf.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unwind.h>

void __register_frame(void *begin);
void __deregister_frame(void *begin);
const void *_Unwind_Find_FDE(void *pc, void *bases);

enum { SLOT = 64, N_FDE = 3, INSNS = 16 };

static uint8_t code[N_FDE * SLOT] __attribute__((aligned(64)));
static uint8_t section[512] __attribute__((aligned(8)));
static size_t fde_off[N_FDE];

static uint64_t at(size_t slot, size_t off)
{
	return (uint64_t)(uintptr_t)(code + slot * SLOT + off);
}

/* CIE, then N_FDE FDEs each with INSNS bytes of instruction room (nops
 * after what it says), then the terminator. */
static void build(void)
{
	byte_buf b;
	buf_init(&b, section, sizeof section);
	size_t cie = eh_cie_begin(
		&b, &(eh_cie){ .code_align = 1, .data_align = -8, .ra_reg = 16, .fde_enc = DW_EH_PE_absptr });
	buf_u8(&b, DW_CFA_def_cfa); /* CFA = rsp + 8 */
	buf_uleb(&b, 7);
	buf_uleb(&b, 8);
	buf_u8(&b, DW_CFA_offset | 16); /* return address at CFA - 8 */
	buf_uleb(&b, 1);
	eh_entry_end(&b, cie);
	for (size_t i = 0; i < N_FDE; i++) {
		fde_off[i] = eh_fde_begin(&b, cie, DW_EH_PE_absptr, 0, at(i, 0), 48);
		buf_zeros(&b, INSNS); /* DW_CFA_nop */
		eh_entry_end(&b, fde_off[i]);
	}
	buf_u32(&b, 0);
	CHECK(buf_ok(&b), "the section does not fit");
}

static const uint8_t *fde_for(uint64_t pc)
{
	char bases[3 * sizeof(void *)];
	return _Unwind_Find_FDE((void *)(uintptr_t)pc, bases);
}

/* Rewrite slot 1 for [pc, pc + range): instructions, pc_begin, then the
 * range last with a release store, so a reader that sees the range sees
 * the rest. */
static void rewrite(uint64_t pc, uint64_t range, uint8_t cfa_offset)
{
	uint8_t *f = section + fde_off[1];
	uint64_t *begin = (uint64_t *)(f + FDE_OFF_PC_BEGIN);
	uint64_t *len = (uint64_t *)(f + FDE_ABS8_OFF_RANGE);
	__atomic_store_n(len, 0, __ATOMIC_RELEASE); /* the tombstone first */
	uint8_t *insns = f + eh_fde_header_size(DW_EH_PE_absptr);
	const uint8_t prog[] = { DW_CFA_advance_loc | 1, DW_CFA_def_cfa_offset, cfa_offset };
	memset(insns, DW_CFA_nop, INSNS);
	memcpy(insns, prog, sizeof prog);
	__atomic_store_n(begin, pc, __ATOMIC_RELAXED);
	__atomic_store_n(len, range, __ATOMIC_RELEASE);
}

static atomic_int stop;
static atomic_ulong misses, reads;

static void *reader(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		if (fde_for(at(0, 8)) != section + fde_off[0] || fde_for(at(2, 8)) != section + fde_off[2])
			atomic_fetch_add(&misses, 1);
		atomic_fetch_add(&reads, 1);
	}
	return NULL;
}

int main(void)
{
	build();
	__register_frame(section);
	CHECK(fde_for(at(1, 8)) == section + fde_off[1], "the registered FDE of slot 1 is not found");

	rewrite(at(1, 0), 0, 16); /* a tombstone alone */
	CHECK(fde_for(at(1, 8)) == NULL, "a pc_range of 0 still matches");
	CHECK(fde_for(at(0, 8)) == section + fde_off[0], "the neighbour below is lost");
	CHECK(fde_for(at(2, 8)) == section + fde_off[2], "the neighbour above is lost");

	/* new code 16 bytes into the freed slot, 24 bytes long */
	rewrite(at(1, 16), 24, 32);
	const uint8_t *f = fde_for(at(1, 20));
	CHECK(f == section + fde_off[1], "the rewritten FDE is not found for its new code");
	CHECK(fde_for(at(1, 8)) == NULL, "the freed part before the new code still matches");
	CHECK(fde_for(at(1, 44)) == NULL, "the freed part after the new code still matches");
	uint64_t begin;
	memcpy(&begin, section + fde_off[1] + FDE_OFF_PC_BEGIN, sizeof begin);
	CHECK(begin == at(1, 16), "pc_begin read back is not the new one");

	/* a thread looks the neighbours up while this one rewrites the slot */
	pthread_t t;
	CHECK(pthread_create(&t, NULL, reader, NULL) == 0, "pthread_create");
	unsigned long n = 0;
	for (; atomic_load(&reads) < 100000 && n < 100000000; n++)
		rewrite(at(1, (n % 4) * 8), 16, (uint8_t)(16 + n % 4 * 8));
	atomic_store(&stop, 1);
	pthread_join(t, NULL);
	CHECK(atomic_load(&misses) == 0, "%lu of %lu neighbour lookups missed during rewrites",
	      atomic_load(&misses), atomic_load(&reads));
	CHECK(atomic_load(&reads) >= 100000, "the reader ran only %lu lookups", atomic_load(&reads));
	f = fde_for(at(1, ((n - 1) % 4) * 8 + 4));
	CHECK(f == section + fde_off[1], "the last rewrite is not found");
	printf("neighbours found in all %lu lookups during %lu rewrites\n", atomic_load(&reads), n);
	__deregister_frame(section);
	return unit_done("libgcc sees FDEs rewritten in place");
}
