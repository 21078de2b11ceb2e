/* SPDX-License-Identifier: MIT */
/* tj_validate.c - the build-time frame-pointer validator for stencils.
 *
 *   tj_validate list OBJ          print the functions of OBJ that write the
 *                                 frame pointer (rbp, x29)
 *                                 (they must be rebuilt with a frame)
 *   tj_validate frames OBJ LIST   check that each function named in the file
 *                                 LIST has the standard frame and no other
 *                                 rbp write; fail the build otherwise
 *   tj_validate none OBJ LIST     check that no function of OBJ except those
 *                                 named in LIST writes rbp
 *
 * Exit status: 0 valid, 1 a stencil breaks the rule, 2 usage or I/O error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elfobj.h"
#include "fpcheck.h"

int main(int argc, char **argv)
{
	if (argc < 3 || (strcmp(argv[1], "list") != 0 && argc != 4)) {
		fprintf(stderr, "usage: tj_validate list OBJ | frames OBJ LIST | none OBJ LIST\n");
		return 2;
	}
	const char *mode = argv[1];
	char err[512];
	eo_object o;
	if (eo_open(argv[2], &o, err, sizeof err)) {
		fprintf(stderr, "tj_validate: %s\n", err);
		return 2;
	}
	int bad = 0, writers = 0;
	for (size_t i = 0; i < o.n_funcs; i++) {
		const eo_func *f = &o.funcs[i];
		if (strcmp(mode, "frames") == 0) {
			if (!fp_listed(argv[3], f->name))
				continue;
			if (fp_check_standard_frame(f, err, sizeof err)) {
				fprintf(stderr, "tj_validate: %s: %s\n", argv[2], err);
				bad = 1;
			}
			continue;
		}
		int w = fp_writes_any(f, err, sizeof err);
		if (w < 0) {
			fprintf(stderr, "tj_validate: %s: %s: %s\n", argv[2], f->name, err);
			bad = 1;
			continue;
		}
		if (!w)
			continue;
		writers++;
		if (strcmp(mode, "list") == 0)
			printf("%s\n", f->name);
		else if (!fp_listed(argv[3], f->name)) {
			fprintf(stderr, "tj_validate: %s: %s\n", argv[2], err);
			bad = 1;
		}
	}
	if (strcmp(mode, "list") == 0)
		fprintf(stderr,
			"tj_validate: %s: %d of %zu stencils write the frame pointer without a frame\n",
			argv[2], writers, o.n_funcs);
	eo_close(&o);
	return bad;
}
