#!/bin/sh
# run-aarch64-difftest.sh - on AArch64, under qemu-user, the interpreter and
# the JIT (both stencil sets) agree on generated programs with fixed seeds
# (tests/difftest.c, tests/progen.c; fewer seeds than on the host, for time).
. "$(dirname "$0")/lib.sh"
need_aarch64
seeds=${TJ_A64_DIFF_SEEDS:-1000}
[ -x "$TJ_A64_B/tests/difftest" ] || skip_all "$TJ_A64_B/tests/difftest is not built (make tinyjit-aarch64)"
if a64 "$TJ_A64_B/tests/difftest" --seeds "$seeds" >"$TJ_TEST_B/a64-difftest.out" 2>&1; then pass; else
	fail "difftest: $(tail -n 20 "$TJ_TEST_B/a64-difftest.out")"; fi
tail -n 2 "$TJ_TEST_B/a64-difftest.out"
expect_eq every_seed_ran "difftest: $seeds passed, 0 failed" "$(tail -n 1 "$TJ_TEST_B/a64-difftest.out")"
finish
