# SPDX-License-Identifier: MIT
# The perf map reader (perfmap.c) on what a target can write
# (tests/perfmap_check.c): malformed, overlong, non-UTF-8 and tombstoned
# lines are skipped or kept safely, a line still being written waits, the
# latest line wins where lines overlap (also against a model on random maps
# fed in random pieces), and a file that is appended to, replaced or
# truncated is followed.
. "$(dirname "$0")/lib.sh"
need_file "$JTB/perfmap_check" "make jitstack-check"
limit 120 "$JTB/perfmap_check" "$T" > out 2>&1 || { cat out; fail "perfmap_check"; }
pass "$(tail -1 out)"
