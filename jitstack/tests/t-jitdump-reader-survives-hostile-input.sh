# SPDX-License-Identifier: MIT
# The jitdump reader (jitstack/jit/jitdump.c) on its own: hostile records
# (impossible sizes, code past a record's end, ranges that wrap, rows past
# a record's end, names past the bound, file names that are not text or
# not UTF-8 as RFC 3629 has it -- a surrogate, overlong forms --, a record
# no reader can step over), dumps of another byte order, version or
# machine, records after a core's time, a record still being written, a
# file appended to, replaced and truncated under it, and random dumps fed in
# random pieces against a model (tests/jitdump_check.c).
. "$(dirname "$0")/lib.sh"
need_file "$JTB/jitdump_check" "make jitstack-check"
"$JTB/jitdump_check" "$PWD" > check.out 2>&1 || { cat check.out; fail "jitdump_check failed"; }
pass "$(tail -1 check.out)"
