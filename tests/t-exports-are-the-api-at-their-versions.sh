# SPDX-License-Identifier: MIT
# The shared library exports the API at the symbol versions of
# src/jitunwind.map and the GDB JIT interface's two symbols unversioned;
# the archive the API and those two; nothing else, nothing missing
# (tests/abi/exports).  0.1's four struct-taking functions stay, for
# binaries linked before sz, as NAME@JITUNWIND_0.1.
. "$(dirname "$0")/lib.sh"
need_cmd readelf
need_file "$BUILD/libjitunwind.so" "make lib"
sh "$ROOT/tests/abi/exported-symbols.sh" "$BUILD/libjitunwind.so" "$BUILD/libjitunwind.a" > got ||
	fail "reading the libraries' symbols"
grep -v '^#' "$ROOT/tests/abi/exports" > want
diff want got > diff.out || { cat diff.out; fail "the exported symbols differ from tests/abi/exports (< listed, > exported)"; }
# every declared function is exported (a list edited with the map would
# not notice one left out of both)
for f in $(sed -n 's/^JU_API [^(]* \**\(ju_[a-z_]*\)(.*/\1/p' "$ROOT/include/jitunwind.h"); do
	grep -q "^so $f@@JITUNWIND_" got || fail "$f is declared in jitunwind.h but not exported at a default version"
	grep -q "^a $f\$" got || fail "$f is declared in jitunwind.h but not in the archive"
done
pass "$(grep -c '^so' got) dynamic symbols and $(grep -c '^a' got) archive symbols, as listed"
