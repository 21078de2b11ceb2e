/* fpcheck.c - apply the stencil frame-pointer rule (see fpcheck.h). */
#include <stdio.h>
#include <string.h>

#include "fpcheck.h"
#include "x86.h"

#define MAXW 64

int fp_writes_any(const eo_func *f, char *err, size_t errlen)
{
	x86_write w[1];
	int n = x86_fp_writes(f->code, f->size, w, 1, err, errlen);
	if (n < 0)
		return -1;
	if (n > 0)
		snprintf(err, errlen, "%s writes rbp at 0x%llx: %s", f->name,
			 (unsigned long long)w[0].offset, w[0].text);
	return n > 0;
}

int fp_check_standard_frame(const eo_func *f, char *err, size_t errlen)
{
	x86_write w[MAXW];
	int n = x86_fp_writes(f->code, f->size, w, MAXW, err, errlen);
	if (n < 0)
		return -1;
	if (n > MAXW) {
		snprintf(err, errlen, "%s writes rbp %d times", f->name, n);
		return -1;
	}
	if (!x86_has_fp_prologue(f->code, f->size)) {
		snprintf(err, errlen, "%s does not start with push %%rbp; mov %%rsp, %%rbp", f->name);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		int prologue_set = w[i].kind == X86_W_SET_FP && w[i].offset == 1;
		if (prologue_set || w[i].kind == X86_W_RESTORE)
			continue;
		snprintf(err, errlen, "%s writes rbp outside its frame prologue/epilogue at 0x%llx: %s",
			 f->name, (unsigned long long)w[i].offset, w[i].text);
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
