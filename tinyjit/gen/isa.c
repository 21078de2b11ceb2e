/* SPDX-License-Identifier: MIT */
/* isa.c - pick the instruction-set table for an object. */
#include <gelf.h>

#include "isa.h"

const isa_ops *isa_for(unsigned machine)
{
	switch (machine) {
	case EM_X86_64: return &isa_x86_64;
	case EM_AARCH64: return &isa_aarch64;
	default: return NULL;
	}
}
