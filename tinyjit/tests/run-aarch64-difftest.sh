#!/bin/sh
# SPDX-License-Identifier: MIT
# run-aarch64-difftest.sh - on AArch64, under qemu-user, the interpreter and
# the JIT (both stencil sets) agree on generated programs with fixed seeds
# (tests/difftest.c, tests/progen.c; fewer seeds than on the host, for time),
# with and without the JIT inlining calls.
. "$(dirname "$0")/lib.sh"
need_aarch64
seeds=${TJ_A64_DIFF_SEEDS:-1000}
[ -x "$TJ_A64_B/tests/difftest" ] || skip_all "$TJ_A64_B/tests/difftest is not built (make tinyjit-aarch64)"
for how in "" --inline; do
	out=$TJ_TEST_B/a64-difftest${how#-}.out
	if a64 "$TJ_A64_B/tests/difftest" --seeds "$seeds" $how >"$out" 2>&1; then pass; else
		fail "difftest $how: $(tail -n 20 "$out")"; fi
	tail -n 2 "$out"
	expect_eq "every_seed_ran${how:+ (inline)}" "difftest: $seeds passed, 0 failed" "$(tail -n 1 "$out")"
done
inlined=$(sed -n 's/^difftest: \([0-9]*\) calls inlined$/\1/p' "$TJ_TEST_B/a64-difftest-inline.out")
check "calls_were_inlined (${inlined:-none})" test "${inlined:-0}" -gt 0
finish
