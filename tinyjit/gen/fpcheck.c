/* SPDX-License-Identifier: MIT */
/* fpcheck.c - apply the stencil frame-pointer rule (see fpcheck.h) with the
 * object's instruction-set table (isa.h). */
#include <stdio.h>
#include <string.h>

#include "fpcheck.h"
#include "isa.h"

#define MAXW 64

static const isa_ops *isa_of(const eo_func *f, char *err, size_t errlen)
{
	const isa_ops *isa = isa_for(f->machine);
	if (!isa)
		snprintf(err, errlen, "%s: no instruction-set table for ELF machine %u", f->name, f->machine);
	return isa;
}

int fp_writes_any(const eo_func *f, char *err, size_t errlen)
{
	const isa_ops *isa = isa_of(f, err, errlen);
	if (!isa)
		return -1;
	isa_write w[1];
	int n = isa_fp_writes(isa, f->code, f->size, w, 1, err, errlen);
	if (n < 0)
		return -1;
	if (n > 0)
		snprintf(err, errlen, "%s writes %s at 0x%llx: %s", f->name, isa->fp_name,
			 (unsigned long long)w[0].offset, w[0].text);
	return n > 0;
}

int fp_check_standard_frame(const eo_func *f, char *err, size_t errlen)
{
	const isa_ops *isa = isa_of(f, err, errlen);
	if (!isa)
		return -1;
	isa_write w[MAXW];
	int n = isa_fp_writes(isa, f->code, f->size, w, MAXW, err, errlen);
	if (n < 0)
		return -1;
	if (n > MAXW) {
		snprintf(err, errlen, "%s writes %s %d times", f->name, isa->fp_name, n);
		return -1;
	}
	long set = isa->fp_prologue_set(f->code, f->size);
	if (set < 0) {
		snprintf(err, errlen, "%s does not start with %s", f->name, isa->prologue_text);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		int prologue_set = w[i].kind == ISA_W_SET_FP && w[i].offset == (uint64_t)set;
		if (prologue_set || w[i].kind == ISA_W_RESTORE)
			continue;
		snprintf(err, errlen, "%s writes %s outside its frame prologue/epilogue at 0x%llx: %s",
			 f->name, isa->fp_name, (unsigned long long)w[i].offset, w[i].text);
		return -1;
	}
	return 0;
}

int fp_listed(const char *path, const char *name)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	char line[512];
	int found = 0;
	while (!found && fgets(line, sizeof line, f)) {
		line[strcspn(line, "\r\n")] = 0;
		found = strcmp(line, name) == 0;
	}
	fclose(f);
	return found;
}
