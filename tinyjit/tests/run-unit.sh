#!/bin/sh
# SPDX-License-Identifier: MIT
# run-unit.sh - unit tests in C (patch functions), one pass per test case.
. "$(dirname "$0")/lib.sh"
"$TJ_TEST_B/patch_test" >"$TJ_TEST_B/unit.out" 2>&1
grep FAIL "$TJ_TEST_B/unit.out" | while read -r line; do echo "$line" >&2; done
n=$(sed -n 's/^patch_test: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$TJ_TEST_B/unit.out")
[ -n "$n" ] || { fail "patch_test did not finish: $(cat "$TJ_TEST_B/unit.out")"; finish; exit 1; }
tj_pass=$((tj_pass + ${n% *}))
tj_fail=$((tj_fail + ${n#* }))
finish
