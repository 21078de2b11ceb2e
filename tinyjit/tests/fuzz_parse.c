/* SPDX-License-Identifier: MIT */
/* fuzz_parse.c - libFuzzer target for the .tj loader (parser, linker,
 * verifier), built with -fsanitize=fuzzer,address,undefined.
 *
 * Any input must give a program or a diagnostic that names the file and a
 * position; anything else (a crash, a leak, a malformed message) is a bug.
 */
#include <stdint.h>
#include <string.h>

#include "../host/host.h"
#include "../vm/vm.h"

/* The loader links against the real host table; what its functions would
 * call at run time is never reached here. */
void tj_cxx_throw(long long mode)
{
	(void)mode;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	tj_diag d;
	tj_program *p = tj_load("fuzz.tj", (const char *)data, size, tj_hosts, tj_n_hosts, &d);
	if (!p) {
		if (strncmp(d.msg, "fuzz.tj:", 8) != 0 || !strstr(d.msg, "error: "))
			__builtin_trap();
		return 0;
	}
	for (uint32_t i = 0; i < p->n_funcs; i++)
		if (p->funcs[i].max_stack > TJ_MAX_OPERAND_STACK || p->funcs[i].count == 0)
			__builtin_trap();
	tj_program_free(p);
	return 0;
}
