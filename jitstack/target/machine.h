/* SPDX-License-Identifier: MIT */
/* machine.h - what jitstack needs to know per machine: how to apply the
 * relocations JIT images carry in their CFI and DWARF, and how a stopped
 * thread's registers map to DWARF register numbers.
 *
 * Behind a small ops table compiled on every host (as elfutils' backends),
 * so the AArch64 relocation path is built and fuzzed even where only x86-64
 * processes can be unwound.
 */
#ifndef JS_MACHINE_H
#define JS_MACHINE_H

#include <stdbool.h>
#include <stdint.h>

/* How one relocation type computes its value (System V ABI notation). */
typedef enum {
	RK_NONE,  /* no effect */
	RK_ABS,   /* S + A */
	RK_PCREL, /* S + A - P */
	RK_UNSUPPORTED,
} reloc_kind;

typedef struct reloc_how {
	reloc_kind kind;
	uint8_t size;   /* bytes written: 4 or 8 */
	bool is_signed; /* a 4-byte result must fit as signed (else unsigned) */
} reloc_how;

typedef struct js_arch {
	const char *name;
	uint16_t elf_machine;
	uint8_t sp_reg; /* DWARF number of the stack pointer */
	/* The relocation types that occur in .eh_frame, .debug_frame and
	 * .debug_* sections of relocatable objects. */
	reloc_how (*reloc)(uint32_t type);
} js_arch;

/* The ops for an ELF e_machine, or NULL when it is not supported. */
const js_arch *js_arch_for(uint16_t elf_machine);
/* The e_machine of the host jitstack runs on (live unwinding needs the
 * target to match it). */
uint16_t js_host_machine(void);
/* A readable name for any e_machine ("AArch64", "i386", "machine 243"). */
const char *js_machine_name(uint16_t elf_machine, char *buf, unsigned len);

#endif
