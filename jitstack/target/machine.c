/* SPDX-License-Identifier: MIT */
/* machine.c - per-machine relocation rules (see machine.h).  Relocation numbers
 * are from <elf.h>; their meaning from the x86-64 psABI section 4.4 and
 * the AArch64 ELF ABI section 5.7.
 */
#include "target/machine.h"

#include <elf.h>
#include <stdio.h>

static reloc_how x86_64_reloc(uint32_t type)
{
	switch (type) {
	case R_X86_64_NONE: return (reloc_how){ RK_NONE, 0, false };
	case R_X86_64_64: return (reloc_how){ RK_ABS, 8, false };
	case R_X86_64_32: return (reloc_how){ RK_ABS, 4, false };
	case R_X86_64_32S: return (reloc_how){ RK_ABS, 4, true };
	case R_X86_64_PC32: return (reloc_how){ RK_PCREL, 4, true };
	case R_X86_64_PLT32: return (reloc_how){ RK_PCREL, 4, true }; /* no PLT here: S */
	case R_X86_64_PC64: return (reloc_how){ RK_PCREL, 8, false };
	default: return (reloc_how){ RK_UNSUPPORTED, 0, false };
	}
}

static reloc_how aarch64_reloc(uint32_t type)
{
	switch (type) {
	case R_AARCH64_NONE: return (reloc_how){ RK_NONE, 0, false };
	case R_AARCH64_ABS64: return (reloc_how){ RK_ABS, 8, false };
	case R_AARCH64_ABS32: return (reloc_how){ RK_ABS, 4, false };
	case R_AARCH64_PREL64: return (reloc_how){ RK_PCREL, 8, false };
	case R_AARCH64_PREL32: return (reloc_how){ RK_PCREL, 4, true };
	default: return (reloc_how){ RK_UNSUPPORTED, 0, false };
	}
}

static const js_arch arches[] = {
	{ "x86-64", EM_X86_64, 7 /* rsp */, x86_64_reloc },
	{ "AArch64", EM_AARCH64, 31 /* sp */, aarch64_reloc },
};

const js_arch *js_arch_for(uint16_t elf_machine)
{
	for (unsigned i = 0; i < sizeof arches / sizeof arches[0]; i++)
		if (arches[i].elf_machine == elf_machine)
			return &arches[i];
	return NULL;
}

uint16_t js_host_machine(void)
{
#if defined(__x86_64__)
	return EM_X86_64;
#elif defined(__aarch64__)
	return EM_AARCH64;
#else
	return EM_NONE;
#endif
}

const char *js_machine_name(uint16_t m, char *buf, unsigned len)
{
	switch (m) {
	case EM_X86_64: return "x86-64";
	case EM_AARCH64: return "AArch64";
	case EM_386: return "i386";
	case EM_ARM: return "ARM";
	case EM_RISCV: return "RISC-V";
	case EM_PPC64: return "PowerPC64";
	case EM_S390: return "s390";
	}
	snprintf(buf, len, "machine %u", (unsigned)m);
	return buf;
}
