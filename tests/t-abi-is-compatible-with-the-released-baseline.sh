# SPDX-License-Identifier: MIT
# The library's interface is compatible with the released one recorded in
# tests/abi/libjitunwind.abi (abidw): abidiff reports no removed or changed
# function, variable or type reachable from them (a field inserted into
# ju_blob, a changed prototype); functions added since are allowed and
# listed, and so are fields added at the end of ju_options and ju_blob,
# which the size rule makes compatible (tests/abi/growth.suppr).  It judges the shared library without the 0.1 entry points
# (Makefile, LIB_API_SO: why); t-exports-are-the-api-at-their-versions
# checks the shipped library's symbols.
. "$(dirname "$0")/lib.sh"
need_cmd abidiff
SO=$BUILD/abi/libjitunwind-api.so
need_file "$SO" "make tests"
BASE=$ROOT/tests/abi/libjitunwind.abi
SUPPR=$ROOT/tests/abi/growth.suppr
limit 120 abidiff --no-added-syms --suppressions "$SUPPR" --headers-dir2 "$ROOT/include" "$BASE" "$SO" > diff.out 2>&1
rc=$?
[ $rc = 0 ] || { cat diff.out; fail "abidiff exit $rc: the ABI changed against the released baseline (see docs/API.md, Compatibility)"; }
limit 120 abidiff --headers-dir2 "$ROOT/include" "$BASE" "$SO" > added.out 2>&1
added=$(grep -c "^  \[A\]" added.out)
[ "$added" = 0 ] || { echo "added since the baseline:"; grep "^  \[A\]" added.out; }
# the check must have seen the functions it judges: every ju_ function
# declared in the header is in the baseline with its ELF symbol
n=$(grep -c "function-decl name='ju_[a-z_]*'.*elf-symbol-id=" "$BASE")
[ "$n" -ge 14 ] || fail "the baseline ties only $n ju_ functions to their symbols"
pass "no incompatible change against the baseline ($n functions judged, $added added)"
