/* SPDX-License-Identifier: MIT */
/* stencil_sets.c - the generated stencil tables, linked into the runtime.
 * The headers come from gen/tj_gen at build time (see ../tinyjit.mk). */
#include <stddef.h>

#include "../vm/vm.h"
#include "stencils_fp.h"
#include "stencils_nofp.h"
