/* SPDX-License-Identifier: MIT */
/* symindex_check.c - the symbol index (unwind/symindex.c) against
 * dwfl_module_addrinfo itself, whose answer it must give for every
 * address: the same name, offset and symbol.
 *
 * Usage: symindex_check [--every] FILE...  Each file is reported to
 * libdwfl offline, and looked up at the addresses around each of its
 * symbols (its start, the bytes before and after it, its middle, its
 * last byte and the byte past it), with --every at every address of the
 * module as well.  A large table is sampled: every symbol's neighbourhood
 * costs a pass of libdwfl over the whole table.  Each file is checked
 * three times: with the table read in place, read through libdwfl, and
 * read in place but never sorted (every lookup a pass over it).  Prints
 * one line per address where the two differ, and per file how many
 * addresses the index answered itself; exits 1 on any difference or when
 * the index answered none of a file's addresses.
 */
#include "unwind/symindex.h"
#include "tests/unit/unit.h"

#include <elfutils/libdwfl.h>
#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#define MAX_ORACLE_LOOKUPS 4000 /* per file and path: libdwfl reads the whole table for each */

static const Dwfl_Callbacks offline = {
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

static void compare(js_symindexes *x, Dwfl_Module *mod, const char *file, uint64_t a)
{
	GElf_Off off_i = 0, off_d = 0;
	GElf_Sym sym_i, sym_d;
	memset(&sym_i, 0, sizeof sym_i);
	memset(&sym_d, 0, sizeof sym_d);
	const char *ni = js_symindex_addrinfo(x, mod, a, &off_i, &sym_i);
	const char *nd = dwfl_module_addrinfo(mod, a, &off_d, &sym_d, NULL, NULL, NULL);
	bool same = ni == nd && (!nd || (off_i == off_d && !memcmp(&sym_i, &sym_d, sizeof sym_i)));
	CHECK(same,
	      "%s at %#" PRIx64 ": index %s+%#" PRIx64 " (size %#" PRIx64 "), libdwfl %s+%#" PRIx64
	      " (size %#" PRIx64 ")",
	      file, a, ni ? ni : "(none)", (uint64_t)off_i, (uint64_t)sym_i.st_size, nd ? nd : "(none)",
	      (uint64_t)off_d, (uint64_t)sym_d.st_size);
}

static void check_file(const char *file, bool every, bool through_dwfl, bool never_sorted)
{
	Dwfl *dwfl = dwfl_begin(&offline);
	Dwfl_Module *mod = dwfl ? dwfl_report_offline(dwfl, file, file, -1) : NULL;
	if (!dwfl || !mod || dwfl_report_end(dwfl, NULL, NULL)) {
		CHECK(0, "%s: cannot be reported: %s", file, dwfl_errmsg(-1));
		if (dwfl)
			dwfl_end(dwfl);
		return;
	}
	Dwarf_Addr lo, hi;
	dwfl_module_info(mod, NULL, &lo, &hi, NULL, NULL, NULL, NULL);
	int n = dwfl_module_getsymtab(mod);
	js_symindexes x = { .through_dwfl = through_dwfl, .never_sorted = never_sorted };
	/* around each symbol, at most MAX_ORACLE_LOOKUPS addresses in all */
	static const int64_t
		around[] = { -1, 0, 1, 2 /* middle */, 3 /* last */, 4 /* past */, 5 /* past+1 */ };
	size_t per = sizeof around / sizeof *around, want = (size_t)(n > 1 ? n - 1 : 0) * per;
	size_t step = want > MAX_ORACLE_LOOKUPS ? want / MAX_ORACLE_LOOKUPS + 1 : 1, looked = 0;
	for (size_t k = 0; k < want; k += step) {
		int i = 1 + (int)(k / per);
		GElf_Sym s;
		GElf_Addr v;
		if (!dwfl_module_getsym_info(mod, i, &s, &v, NULL, NULL, NULL))
			continue;
		int64_t w = around[k % per];
		uint64_t a = w == 2   ? v + s.st_size / 2
			     : w == 3 ? v + s.st_size - 1
			     : w == 4 ? v + s.st_size
			     : w == 5 ? v + s.st_size + 1
				      : v + (uint64_t)w;
		compare(&x, mod, file, a);
		looked++;
	}
	if (every)
		for (uint64_t a = lo; a < hi; a++, looked++)
			compare(&x, mod, file, a);
	printf("%s (%s%s, %d symbols): %zu addresses, %lu answered by the index, %lu by libdwfl\n", file,
	       through_dwfl ? "read through libdwfl" : "read in place", never_sorted ? ", never sorted" : "",
	       n, looked, x.fast, x.slow);
	CHECK(x.fast > 0, "%s: the index answered none of %zu addresses", file, looked);
	js_symindex_free(&x);
	dwfl_end(dwfl);
}

int main(int argc, char **argv)
{
	bool every = argc > 1 && !strcmp(argv[1], "--every");
	for (int i = 1 + every; i < argc; i++) {
		check_file(argv[i], every, false, false);
		check_file(argv[i], every, true, false);
		check_file(argv[i], every, false, true);
	}
	return unit_done("symindex_check");
}
